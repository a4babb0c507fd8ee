package kubernetes_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/compute/kubernetes"
	"github.com/openclaw/occ/internal/compute/kubernetes/kubetest"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/occ"
)

// observer sees the cluster as an admin and the fake Pods' processes.
type observer struct {
	cs *k8s.Clientset
	k  *kubetest.Kubelet
}

func (o observer) NamespaceExists(t *testing.T, id string) bool {
	t.Helper()
	_, err := o.cs.CoreV1().Namespaces().Get(context.Background(), kubernetes.NamespaceName(id), metav1.GetOptions{})
	return err == nil
}

// Workloads are the UIDs of the Agent's Pods, terminating ones included.
func (o observer) Workloads(t *testing.T, ag compute.AgentRef) []string {
	t.Helper()
	l, err := o.cs.CoreV1().Pods(kubernetes.NamespaceName(ag.NamespaceID)).List(context.Background(),
		metav1.ListOptions{LabelSelector: kubernetes.LabelAgent + "=" + ag.AgentID})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range l.Items {
		out = append(out, string(p.UID))
	}
	return out
}

func (o observer) WorkloadEnv(t *testing.T, ag compute.AgentRef) (map[string]string, bool) {
	t.Helper()
	ps := o.k.Processes(ag.AgentID)
	if len(ps) != 1 {
		return nil, false
	}
	return ps[0].Env, true
}

func (o observer) workspace(ag compute.AgentRef) string {
	return filepath.Join(o.k.ClaimDir(kubernetes.NamespaceName(ag.NamespaceID), kubernetes.StateClaimName(ag.AgentID)), "workspace")
}

func (o observer) WorkspaceFile(t *testing.T, ag compute.AgentRef, name string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(o.workspace(ag), name))
	return string(b), err == nil
}

