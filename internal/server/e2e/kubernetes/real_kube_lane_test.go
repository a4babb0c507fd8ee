package kubernetes_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/server/servertest"

	corev1 "k8s.io/api/core/v1"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/kubernetes"
	"github.com/openclaw/occ/internal/compute/kubernetes/kubetest"
	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/store/storetest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// realKubeGatewayImage is the name the lane gives the gateway image it
// builds and imports into the node's containerd.
const realKubeGatewayImage = "kubetest.local/openclaw-gateway:lane"

// realNodeCluster is the package's one single-node cluster on this machine
// (kubetest.WithRealNode through WithServiceNetwork: kube-apiserver, etcd,
// kube-controller-manager, kube-scheduler, kubelet, containerd, runc, a
// CNI bridge, kube-proxy and CoreDNS) with the gateway image `occ runtime
// image build --output` makes of the pinned runtime and its Codex pieces
// (OCC_TEST_RUNTIME_CACHE) imported into the node's containerd (nothing is
// pulled). The image builds while the cluster starts. The node-lane tests
// share it, each with its own occ and Namespace (so its own Kubernetes
// namespace), as one company's occ installations would share a cluster.
// They run one after the other, before the package's parallel tests: the
// three at once on the one node of a loaded 2-core machine made a
// dedicated gateway miss its 6-min convergence deadline (2026-12-07).
func realNodeCluster(t *testing.T) *kubetest.Cluster {
	t.Helper()
	return servertest.Shared(t, "cluster with the real node and the gateway image", func(tb testing.TB) *kubetest.Cluster {
		cache := servertest.RuntimeWithCodex(tb)
		tarball := filepath.Join(tb.TempDir(), "gateway.tar")
		build := exec.Command(servertest.BuildOCC(tb), "runtime", "image", "build", "--runtime-dir", cache, "--data-dir", tb.TempDir(),
			"--output", tarball, "--name", realKubeGatewayImage)
		var buildOut strings.Builder
		build.Stdout, build.Stderr = &buildOut, &buildOut
		buildBegan := time.Now()
		if err := build.Start(); err != nil {
			tb.Fatal(err)
		}
		built := make(chan error, 1)
		go func() { built <- build.Wait() }()
		tb.Cleanup(func() { // the cluster failed to start: the build is not waited for
			if build.ProcessState == nil {
				_ = build.Process.Kill()
			}
		})
		began := time.Now()
		c := kubetest.Start(tb, kubetest.WithServiceNetwork())
		tb.Logf("cluster with the real node %s up in %s", c.RealNode(), time.Since(began).Round(time.Second))
		if err := <-built; err != nil {
			tb.Fatalf("occ runtime image build --output: %v\n%s", err, buildOut.String())
		}
		tb.Logf("gateway image built in %s (beside the cluster's start):\n%s", time.Since(buildBegan).Round(time.Second), buildOut.String())
		began = time.Now()
		if err := c.ImportImage(tb.Context(), tarball); err != nil {
			tb.Fatal(err)
		}
		tb.Logf("gateway image imported into the node's containerd in %s", time.Since(began).Round(time.Second))
		return c
	})
}

