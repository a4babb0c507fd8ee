package kubernetes_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/server/servertest"

	corev1 "k8s.io/api/core/v1"

	"github.com/openclaw/occ/internal/compute/kubernetes/kubetest"
	"github.com/openclaw/occ/internal/httpapi/contracttest"
	"github.com/openclaw/occ/internal/store/storetest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// inClusterOCCImage is the name the lane gives occ's own image.
const inClusterOCCImage = "kubetest.local/occ:lane"

// inClusterNamespace is where the lane installs the chart.
const inClusterNamespace = "occ-system"

// installInCluster installs occ into the lane's cluster as docs/KUBERNETES.md
// says: its image built by `occ runtime image build --occ` from a static
// occ (imported into the node, nothing pulled), the Secrets of the database
// URL (a fresh PostgreSQL schema, reached by the Pods through a relay on
// the node's bridge), the secrets keyset and the bootstrap service key, and
// the chart rendered by helm and applied; it waits until both API replicas
// and the worker are Ready and returns the API, reached at its Service's
// cluster IP (kube-proxy routes the host there too).
func (w *realKubeWorld) installInCluster() *servertest.Env {
	t, c := w.T, w.c
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()

	occBin := servertest.BuildStaticOCC(t)
	tarball := filepath.Join(dir, "occ.tar")
	if out, err := exec.Command(occBin, "runtime", "image", "build", "--occ", "--data-dir", filepath.Join(dir, "build"),
		"--output", tarball, "--name", inClusterOCCImage).CombinedOutput(); err != nil {
		t.Fatalf("occ runtime image build --occ: %v\n%s", err, out)
	}
	if err := c.ImportImage(ctx, tarball); err != nil {
		t.Fatal(err)
	}

	dbURL, err := url.Parse(storetest.URL(t, "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	dbURL.Host = c.RelayForPods(t, dbURL.Host)
	keysetFile := filepath.Join(dir, "secrets.keyset")
	if out, err := exec.Command(occBin, "secrets", "create-keyset", "--output", keysetFile).CombinedOutput(); err != nil {
		t.Fatalf("occ secrets create-keyset: %v\n%s", err, out)
	}
	keyset, err := os.ReadFile(keysetFile)
	if err != nil {
		t.Fatal(err)
	}
	adminKey := "occ_" + servertest.RandomHex(24)
	cs := w.k.cs
	psa := map[string]string{}
	for _, mode := range []string{"enforce", "audit", "warn"} {
		psa["pod-security.kubernetes.io/"+mode] = "restricted"
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: inClusterNamespace, Labels: psa}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]map[string][]byte{
		"occ-database":  {"url": []byte(dbURL.String())},
		"occ-keyset":    {"secrets.keyset": keyset},
		"occ-bootstrap": {"admin-password": []byte(servertest.AdminPassword), "api-key": []byte(adminKey)},
	} {
		if _, err := cs.CoreV1().Secrets(inClusterNamespace).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data},
			metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	root := servertest.RepoRoot(t)
	repo, tag, _ := strings.Cut(inClusterOCCImage, ":")
	helm := exec.Command(kubetest.Asset(t, "helm"), "template", "occ", filepath.Join(root, "deploy", "helm", "occ"), "--namespace", inClusterNamespace,
		"--set", "image.repository="+repo, "--set", "image.tag="+tag, "--set", "image.pullPolicy=Never",
		"--set", "publicOrigin=http://occ.occ-system.svc:8080",
		"--set", "database.existingSecret=occ-database", "--set", "secretsKeyset.existingSecret=occ-keyset",
		"--set", "bootstrap.existingSecret=occ-bootstrap", "--set", "bootstrap.apiKeyKey=api-key",
		"--set", "compute.gatewayImage="+realKubeGatewayImage, "--set", "compute.requireImmutableDigest=false",
		"--set", "compute.gatewayStorageClassName="+kubetest.LocalStorageClass, "--set", "compute.gatewayStateSize=1Gi",
		"--set", "config.worker.convergenceTimeout=6m")
	home := t.TempDir()
	helm.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	manifests, err := helm.Output()
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	if err := c.Apply(ctx, inClusterNamespace, string(manifests)); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	for _, d := range []struct {
		name     string
		replicas int32
	}{{"occ-api", 2}, {"occ-worker", 1}} {
		w.WaitUntil("Deployment "+d.name+" Ready", 5*time.Minute, func() bool {
			dep, err := cs.AppsV1().Deployments(inClusterNamespace).Get(ctx, d.name, metav1.GetOptions{})
			return err == nil && dep.Status.ReadyReplicas == d.replicas && dep.Status.UpdatedReplicas == d.replicas
		})
	}
	t.Logf("occ's API (2 replicas) and worker Ready %s after the chart was applied", time.Since(began).Round(time.Second))
	svc, err := cs.CoreV1().Services(inClusterNamespace).Get(ctx, "occ", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e := &servertest.Env{T: t, Base: "http://" + net.JoinHostPort(svc.Spec.ClusterIP, "8080"), Admin: adminKey, Spec: w.E.Spec,
		Client: &http.Client{Transport: contracttest.NewValidatingTransport(t, w.E.Spec, http.DefaultTransport)}}
	// Ready Pods are not yet a reachable Service: kube-proxy programs its
	// rules after the endpoints change (a refused connection until then),
	// as any client of the cluster sees.
	routed := time.Now()
	w.WaitUntil("the occ Service answers /readyz", 2*time.Minute, func() bool {
		res, err := http.Get(e.Base + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	t.Logf("the occ Service answered %s after its Pods were Ready", time.Since(routed).Round(time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			w.inClusterLogs()
		}
	})
	return e
}

// inClusterLogs logs the last lines of every occ Pod's containers' logs.
func (w *realKubeWorld) inClusterLogs() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pods, err := w.k.cs.CoreV1().Pods(inClusterNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		w.T.Logf("occ's Pods: %v", err)
		return
	}
	tail := int64(60)
	for _, p := range pods.Items {
		for _, c := range p.Spec.Containers {
			b, err := w.k.cs.CoreV1().Pods(inClusterNamespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name, TailLines: &tail}).DoRaw(ctx)
			w.T.Logf("occ Pod %s (phase %s) container %s: %d bytes of log (%v):\n%s", p.Name, p.Status.Phase, c.Name, len(b), err, b)
		}
	}
}

// inCluster is the lane with occ installed in the cluster by its chart
// (endpointAccess service: occ reaches each gateway by its Service's DNS
// name, through CoreDNS and kube-proxy, and has no port-forward
// permission): one Agent deploys to succeeded in a real Pod, its workspace
// files are written and read live through occ's API replicas, and it is
// deleted with everything occ made for it.
func (w *realKubeWorld) inCluster() {
	t := w.T
	e := w.installInCluster()
	ns := e.CreateNamespace("in-cluster")
	r := e.Call("POST", "/namespaces/"+ns+"/secrets", e.Admin, map[string]any{"name": "provider-key", "value": "sk-occ-in-cluster-" + servertest.RandomHex(8)})
	if r.Status != 201 {
		t.Fatalf("create secret = %d %v", r.Status, r.Body)
	}
	iw := &realKubeWorld{RealWorld: &servertest.RealWorld{T: t, E: e, Ns: ns, Prov: w.Prov, Secret: r.Data()["id"].(string)}, c: w.c, k: w.k}
	agent, _ := iw.NewAgent("bot", "sk-good", nil)
	began := time.Now()
	rev, _ := iw.Deploy(agent)
	if st, _ := iw.WaitDeployment(agent, rev, 8*time.Minute); st["status"] != "succeeded" {
		iw.dump(agent)
		t.Fatalf("deployment through occ in the cluster = %v", st)
	}
	t.Logf("in-cluster occ: revision 1 succeeded %s after the request", time.Since(began).Round(time.Millisecond))
	iw.runningPod(agent)
	_, volDir := iw.claim(agent)
	const initial = "Answer in-cluster questions.\n"
	iw.putWhenServing(agent, initial)
	iw.LiveFiles(agent, volDir, initial)
	if r := e.Call("DELETE", iw.Path("/agents/"+agent), e.Admin, nil); r.Status != 202 {
		t.Fatalf("delete = %d %v", r.Status, r.Body)
	}
	iw.WaitUntil("the Agent gone (404)", 6*time.Minute, func() bool { return iw.AgentGET(agent).Status == 404 })
	if left := iw.agentObjects(agent); len(left) > 0 {
		t.Fatalf("objects of the deleted Agent left: %v", left)
	}
}
