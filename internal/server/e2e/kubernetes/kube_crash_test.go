package kubernetes_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/server/servertest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openclaw/occ/internal/compute/kubernetes"
	"github.com/openclaw/occ/internal/compute/kubernetes/kubetest"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	k8s "k8s.io/client-go/kubernetes"
)

// kubeCrashRounds is the kwok lane's deploy crash rounds unless
// OCC_TEST_KUBE_CRASH_ROUNDS asks for more.
const kubeCrashRounds = 20

// TestKubernetesDeployCrashRestart is TestDeployCrashRestart on the kwok
// lane: occ runs with --compute kubernetes against kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok's nodes, the stand-in
// kubelet running the fake gateway for each Pod; occ is SIGKILLed at a
// random moment of a burst of deploys, stops, deletes and workspace
// writes, started again, and once everything settled: no Agent has (or
// ever had, at any scan) two live gateway Pods, a running Agent has one
// and a stopped one none, nothing of a deleted Agent is left (Deployment,
// Service, ConfigMaps, Secrets, claim, ServiceAccount, Pods), no object
// belongs to an Agent occ does not know, every deployment is terminal and
// stays so, and River holds no unfinished work. At the end the Namespace
// is deleted, and with it the Kubernetes namespace.
//
// OCC_TEST_KUBE_CRASH_ROUNDS raises the rounds (default 20). It runs in
// parallel (after the package's serial tests, beside the other parallel
// ones): most of its time is spent waiting for Pods and gateways.
func TestKubernetesDeployCrashRestart(t *testing.T) {
	// Not parallel: it runs before the package's parallel tests, alone, as
	// its settle deadlines want (run beside the real lanes it missed them).
	rounds := kubeCrashRounds
	if s := os.Getenv("OCC_TEST_KUBE_CRASH_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("OCC_TEST_KUBE_CRASH_ROUNDS=%q: want a positive number", s)
		}
		rounds = max(n, rounds)
	}
	c := kubetest.Start(t, kubetest.WithNodes(1))
	bin := servertest.BuildOCC(t)
	kc := &kubeCrashCompute{t: t, cs: kubeClient(t, c), kubelet: c.StartKubelet(t, gatewaytest.BuildBinary(t)), kubeconfig: c.KubeconfigPath()}
	sub := func(t *testing.T) *kubeCrashCompute {
		kc := *kc
		kc.t = t
		return &kc
	}
	t.Run("APIServerOutage", func(t *testing.T) { testAPIServerOutage(t, bin, c, sub(t)) })
	t.Run("CrashLoop", func(t *testing.T) {
		kc := sub(t)
		w := servertest.DeployCrashLoop(t, bin, kc, gatewaytest.ReachableDir(t), "", rounds)
		w.DeleteEverything()
		kc.awaitNone(w.Ns)
		w.Last.Stop()
	})
}