// startRealKubeLane boots occ on SQLite with --compute kubernetes at the
// shared cluster and its gateway image (dedicated Codex on), a fake
// OpenAI-compatible provider on the host's address on the node's bridge
// (where a Pod reaches the host), and a Namespace with the provider's key
// as a Secret. occ's log is shown when t fails.
func startRealKubeLane(t *testing.T, nsName string) (*realKubeWorld, string) {
	t.Helper()
	c := realNodeCluster(t)
	prov := servertest.StartFakeProviderOn(t, net.JoinHostPort(c.BridgeAddress(), "0"))
	t.Logf("the provider at %s (the node bridge's host address)", prov.URL)
	serverLog := &servertest.EventLog{Min: slog.LevelInfo}
	e := servertest.Boot(t, storetest.URL(t, "sqlite"), nil, func(m *server.Main) {
		k := &m.Config.Compute.Kubernetes
		m.Config.Compute.Driver = "kubernetes"
		k.Kubeconfig, k.Context = c.KubeconfigPath(), kubetest.ContextName
		k.Images.Gateway = realKubeGatewayImage
		k.Images.DedicatedCodex = true
		k.GatewayStorageClassName = kubetest.LocalStorageClass
		k.GatewayStateSize = "1Gi"
		m.Config.Worker.ConvergenceTimeout = config.Duration(6 * time.Minute)
		m.Logger = slog.New(serverLog)
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("occ's log:\n%s", serverLog)
		}
	})
	ns := e.CreateNamespace(nsName)
	w := &servertest.RealWorld{T: t, E: e, Ns: ns, Prov: prov}
	canary := "sk-occ-real-kube-canary-" + servertest.RandomHex(8)
	r := e.Call("POST", w.Path("/secrets"), e.Admin, map[string]any{"name": "provider-key", "value": canary})
	if r.Status != 201 {
		t.Fatalf("create secret = %d %v", r.Status, r.Body)
	}
	w.Secret = r.Data()["id"].(string)
	kw := &realKubeWorld{RealWorld: w, c: c, k: &kubeCrashCompute{t: t, cs: kubeClient(t, c)}}
	w.Dump = kw.dump
	return kw, canary
}

// TestRealOpenClawKubernetesLane is the node lane of the kubernetes driver
// on the shared cluster (realNodeCluster), through the HTTP API of occ on
// SQLite: one Agent deploys to succeeded in a real Pod, its workspace
// files are written and read live through occ (through the API server's
// port-forward) and are in its volume, it stops (Pod gone, claim kept),
// deploys again on the same claim with its workspace as it was, and is
// deleted (every object occ made for it gone, the Pod terminated). It
// asserts no timing.
func TestRealOpenClawKubernetesLane(t *testing.T) {
	// Not parallel (realNodeCluster).
	w, canary := startRealKubeLane(t, "real-kube")
	w.lifecycle(canary)
}

// TestRealDedicatedCodexKubernetesLane: the image carries the runtime's
// Codex pieces, so the shared cluster runs dedicated Codex for real: a
// dedicated api_key Agent whose harness sidecar logs the real Codex CLI in
// and serves the real app-server, to which the real gateway's codex plugin
// connects in the same Pod, with a fake OpenAI Responses API on the
// bridge; and one whose key the provider rejects, which fails with
// RUNTIME_AUTHENTICATION_FAILED.
func TestRealDedicatedCodexKubernetesLane(t *testing.T) {
	// Not parallel (realNodeCluster).
	w, _ := startRealKubeLane(t, "real-kube-codex")
	w.dedicatedCodex(servertest.StartResponsesProviderOn(t, net.JoinHostPort(w.c.BridgeAddress(), "0")))
}

// TestRealOCCInKubernetesLane installs occ itself into the shared cluster
// by its chart and deploys through it (inCluster).
func TestRealOCCInKubernetesLane(t *testing.T) {
	// Not parallel (realNodeCluster).
	w, _ := startRealKubeLane(t, "real-kube-installer")
	w.inCluster()
}