func (o observer) WriteWorkspaceFile(t *testing.T, ag compute.AgentRef, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(o.workspace(ag), name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// AgentExists: any object carrying the Agent's ID that is not being
// deleted.
func (o observer) AgentExists(t *testing.T, ag compute.AgentRef) bool {
	t.Helper()
	for where, b := range objectsOf(t, o.cs, kubernetes.NamespaceName(ag.NamespaceID)) {
		if strings.Contains(string(b), ag.AgentID) && !terminating(b) {
			t.Logf("Agent object left: %s", where)
			return true
		}
	}
	return false
}

// ScanState visits every object of every tenant namespace, Secrets
// without their data: a Secret is where Kubernetes keeps secret values (a
// revision's secret environment is in one by design); everything else
// (ConfigMaps, Pod specs, annotations, …) must not hold one.
func (o observer) ScanState(t *testing.T, visit func(where string, content []byte)) {
	t.Helper()
	nss, err := o.cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{LabelSelector: kubernetes.LabelManagedBy + "=" + kubernetes.ManagedBy})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range nss.Items {
		b, _ := json.Marshal(ns)
		visit("namespace/"+ns.Name, b)
		for where, b := range objectsOf(t, o.cs, ns.Name) {
			if strings.HasPrefix(where, "secret/") {
				var s corev1.Secret
				if err := json.Unmarshal(b, &s); err != nil {
					t.Fatal(err)
				}
				s.Data = nil
				b, _ = json.Marshal(s)
			}
			visit(ns.Name+"/"+where, b)
		}
	}
}

// TestKwokConformance runs the driver contract's suite on the node lane:
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok's fake
// nodes, with the stand-in kubelet running the fake gateway for each Pod.
func TestKwokConformance(t *testing.T) {
	c := kubetest.Start(t, kubetest.WithNodes(2))
	k := c.StartKubelet(t, gatewaytest.BuildBinary(t))
	cs := clientset(t, c.Config())
	opts := func(o *kubernetes.Options) {
		o.QuotaPods, o.TerminationTimeout, o.PodStartWait = 20, 60*time.Second, kubernetes.DefaultPodStartWait
	}
	computetest.Run(t, func(t *testing.T) computetest.Harness {
		return computetest.Harness{
			Driver:   open(t, c.Config(), opts),
			Observer: observer{cs: cs, k: k},
			Reopen:   func(t *testing.T) compute.Driver { return open(t, c.Config(), opts) },
			Options: computetest.Options{
				ReadyTimeout:     2 * time.Minute,
				SlowStart:        computetest.FakeGatewaySlowStart,
				RejectCredential: computetest.FakeGatewayRejectCredential,
			},
		}
	})
}

// TestKwokDriver: what the node lane shows of the driver beyond the
// contract's suite.
func TestKwokDriver(t *testing.T) {
	c := kubetest.Start(t, kubetest.WithNodes(1))
	c.StartKubelet(t, gatewaytest.BuildBinary(t))
	t.Run("QuotaForbidsPod", func(t *testing.T) { testQuotaForbidsPod(t, c) })
	t.Run("DiagnoseSlack", func(t *testing.T) { testDiagnoseSlack(t, c) })
	t.Run("EndpointTunnel", func(t *testing.T) { testEndpointTunnel(t, c) })
	t.Run("ReadoptionSkipsTheModelProbe", func(t *testing.T) { testReadoptionSkipsTheModelProbe(t, c) })
}

// testEndpointTunnel: the port-forward behind a gateway endpoint is closed
// once unused, and the next connection to the same endpoint dials it
// again; a stopped Agent's endpoint is gone.
func testEndpointTunnel(t *testing.T, c *kubetest.Cluster) {
	d := open(t, c.Config(), func(o *kubernetes.Options) { o.PodStartWait = kubernetes.DefaultPodStartWait })
	ctx := context.Background()
	rev := newRevision()
	ensure(t, d, rev.NamespaceID)
	if r := awaitReadiness(t, d, specOf(rev, 1), isReady); !r.Ready {
		t.Fatalf("readiness: %+v", r)
	}
	ep, ok := d.GatewayEndpoint(ctx, rev.AgentRef)
	if !ok {
		t.Fatal("no endpoint for a ready Agent")
	}
	healthz := "http://" + strings.TrimPrefix(ep.URL, "ws://") + "/healthz"
	deadline := time.Now().Add(time.Minute)
	for kubernetes.OpenTunnels(d, rev.AgentRef) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the endpoint's port-forward is still open a minute after its last use")
		}
		time.Sleep(100 * time.Millisecond)
	}
	res, err := http.Get(healthz)
	if err != nil {
		t.Fatalf("the endpoint after its port-forward was closed: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || kubernetes.OpenTunnels(d, rev.AgentRef) != 1 {
		t.Fatalf("the endpoint after its port-forward was closed: %d, %d port-forwards open", res.StatusCode, kubernetes.OpenTunnels(d, rev.AgentRef))
	}
	// That port-forward was dialled again: it resumed the TLS session of
	// an earlier one rather than making a full handshake.
	if n := kubernetes.ResumedDials(d); n == 0 {
		t.Error("no port-forward dial resumed a TLS session with the API server")
	}
	if again, ok := d.GatewayEndpoint(ctx, rev.AgentRef); !ok || again.URL != ep.URL {
		t.Errorf("the endpoint changed: %s, then %s (%v)", ep.URL, again.URL, ok)
	}
	if err := d.StopAgent(ctx, rev.AgentRef); err != nil {
		t.Fatal(err)
	}
	if res, err := http.Get(healthz); err == nil {
		res.Body.Close()
		t.Fatalf("a stopped Agent's endpoint answered %d", res.StatusCode)
	}
}

