package kubernetes_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/compute/kubernetes"
	"github.com/openclaw/occ/internal/compute/kubernetes/kubetest"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/occ"
)

// kubelet stands in for the kubelet of kwok's fake nodes, for occ's gateway
// Pods only: kwok schedules Pods and reports them Running and Ready, but runs
// nothing. For each gateway Pod bound to a node it runs the fake gateway
// binary with the Pod's environment (secretKeyRef values read from their
// Secrets, as a kubelet does), the Pod's ConfigMap as its openclaw.json, and
// a directory per PersistentVolumeClaim as the state volume (kept across
// Pods, as a claim is); it routes port-forwards to the Pod's gateway port to
// that process (kubetest.ForwardPodPort), and stops the process when the
// Pod is deleted.
type kubelet struct {
	t    *testing.T
	c    *kubetest.Cluster
	cs   *k8s.Clientset
	bin  string
	root string

	mu   sync.Mutex
	pods map[types.UID]*fakePod
	stop chan struct{}
	done chan struct{}
}

// fakePod is one gateway Pod's process.
type fakePod struct {
	ns, name string
	agent    string
	env      map[string]string
	cmd      *exec.Cmd
	exited   chan struct{}
}

func startKubelet(t *testing.T, c *kubetest.Cluster) *kubelet {
	k := &kubelet{t: t, c: c, cs: clientset(t, c.Config()), bin: gatewaytest.BuildBinary(t), root: t.TempDir(),
		pods: map[types.UID]*fakePod{}, stop: make(chan struct{}), done: make(chan struct{})}
	go k.loop()
	t.Cleanup(func() {
		close(k.stop)
		<-k.done
		k.mu.Lock()
		defer k.mu.Unlock()
		for uid, p := range k.pods {
			p.kill()
			delete(k.pods, uid)
		}
	})
	return k
}

func (k *kubelet) loop() {
	defer close(k.done)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-tick.C:
		}
		k.sync()
	}
}

// sync provisions a volume for every new claim, starts a process for
// every new bound gateway Pod and stops the process of every Pod deleted or
// being deleted.
func (k *kubelet) sync() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	k.provision(ctx)
	list, err := k.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: kubernetes.LabelManagedBy + "=" + kubernetes.ManagedBy})
	if err != nil {
		return
	}
	seen := map[types.UID]bool{}
	for i := range list.Items {
		p := &list.Items[i]
		if p.DeletionTimestamp != nil || p.Spec.NodeName == "" {
			continue
		}
		seen[p.UID] = true
		k.mu.Lock()
		_, running := k.pods[p.UID]
		k.mu.Unlock()
		if !running {
			if fp, err := k.run(ctx, p); err == nil {
				k.mu.Lock()
				k.pods[p.UID] = fp
				k.mu.Unlock()
			}
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for uid, fp := range k.pods {
		if !seen[uid] {
			fp.kill()
			delete(k.pods, uid)
		}
	}
}

// provision plays a volume provisioner (the node lane has none): each of
// occ's pending claims gets a PersistentVolume of its own, bound to it
// (claimRef), on the directory standing for the claim.
func (k *kubelet) provision(ctx context.Context) {
	claims, err := k.cs.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{LabelSelector: kubernetes.LabelManagedBy + "=" + kubernetes.ManagedBy})
	if err != nil {
		return
	}
	for _, c := range claims.Items {
		if c.Spec.VolumeName != "" || c.DeletionTimestamp != nil {
			continue
		}
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "pv-" + string(c.UID)},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: c.Spec.Resources.Requests[corev1.ResourceStorage]},
				AccessModes:                   c.Spec.AccessModes,
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: c.Namespace, Name: c.Name, UID: c.UID},
				PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
					Path: k.claimDir(c.Namespace, c.Name)}},
			},
		}
		_, _ = k.cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	}
}

// claimDir is the directory standing for a claim.
func (k *kubelet) claimDir(ns, claim string) string {
	return filepath.Join(k.root, "claims", ns, claim)
}