// awaitNone waits (bounded) until nothing of a deleted Namespace is left
// (the namespace controller removes what a namespace held).
func (k *kubeCrashCompute) awaitNone(nsID string) {
	deadline := time.Now().Add(k.SettleWait())
	for {
		var left []string
		for _, o := range k.objects(false) {
			if o.ns == nsID {
				left = append(left, o.what)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			k.t.Fatalf("%v after the Namespace's deletion, its objects are left: %v", k.SettleWait(), left)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func kubeClient(t *testing.T, c *kubetest.Cluster) *k8s.Clientset {
	t.Helper()
	cs, err := k8s.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// kubeCrashCompute sees the cluster as its admin.
type kubeCrashCompute struct {
	t          *testing.T
	cs         *k8s.Clientset
	kubelet    *kubetest.Kubelet
	kubeconfig string
}

func (k *kubeCrashCompute) Env() []string { return kubeEnv(k.kubeconfig) }

// kubeEnv selects the kubernetes driver with the admin's kubeconfig; the
// gateway image is never pulled (the stand-in kubelet runs the fake
// gateway).
func kubeEnv(kubeconfig string) []string {
	return []string{"OCC_COMPUTE=kubernetes", "OCC_COMPUTE_KUBERNETES_KUBECONFIG=" + kubeconfig,
		"OCC_COMPUTE_KUBERNETES_CONTEXT=" + kubetest.ContextName, "OCC_COMPUTE_KUBERNETES_IMAGES_GATEWAY=registry.example/openclaw:2026.9.6"}
}

func (k *kubeCrashCompute) SettleWait() time.Duration { return 3 * time.Minute }

// kubeObject is one object occ made, as the crash test sees it.
type kubeObject struct {
	what  string // kind namespace/name
	ns    string // its occ Namespace's ID
	agent string // its Agent's ID ("" for a namespace's own objects)
	live  bool   // not being deleted
}

// objects lists the objects carrying occ's managed-by label that the
// driver creates (and the Pods its Deployments make), in every namespace;
// with podsOnly, only the Pods.
func (k *kubeCrashCompute) objects(podsOnly bool) []kubeObject {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sel := metav1.ListOptions{LabelSelector: kubernetes.LabelManagedBy + "=" + kubernetes.ManagedBy}
	var out []kubeObject
	add := func(kind string, m metav1.Object) {
		out = append(out, kubeObject{what: kind + " " + m.GetNamespace() + "/" + m.GetName(), ns: m.GetLabels()[kubernetes.LabelNamespace], agent: m.GetLabels()[kubernetes.LabelAgent],
			live: m.GetDeletionTimestamp() == nil})
	}
	must := func(err error) {
		if err != nil {
			k.t.Fatal(err)
		}
	}
	const ns = metav1.NamespaceAll
	core, apps := k.cs.CoreV1(), k.cs.AppsV1()
	pods, err := core.Pods(ns).List(ctx, sel)
	must(err)
	for i := range pods.Items {
		add("pod", &pods.Items[i])
	}
	if podsOnly {
		return out
	}
	nss, err := core.Namespaces().List(ctx, sel)
	must(err)
	for i := range nss.Items {
		add("namespace", &nss.Items[i])
	}
	deps, err := apps.Deployments(ns).List(ctx, sel)
	must(err)
	for i := range deps.Items {
		add("deployment", &deps.Items[i])
	}
	svcs, err := core.Services(ns).List(ctx, sel)
	must(err)
	for i := range svcs.Items {
		add("service", &svcs.Items[i])
	}
	cms, err := core.ConfigMaps(ns).List(ctx, sel)
	must(err)
	for i := range cms.Items {
		add("configmap", &cms.Items[i])
	}
	secrets, err := core.Secrets(ns).List(ctx, sel)
	must(err)
	for i := range secrets.Items {
		add("secret", &secrets.Items[i])
	}
	claims, err := core.PersistentVolumeClaims(ns).List(ctx, sel)
	must(err)
	for i := range claims.Items {
		add("persistentvolumeclaim", &claims.Items[i])
	}
	sas, err := core.ServiceAccounts(ns).List(ctx, sel)
	must(err)
	for i := range sas.Items {
		add("serviceaccount", &sas.Items[i])
	}
	return out
}

// workloads: the Agents' gateway Pods not being deleted, each with the
// fake gateway processes the stand-in kubelet runs for the Agent.
func (k *kubeCrashCompute) Workloads() map[string][]string {
	out := map[string][]string{}
	for _, o := range k.objects(true) {
		if o.live {
			out[o.agent] = append(out[o.agent], fmt.Sprintf("%s (%d fake gateway processes)", o.what, len(k.kubelet.Processes(o.agent))))
		}
	}
	return out
}

// held: the live objects of each Agent.
func (k *kubeCrashCompute) Held() map[string][]string {
	out := map[string][]string{}
	for _, o := range k.objects(false) {
		if o.agent != "" && o.live {
			out[o.agent] = append(out[o.agent], o.what)
		}
	}
	return out
}

// testAPIServerOutage: occ reaches the API server through a proxy the
// test takes down after occ started. A deployment admitted meanwhile stays
// queued with DEPENDENCY_UNAVAILABLE progress through the outage (longer
// than the attempts' backoff would last) and succeeds once the API server
// is back.
func testAPIServerOutage(t *testing.T, bin string, c *kubetest.Cluster, kc *kubeCrashCompute) {
	proxy := c.StartProxy(t)
	kc.kubeconfig = proxy.Kubeconfig(t, c, t.TempDir())
	w := servertest.NewDeployCrash(t, bin, kc, gatewaytest.ReachableDir(t), "")
	p := w.StartOCC()
	w.Setup(p)
	agt, err := w.NewAgent(p)
	if err != nil {
		t.Fatal(err)
	}
	proxy.Down()
	r := p.Must("POST", "/namespaces/"+w.Ns+"/agents/"+agt+"/deploy", nil)
	if r.Status != 202 {
		t.Fatalf("deploy = %d %v", r.Status, r.Body)
	}
	path := "/namespaces/" + w.Ns + "/agents/" + agt + "/deployments/" + r.Data()["id"].(string)
	lastAttempt := func(d map[string]any) any {
		pr, _ := d["progress"].(map[string]any)
		la, _ := pr["lastAttempt"].(map[string]any)
		return la["code"]
	}
	await := func(what string, limit time.Duration, ok func(d map[string]any) bool) map[string]any {
		deadline := time.Now().Add(limit)
		for {
			d := p.Must("GET", path, nil).Data()
			if ok(d) {
				return d
			}
			if s := d["status"]; s == "failed" || s == "succeeded" || time.Now().After(deadline) {
				t.Fatalf("deployment %v, want %s\n%s", d, what, servertest.ReadTail(p.Logs))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waiting := func(d map[string]any) bool {
		return (d["status"] == "queued" || d["status"] == "running") && lastAttempt(d) == "DEPENDENCY_UNAVAILABLE"
	}
	await("queued with DEPENDENCY_UNAVAILABLE", time.Minute, waiting)
	// Five attempts' backoff (1+2+4+8 s at most) is over; the deployment
	// still waits.
	outage := time.Now().Add(20 * time.Second)
	await("still waiting", time.Minute, func(d map[string]any) bool { return time.Now().After(outage) })
	if d := p.Must("GET", path, nil).Data(); !waiting(d) {
		t.Fatalf("deployment after the outage's 20 s: %v, want queued with DEPENDENCY_UNAVAILABLE", d)
	}
	proxy.Up(t)
	await("succeeded once the API server is back", 3*time.Minute, func(d map[string]any) bool { return d["status"] == "succeeded" })
	w.Last = p
	w.DeleteEverything()
	kc.awaitNone(w.Ns)
	p.Stop()
}