// awaitReadiness prepares spec until want holds (2 min at most) and
// returns the last answer.
func awaitReadiness(t *testing.T, d compute.Driver, spec compute.RevisionSpec, want func(compute.Readiness) bool) compute.Readiness {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		r, err := d.PrepareRevision(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		if want(r) || time.Now().After(deadline) {
			return r
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func isReady(r compute.Readiness) bool { return r.Ready }

// testQuotaForbidsPod: a Namespace whose quota forbids the Pod gives the
// pending reason WORKLOAD_UNSCHEDULABLE (the ReplicaSet cannot create it),
// and the Agent becomes ready once the quota lets it.
func testQuotaForbidsPod(t *testing.T, c *kubetest.Cluster) {
	d := open(t, c.Config(), func(o *kubernetes.Options) { o.QuotaPods, o.PodStartWait = 1, kubernetes.DefaultPodStartWait })
	first := newRevision()
	ensure(t, d, first.NamespaceID)
	if r := awaitReadiness(t, d, specOf(first, 1), isReady); !r.Ready {
		t.Fatalf("first Agent: %+v", r)
	}
	second := first
	second.AgentID, second.RevisionID = occ.NewID(occ.PrefixAgent), occ.NewID(occ.PrefixRevision)
	unschedulable := func(r compute.Readiness) bool { return r.PendingReason == occ.PendingWorkloadUnschedulable }
	if r := awaitReadiness(t, d, specOf(second, 1), unschedulable); !unschedulable(r) {
		t.Fatalf("second Agent over the quota: %+v, want pending %s", r, occ.PendingWorkloadUnschedulable)
	}
	if err := d.StopAgent(context.Background(), first.AgentRef); err != nil {
		t.Fatal(err)
	}
	if r := awaitReadiness(t, d, specOf(second, 1), isReady); !r.Ready {
		t.Fatalf("second Agent once the quota allows it: %+v", r)
	}
}

// testDiagnoseSlack: with channels.slack the diagnosis carries the three
// Slack checks from the gateway, and unknown ones once the Pod is gone.
func testDiagnoseSlack(t *testing.T, c *kubetest.Cluster) {
	d := open(t, c.Config(), func(o *kubernetes.Options) { o.PodStartWait = kubernetes.DefaultPodStartWait })
	ctx := context.Background()
	rev := newRevision()
	ensure(t, d, rev.NamespaceID)
	spec := specOf(rev, 1)
	spec.Document = map[string]any{"channels": map[string]any{"slack": map[string]any{
		"enabled": true, "mode": "socket", "botToken": "${SLACK_BOT_TOKEN}", "appToken": "${SLACK_APP_TOKEN}"}}}
	spec.Env = map[string]string{"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1", "FAKEGATEWAY_SLACK": "disconnected"}
	pendingSlack := func(r compute.Readiness) bool { return r.PendingReason == occ.PendingGatewayUnavailable }
	if r := awaitReadiness(t, d, spec, pendingSlack); !pendingSlack(r) {
		t.Fatalf("gateway with Slack down: %+v, want pending %s", r, occ.PendingGatewayUnavailable)
	}
	verdicts := func() map[string]string {
		dg, err := d.Diagnose(ctx, rev)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, c := range dg.Checks {
			if c.Message == "" {
				t.Errorf("check %+v without a message", c)
			}
			m[c.Component+"/"+c.Check] = c.Status + " " + c.Code
		}
		return m
	}
	// Its /readyz failing, the Pod is not Ready: it runs, and the
	// gateway's own checks say why.
	want := map[string]string{"gateway/pod": "failed POD_NOT_READY", "gateway/healthz": "succeeded OK", "gateway/startupz": "succeeded OK",
		"gateway/readyz": "failed NOT_READY", "slack/configuration": "succeeded OK", "slack/authentication": "succeeded OK",
		"slack/connectivity": "failed SLACK_DISCONNECTED"}
	if got := verdicts(); !maps.Equal(got, want) {
		t.Errorf("diagnosis\n got %v\nwant %v", got, want)
	}
	if err := d.StopAgent(ctx, rev.AgentRef); err != nil {
		t.Fatal(err)
	}
	after := verdicts()
	if len(after) != len(want) {
		t.Errorf("after a stop: %v, want the same %d checks, unknown", after, len(want))
	}
	for k, v := range after {
		if v != "unknown UNAVAILABLE" || (!strings.HasPrefix(k, "gateway/") && !strings.HasPrefix(k, "slack/")) {
			t.Errorf("after a stop: %s %s, want unknown", k, v)
		}
	}
}

// testReadoptionSkipsTheModelProbe: a restarted occ (a new driver) that
// finds the probed gateway Pod still running checks it without a second
// model call; a new revision's Pod is probed.
func testReadoptionSkipsTheModelProbe(t *testing.T, c *kubetest.Cluster) {
	ctx := context.Background()
	wait := func(o *kubernetes.Options) { o.PodStartWait = kubernetes.DefaultPodStartWait }
	d1 := open(t, c.Config(), wait)
	rev := newRevision()
	ensure(t, d1, rev.NamespaceID)
	spec := computetest.FakeGatewayAcceptCredential(specOf(rev, 1))
	if r := awaitReadiness(t, d1, spec, isReady); !r.Ready {
		t.Fatalf("readiness: %+v", r)
	}
	if r, err := d1.PrepareRevision(ctx, spec); err != nil || !r.Ready {
		t.Fatalf("readiness again: %+v, %v", r, err)
	}
	if n := computetest.FakeGatewayModelProbes(t, d1, rev); n != 1 {
		t.Fatalf("model probes after the first start = %d; want 1", n)
	}
	d1.Close() // occ stops; the Pod keeps running

	d2 := open(t, c.Config(), wait)
	if r, err := d2.PrepareRevision(ctx, spec); err != nil || !r.Ready {
		t.Fatalf("readiness after a restart: %+v, %v", r, err)
	}
	if n := computetest.FakeGatewayModelProbes(t, d2, rev); n != 1 {
		t.Fatalf("model probes after a restart = %d; want still 1 (no provider call on an occ restart)", n)
	}

	next := computetest.FakeGatewayAcceptCredential(specOf(compute.RevisionRef{AgentRef: rev.AgentRef, RevisionID: occ.NewID(occ.PrefixRevision)}, 2))
	if r := awaitReadiness(t, d2, next, isReady); !r.Ready {
		t.Fatalf("readiness of a new revision: %+v", r)
	}
	if n := computetest.FakeGatewayModelProbes(t, d2, next.RevisionRef); n != 1 {
		t.Fatalf("model probes of the new revision's Pod = %d; want 1", n)
	}
}

// TestKwokDedicatedCodex: a dedicated revision on the node lane: the
// stand-in kubelet runs the Pod's codex plugin install and its harness
// (the harness container's own script with the fake Codex CLI) before the
// gateway, which connects to the app-server with the revision's token.
// The model credential is in the harness's environment only: not the
// gateway's, not its rendered document, not any object but the Secret.
// Stop and delete leave nothing running.
func TestKwokDedicatedCodex(t *testing.T) {
	c := kubetest.Start(t, kubetest.WithNodes(1))
	k := c.StartKubelet(t, gatewaytest.BuildBinary(t))
	k.RunHarnesses(gatewaytest.BuildCodexBinary(t))
	cs := clientset(t, c.Config())
	d := open(t, c.Config(), func(o *kubernetes.Options) {
		o.PodStartWait, o.DedicatedCodex = kubernetes.DefaultPodStartWait, true
		o.HarnessResources = kubernetes.Resources{RequestsCPU: "50m", RequestsMemory: "64Mi", LimitsCPU: "1", LimitsMemory: "512Mi"}
	})
	ctx := context.Background()
	rev := newRevision()
	ensure(t, d, rev.NamespaceID)
	spec := specOf(rev, 1)
	spec.ExecutionMode = occ.ExecutionDedicated
	spec.Document = computetest.FakeDedicatedDocument()
	// A dedicated revision's credential is the harness's (HarnessEnv), never the gateway's Env.
	spec.Env = nil
	spec.HarnessEnv = map[string]string{compute.HarnessAPIKeyEnv: "sk-dedicated-canary"}
	if r := awaitReadiness(t, d, spec, isReady); !r.Ready {
		t.Fatalf("readiness: %+v", r)
	}
	henv, ok := k.HarnessEnv(rev.AgentID)
	if !ok || henv["OCC_HARNESS_CREDENTIAL"] != "sk-dedicated-canary" {
		t.Fatalf("the harness's environment: %v (running %v)", henv, ok)
	}
	ps := k.Processes(rev.AgentID)
	if len(ps) != 1 {
		t.Fatalf("%d gateways", len(ps))
	}
	for name, v := range ps[0].Env {
		if strings.Contains(v, "canary") {
			t.Errorf("the gateway's environment holds the model credential in %s", name)
		}
	}
	if ps[0].Env["CODEX_APP_SERVER_TOKEN"] == "" {
		t.Error("the gateway has no app-server token")
	}
	observer{cs: cs, k: k}.ScanState(t, func(where string, content []byte) {
		if strings.Contains(string(content), "canary") {
			t.Errorf("%s holds the model credential", where)
		}
	})
	dg, err := d.Diagnose(ctx, rev)
	if err != nil {
		t.Fatal(err)
	}
	harness := 0
	for _, c := range dg.Checks {
		if c.Component == compute.HarnessComponent {
			harness++
		}
		if c.Component == "gateway" && c.Code != "OK" {
			t.Errorf("gateway check %+v", c)
		}
	}
	if harness != 3 {
		t.Errorf("diagnosis %+v: want the three harness checks", dg.Checks)
	}
	if err := d.StopAgent(ctx, rev.AgentRef); err != nil {
		t.Fatal(err)
	}
	// The stand-in kubelet stops a deleted Pod's processes at its next
	// look (every 100 ms).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, running := k.HarnessEnv(rev.AgentID)
		if !running && len(k.Processes(rev.AgentID)) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a stopped dedicated Agent still runs its harness or gateway 30 s after its Pod ended")
		}
	}
	if err := d.DeleteAgent(ctx, rev.AgentRef); err != nil {
		t.Fatal(err)
	}
	if (observer{cs: cs, k: k}).AgentExists(t, rev.AgentRef) {
		t.Error("objects of the deleted Agent remain")
	}
}