// run starts the fake gateway of Pod p.
func (k *kubelet) run(ctx context.Context, p *corev1.Pod) (*fakePod, error) {
	podDir := filepath.Join(k.root, "pods", string(p.UID))
	var stateDir, configDir string
	for _, v := range p.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			stateDir = k.claimDir(p.Namespace, v.PersistentVolumeClaim.ClaimName)
		case v.ConfigMap != nil:
			cm, err := k.cs.CoreV1().ConfigMaps(p.Namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			configDir = filepath.Join(podDir, "config")
			if err := os.MkdirAll(configDir, 0o700); err != nil {
				return nil, err
			}
			for name, data := range cm.Data {
				if err := os.WriteFile(filepath.Join(configDir, name), []byte(data), 0o600); err != nil {
					return nil, err
				}
			}
		}
	}
	if stateDir == "" || configDir == "" {
		return nil, errors.New("pod without state or config volume")
	}
	// The Pod's paths, as this host has them.
	local := strings.NewReplacer(kubernetes.DataDir, stateDir, kubernetes.ConfigDir, configDir)
	cfgPath := filepath.Join(configDir, "openclaw.json")
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(cfgPath, []byte(local.Replace(string(b))), 0o600); err != nil {
		return nil, err
	}
	for _, d := range []string{"state", "workspace", "logs", "home"} {
		if err := os.MkdirAll(filepath.Join(stateDir, d), 0o700); err != nil {
			return nil, err
		}
	}
	c := p.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			s, err := k.cs.CoreV1().Secrets(p.Namespace).Get(ctx, e.ValueFrom.SecretKeyRef.Name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			env[e.Name] = string(s.Data[e.ValueFrom.SecretKeyRef.Key])
		default:
			env[e.Name] = e.Value
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(k.bin, "gateway", "run", "--port", strconv.Itoa(port))
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	for name, v := range env {
		cmd.Env = append(cmd.Env, name+"="+local.Replace(v))
	}
	cmd.Dir = filepath.Join(stateDir, "home")
	log, err := os.Create(filepath.Join(podDir, "console.log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	fp := &fakePod{ns: p.Namespace, name: p.Name, agent: p.Labels[kubernetes.LabelAgent], env: env, cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(fp.exited) }()
	// In a goroutine of its own: ForwardPodPort ends the goroutine that
	// calls it when it fails (a namespace being deleted meanwhile).
	forwarded := make(chan struct{})
	go func() {
		defer close(forwarded)
		k.c.ForwardPodPort(k.t, p.Namespace, p.Name, int32(c.Ports[0].ContainerPort), "127.0.0.1:"+strconv.Itoa(port))
	}()
	<-forwarded
	return fp, nil
}

func (p *fakePod) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// running is the process of the Agent's live Pod, if one runs.
func (k *kubelet) running(agent string) []*fakePod {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []*fakePod
	for _, p := range k.pods {
		if p.agent == agent {
			out = append(out, p)
		}
	}
	return out
}

// observer sees the cluster as an admin and the fake Pods' processes.
type observer struct {
	cs *k8s.Clientset
	k  *kubelet
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
	ps := o.k.running(ag.AgentID)
	if len(ps) != 1 {
		return nil, false
	}
	return ps[0].env, true
}

func (o observer) workspace(ag compute.AgentRef) string {
	return filepath.Join(o.k.claimDir(kubernetes.NamespaceName(ag.NamespaceID), kubernetes.StateClaimName(ag.AgentID)), "workspace")
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
	k := startKubelet(t, c)
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
	startKubelet(t, c)
	t.Run("QuotaForbidsPod", func(t *testing.T) { testQuotaForbidsPod(t, c) })
	t.Run("DiagnoseSlack", func(t *testing.T) { testDiagnoseSlack(t, c) })
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
	want := map[string]string{"gateway/pod": "succeeded OK", "gateway/healthz": "succeeded OK", "gateway/startupz": "succeeded OK",
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