// dedicatedCodex deploys a dedicated api_key Agent to succeeded (the
// harness sidecar and the gateway in one real Pod, the key in neither the
// Pod's spec nor openclaw.json), deletes it, and deploys one whose key
// the provider rejects to RUNTIME_AUTHENTICATION_FAILED.
func (w *realKubeWorld) dedicatedCodex(prov *servertest.ResponsesProvider) {
	t, e := w.T, w.E
	key := "sk-good-" + servertest.RandomHex(8)
	agent := w.NewDedicatedAgent("codex", key, prov.URL+"/v1")
	began := time.Now()
	rev, _ := w.Deploy(agent)
	if st, _ := w.WaitDeployment(agent, rev, 10*time.Minute); st["status"] != "succeeded" {
		w.dump(agent)
		t.Fatalf("dedicated deployment = %v; Pods %v; provider saw %v", st, w.gatewayPods(agent), prov.Requests())
	}
	t.Logf("dedicated deploy on the real node: succeeded %s after the request", time.Since(began).Round(time.Millisecond))
	if prov.Count(key) == 0 {
		t.Fatalf("the provider never saw the harness's key: %v", prov.Requests())
	}
	pod := w.runningPod(agent)
	spec, err := json.Marshal(pod.Spec)
	if err != nil || strings.Contains(string(spec), key) {
		t.Fatalf("the Pod's spec holds the key (%v)", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cm, err := w.k.cs.CoreV1().ConfigMaps(kubernetes.NamespaceName(w.Ns)).Get(ctx,
		kubernetes.ConfigMapName(compute.RevisionRef{AgentRef: compute.AgentRef{NamespaceID: w.Ns, AgentID: agent}, RevisionID: rev}), metav1.GetOptions{})
	if conf := cm.Data[gateway.ConfigFileName]; err != nil || strings.Contains(conf, key) || !strings.Contains(conf, "websocket") {
		t.Fatalf("the revision's openclaw.json: %v, or it holds the key, or no codex app-server", err)
	}
	_, volDir := w.claim(agent)
	w.CodexConnected(agent, rev, filepath.Join(volDir, "logs", "gateway.log"), "harness/process")
	if r := e.Call("DELETE", w.Path("/agents/"+agent), e.Admin, nil); r.Status != 202 {
		t.Fatalf("delete = %d %v", r.Status, r.Body)
	}
	w.WaitUntil("the dedicated Agent gone (404)", 6*time.Minute, func() bool { return w.AgentGET(agent).Status == 404 })
	if left := w.agentObjects(agent); len(left) > 0 {
		t.Fatalf("objects of the deleted dedicated Agent left: %v", left)
	}

	bad := w.NewDedicatedAgent("codex-bad", "sk-bad-"+servertest.RandomHex(8), prov.URL+"/v1")
	rev, _ = w.Deploy(bad)
	st, _ := w.WaitDeployment(bad, rev, 10*time.Minute)
	if er, _ := st["error"].(map[string]any); st["status"] != "failed" || er["code"] != "RUNTIME_AUTHENTICATION_FAILED" {
		w.dump(bad)
		t.Fatalf("dedicated deployment with a rejected key = %v; provider saw %v", st, prov.Requests())
	}
}

// realKubeWorld is the lane's occ and its cluster.
type realKubeWorld struct {
	*servertest.RealWorld
	c *kubetest.Cluster
	k *kubeCrashCompute
}

// gatewayPods lists the Agent's gateway Pods (in any state).
func (w *realKubeWorld) gatewayPods(agent string) []corev1.Pod {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pods, err := w.k.cs.CoreV1().Pods(kubernetes.NamespaceName(w.Ns)).List(ctx, metav1.ListOptions{LabelSelector: kubernetes.LabelAgent + "=" + agent})
	if err != nil {
		w.T.Fatal(err)
	}
	return pods.Items
}

// claim returns the Agent's state claim and the host directory of its
// volume ("" when the claim is not there).
func (w *realKubeWorld) claim(agent string) (*corev1.PersistentVolumeClaim, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	core := w.k.cs.CoreV1()
	pvc, err := core.PersistentVolumeClaims(kubernetes.NamespaceName(w.Ns)).Get(ctx, kubernetes.StateClaimName(agent), metav1.GetOptions{})
	if err != nil {
		return nil, ""
	}
	pv, err := core.PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil || pv.Spec.HostPath == nil {
		w.T.Fatalf("the volume of claim %s: %v", pvc.Name, err)
	}
	return pvc, pv.Spec.HostPath.Path
}

// agentObjects lists the objects occ made for the Agent that are still
// there (Pods included, in any state).
func (w *realKubeWorld) agentObjects(agent string) []string {
	var left []string
	for _, o := range w.k.objects(false) {
		if o.agent == agent {
			left = append(left, o.what)
		}
	}
	return left
}

// runningPod waits (bounded) for the Agent's one gateway Pod Running and
// Ready on the real node and returns it.
func (w *realKubeWorld) runningPod(agent string) corev1.Pod {
	var pod corev1.Pod
	w.WaitUntil("the gateway Pod Running and Ready", 2*time.Minute, func() bool {
		pods := w.gatewayPods(agent)
		if len(pods) != 1 || pods[0].Status.Phase != corev1.PodRunning || !podReady(&pods[0]) {
			return false
		}
		pod = pods[0]
		return true
	})
	if pod.Spec.NodeName != w.c.RealNode() {
		w.T.Fatalf("the gateway Pod runs on %q, want the real node %q", pod.Spec.NodeName, w.c.RealNode())
	}
	return pod
}

// dump logs what the gateway said: its Pods' container logs (through the
// API server and kubelet) and the end of its log file in the volume.
func (w *realKubeWorld) dump(agent string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tail := int64(100)
	for _, p := range w.gatewayPods(agent) {
		b, err := w.k.cs.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{TailLines: &tail}).DoRaw(ctx)
		w.T.Logf("Pod %s (phase %s, conditions %v) log (%v):\n%s", p.Name, p.Status.Phase, p.Status.Conditions, err, b)
	}
	if _, dir := w.claim(agent); dir != "" {
		log, _ := os.ReadFile(filepath.Join(dir, "logs", "gateway.log"))
		if len(log) > 20000 {
			log = log[len(log)-20000:]
		}
		w.T.Logf("gateway.log:\n%s", log)
	}
}

// putWhenServing writes AGENTS.md through occ. A gateway Pod that is not
// Ready at this moment (its readiness probe, a Node.js process, can
// outlast its bound on a loaded node) answers 503 DEPENDENCY_UNAVAILABLE,
// which a user retries: so does this, for at most 2 minutes.
func (w *realKubeWorld) putWhenServing(agent, content string) {
	var put servertest.Resp
	w.WaitUntil("the workspace reachable", 2*time.Minute, func() bool {
		put = w.E.Call("PUT", w.Path("/agents/"+agent+"/workspace/files/AGENTS.md"), w.E.Admin, map[string]any{"content": content})
		return put.Status != 503 || put.Code() != "DEPENDENCY_UNAVAILABLE"
	})
	if put.Status != 200 {
		w.T.Fatalf("PUT AGENTS.md = %d %v", put.Status, put.Body)
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (w *realKubeWorld) lifecycle(canary string) {
	t, e := w.T, w.E
	const initial = "Answer support questions.\n"
	agent, cfg := w.NewAgent("bot", "sk-good", nil)

	// Deploy: revision 1 to succeeded in a real Pod, the provider called.
	began := time.Now()
	rev1, _ := w.Deploy(agent)
	if st, _ := w.WaitDeployment(agent, rev1, 8*time.Minute); st["status"] != "succeeded" || st["error"] != nil {
		w.dump(agent)
		t.Fatalf("first deployment = %v; Pods %v; provider saw %v", st, w.gatewayPods(agent), w.Prov.Requests())
	}
	t.Logf("revision 1 succeeded %s after the request", time.Since(began).Round(time.Millisecond))
	if n := w.Prov.Count("Bearer sk-good"); n == 0 {
		t.Errorf("the gateway never called the model provider with the configured key; requests: %v", w.Prov.Requests())
	}
	pod1 := w.runningPod(agent)
	pvc1, volDir := w.claim(agent)
	if pvc1 == nil || pvc1.Status.Phase != corev1.ClaimBound {
		t.Fatalf("the Agent's state claim after the deploy: %+v", pvc1)
	}
	t.Logf("Pod %s at %s; state volume %s", pod1.Name, pod1.Status.PodIP, volDir)

	// Live workspace files through occ, in the claim's volume.
	w.putWhenServing(agent, initial)
	w.LiveFiles(agent, volDir, initial)
	w.Diagnose(agent, rev1, "succeeded")
	servertest.CheckNoSecret(t, volDir, canary)

	// Stop: the Pod gone, the claim kept with the workspace.
	if r := e.Call("POST", w.Path("/agents/"+agent+"/stop"), e.Admin, nil); r.Status != 202 {
		t.Fatalf("stop = %d %v", r.Status, r.Body)
	}
	took := w.WaitUntil("activeRevisionId cleared", 6*time.Minute, func() bool { return w.AgentGET(agent).Data()["activeRevisionId"] == nil })
	t.Logf("stop: activeRevisionId null %s after the 202", took.Round(time.Millisecond))
	w.WaitUntil("the stopped Agent's Pod gone", 2*time.Minute, func() bool { return len(w.gatewayPods(agent)) == 0 })
	if pvc, _ := w.claim(agent); pvc == nil || pvc.UID != pvc1.UID {
		t.Fatalf("the stopped Agent's claim: %+v, want claim %s kept", pvc, pvc1.UID)
	}
	servertest.CheckWorkspaceFile(t, volDir, initial)

	// Deploy again: a new Pod on the same claim, the workspace as it was.
	began = time.Now()
	rev2, _ := w.Deploy(agent)
	if st, _ := w.WaitDeployment(agent, rev2, 8*time.Minute); st["status"] != "succeeded" {
		w.dump(agent)
		t.Fatalf("second deployment = %v; Pods %v", st, w.gatewayPods(agent))
	}
	t.Logf("revision 2 succeeded %s after the request", time.Since(began).Round(time.Millisecond))
	pod2 := w.runningPod(agent)
	if pod2.UID == pod1.UID {
		t.Fatalf("the second deploy runs in the first Pod %s", pod1.Name)
	}
	if pvc, dir := w.claim(agent); pvc == nil || pvc.UID != pvc1.UID || dir != volDir {
		t.Fatalf("the redeployed Agent's claim: %+v at %s, want claim %s at %s", pvc, dir, pvc1.UID, volDir)
	}
	r := e.Call("GET", w.Path("/agents/"+agent+"/workspace/files/AGENTS.md"), e.Admin, nil)
	if r.Status != 200 || r.Data()["content"] != initial {
		t.Fatalf("AGENTS.md after the redeploy = %d %v, want %q", r.Status, r.Body, initial)
	}
	servertest.CheckWorkspaceFile(t, volDir, initial)

	// Delete: 404 once the Pod has terminated, every object occ made for
	// the Agent gone, the name free.
	if r := e.Call("DELETE", w.Path("/agents/"+agent), e.Admin, nil); r.Status != 202 {
		t.Fatalf("delete = %d %v", r.Status, r.Body)
	}
	took = w.WaitUntil("the Agent gone (404)", 6*time.Minute, func() bool { return w.AgentGET(agent).Status == 404 })
	t.Logf("delete: 404 %s after the 202", took.Round(time.Millisecond))
	if pods := w.gatewayPods(agent); len(pods) > 0 {
		t.Fatalf("the deleted Agent's Pod %s is still there (phase %s)", pods[0].Name, pods[0].Status.Phase)
	}
	if left := w.agentObjects(agent); len(left) > 0 {
		t.Fatalf("objects of the deleted Agent left: %v", left)
	}
	if r := e.Call("POST", w.Path("/agents"), e.Admin, map[string]any{"name": "bot", "configurationId": cfg}); r.Status != 201 {
		t.Fatalf("reuse the name of the deleted Agent = %d %v", r.Status, r.Body)
	}
}
