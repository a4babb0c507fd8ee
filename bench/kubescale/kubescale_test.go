// Package kubescale is the Kubernetes driver's scale benchmark: Agents
// deployed through occ (`occ serve --compute kubernetes`, a child process
// built from this checkout) onto the kwok lane (kube-apiserver, etcd,
// kube-controller-manager, kube-scheduler and kwok's fake nodes, from
// scripts/kube-assets), with kubetest's stand-in kubelet running the fake
// gateway for every Pod, so that the driver's readiness is what it is in
// production: the Pod's Ready condition, then the gateway's own probes and
// model probe through a port-forward. It reports, per Agent, admission
// (the deploy request's 202) → Pod Ready (seen by a watch) and admission →
// deployment succeeded (the revision active: the driver's activation mark
// on the gateway Deployment, seen by a watch, and confirmed through occ's
// API at the end), p50 and p99; occ's CPU
// seconds over the deploys (per Agent too) and occ's RSS at the end and
// at its peak.
//
// It is a benchmark, not a test: nothing is asserted about the figures.
//
//	OCC_TEST_KUBE_ASSETS=$(scripts/kube-assets) go test -run '^$' -bench BenchmarkKubeScale \
//	  -benchtime 1x -timeout 60m ./bench/kubescale/ -args -agents 500
//
// With `-profile DIR` it also writes occ's profiles, read from its loopback
// metrics listener (/debug/pprof/): DIR/cpu-N.pprof, consecutive CPU
// profiles covering the deploys, and DIR/heap.pprof once every deployment
// succeeded (`go tool pprof -top DIR/cpu-*.pprof`).
package kubescale_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/openclaw/occ/bench/internal/occproc"
	"github.com/openclaw/occ/internal/compute/kubernetes"
	"github.com/openclaw/occ/internal/compute/kubernetes/kubetest"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
)

// perNamespace is how many Agents share an occ Namespace (its quota is
// raised to hold them).
const perNamespace = 50

// clients send the setup requests and the deploys at once.
const clients = 16

// agents is how many Agents a run deploys (`-args -agents N`).
var agents = flag.Int("agents", 500, "Agents deployed at once")

// profileDir, when set, receives occ's CPU and heap profiles.
var profileDir = flag.String("profile", "", "write occ's CPU and heap profiles to this directory")

func BenchmarkKubeScale(b *testing.B) {
	if *agents < 1 {
		b.Fatalf("-agents %d: want a positive number", *agents)
	}
	for range b.N {
		runScale(b, *agents)
	}
}

// world is the bench's occ and cluster.
type world struct {
	b      *testing.B
	occ    *occproc.Proc
	key    string
	client *http.Client
}

func runScale(b *testing.B, n int) {
	b.StopTimer()
	c := kubetest.Start(b, kubetest.WithNodes(2))
	c.StartKubelet(b, gatewaytest.BuildBinary(b))
	bin := buildOCC(b)
	dir := gatewaytest.ReachableDir(b)
	env := []string{"OCC_COMPUTE=kubernetes", "OCC_COMPUTE_KUBERNETES_KUBECONFIG=" + c.KubeconfigPath(),
		"OCC_COMPUTE_KUBERNETES_CONTEXT=" + kubetest.ContextName, "OCC_COMPUTE_KUBERNETES_IMAGES_GATEWAY=registry.example/openclaw:2026.9.6",
		"OCC_COMPUTE_KUBERNETES_RESOURCES_QUOTA_PODS=" + strconv.Itoa(2*perNamespace),
		"OCC_COMPUTE_KUBERNETES_RESOURCES_QUOTA_CPU=" + strconv.Itoa(8*perNamespace),
		"OCC_COMPUTE_KUBERNETES_RESOURCES_QUOTA_MEMORY=" + strconv.Itoa(8*perNamespace) + "Gi",
		// One bench client sends everything: no request rate limit.
		"OCC_LIMITS_REQUESTS_PER_SECOND_PER_PRINCIPAL=100000", "OCC_LIMITS_BURST_PER_PRINCIPAL=1000000",
		"OCC_LIMITS_REQUESTS_PER_SECOND_PER_CLIENT=100000", "OCC_LIMITS_BURST_PER_CLIENT=1000000"}
	metrics := freeAddr(b)
	env = append(env, "OCC_METRICS_LISTEN="+metrics)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	logPath := filepath.Join(b.TempDir(), "occ.log")
	p, err := occproc.Start(ctx, bin, dir, logPath, nil, env...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.Stop)
	raw, err := os.ReadFile(filepath.Join(dir, "bootstrap-admin.key"))
	if err != nil {
		b.Fatal(err)
	}
	w := &world{b: b, occ: p, key: strings.TrimSpace(string(raw)),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}, Timeout: time.Minute}}

	// Setup (unmeasured): Namespaces of perNamespace Agents each, every
	// Agent's principal allowed to use the model Secret.
	type agent struct{ ns, id, rev string }
	agents := make([]agent, n)
	nss := map[int]string{}
	for i := 0; i < n; i += perNamespace {
		nss[i/perNamespace] = w.namespace(fmt.Sprintf("scale-%d", i/perNamespace))
	}
	setups := map[string][3]string{}
	for _, ns := range nss {
		setups[ns] = w.deployable(ns)
	}
	parallel(n, func(i int) {
		ns := nss[i/perNamespace]
		s := setups[ns]
		a := w.call("POST", "/namespaces/"+ns+"/agents", map[string]any{"name": fmt.Sprintf("a-%d", i), "configurationId": s[1],
			"harnessAuth": map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "id": s[0]}}}, 201)
		w.call("POST", "/namespaces/"+ns+"/iam/bindings", map[string]any{"principalId": a["servicePrincipalId"], "roleId": s[2]}, 201)
		agents[i] = agent{ns: ns, id: a["id"].(string)}
	})
	index := map[string]int{}
	for i, a := range agents {
		index[a.id] = i
	}

	// Pod Ready, as a watch sees it.
	podReady := make([]time.Time, n)
	var mu sync.Mutex
	cs, err := k8s.NewForConfig(c.Config())
	if err != nil {
		b.Fatal(err)
	}
	inf := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = kubernetes.LabelManagedBy + "=" + kubernetes.ManagedBy
	}))
	seen := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || !ready(pod) {
			return
		}
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if i, ok := index[pod.Labels[kubernetes.LabelAgent]]; ok && podReady[i].IsZero() {
			podReady[i] = now
		}
	}
	if _, err := inf.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: seen,
		UpdateFunc: func(_, obj any) { seen(obj) }}); err != nil {
		b.Fatal(err)
	}
	// Activation, as a watch sees it: the driver marks the gateway
	// Deployment with the active revision when the worker publishes it,
	// just after setting the Agent's active revision (the bench does not
	// poll occ for it: its listings would count as occ's CPU).
	type activation struct {
		rev string
		at  time.Time
	}
	activated := map[string]activation{}
	marked := func(obj any) {
		dep, ok := obj.(*appsv1.Deployment)
		if !ok {
			return
		}
		rev := dep.Annotations[kubernetes.AnnotationActiveRevision]
		if rev == "" {
			return
		}
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if a := activated[dep.Labels[kubernetes.LabelAgent]]; a.rev != rev {
			activated[dep.Labels[kubernetes.LabelAgent]] = activation{rev: rev, at: now}
		}
	}
	if _, err := inf.Apps().V1().Deployments().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: marked,
		UpdateFunc: func(_, obj any) { marked(obj) }}); err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	inf.Start(stop)
	inf.WaitForCacheSync(stop)

	// Measured: every Agent deployed at once, until every revision is
	// active.
	cpu0, err := p.CPUSeconds()
	if err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	start := time.Now()
	profiled := w.profileCPU("http://" + metrics)
	admitted := make([]time.Time, n)
	parallel(n, func(i int) {
		a := &agents[i]
		rev := w.call("POST", "/namespaces/"+a.ns+"/agents/"+a.id+"/deploy", nil, 202)["id"].(string)
		now := time.Now()
		mu.Lock()
		a.rev, admitted[i] = rev, now
		mu.Unlock()
	})
	deadline := time.Now().Add(time.Duration(n)*2*time.Second + 5*time.Minute)
	for {
		mu.Lock()
		left := 0
		for i := range agents {
			if a, ok := activated[agents[i].id]; !ok || a.rev != agents[i].rev {
				left++
			}
		}
		mu.Unlock()
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d deployments not active by the deadline; occ's log: %s", left, n, logPath)
		}
		time.Sleep(500 * time.Millisecond)
	}
	all := time.Since(start)
	b.StopTimer()
	cpu1, err := p.CPUSeconds()
	if err != nil {
		b.Fatal(err)
	}
	profiled()
	w.profile("http://"+metrics+"/debug/pprof/heap", "heap.pprof")
	passes := w.revisionPasses("http://" + metrics + "/metrics")
	// occ's own word, once: every Agent's active revision is the deployed
	// one.
	for _, ns := range nss {
		for _, g := range w.agents(ns) {
			if i, ok := index[g["id"].(string)]; ok && g["activeRevisionId"] != agents[i].rev {
				b.Fatalf("Agent %s: active revision %v, want %s", agents[i].id, g["activeRevisionId"], agents[i].rev)
			}
		}
	}
	rss, err1 := p.Status("VmRSS")
	hwm, err2 := p.Status("VmHWM")
	if err1 != nil || err2 != nil {
		b.Fatal(err1, err2)
	}
	mu.Lock()
	succeeded := make([]time.Time, n)
	for i := range agents {
		succeeded[i] = activated[agents[i].id].at
	}
	toReady, toSucceeded := durations(admitted, podReady), durations(admitted, succeeded)
	mu.Unlock()
	if len(toReady) != n {
		b.Fatalf("the watch saw %d of %d Pods Ready", len(toReady), n)
	}
	b.ReportMetric(float64(n), "agents")
	b.ReportMetric(pct(toReady, 50), "ready-p50-s")
	b.ReportMetric(pct(toReady, 99), "ready-p99-s")
	b.ReportMetric(pct(toSucceeded, 50), "succeeded-p50-s")
	b.ReportMetric(pct(toSucceeded, 99), "succeeded-p99-s")
	b.ReportMetric(all.Seconds(), "s-all-succeeded")
	b.ReportMetric(passes/float64(n), "passes/agent")
	b.ReportMetric(cpu1-cpu0, "occ-cpu-s")
	b.ReportMetric((cpu1-cpu0)*1000/float64(n), "occ-cpu-ms/agent")
	b.ReportMetric(float64(rss)/(1<<20), "occ-rss-MB")
	b.ReportMetric(float64(hwm)/(1<<20), "occ-peak-rss-MB")
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// durations are the seen-admitted intervals, in seconds, sorted.
func durations(admitted, seen []time.Time) []float64 {
	var out []float64
	for i, t := range seen {
		if !t.IsZero() {
			out = append(out, t.Sub(admitted[i]).Seconds())
		}
	}
	slices.Sort(out)
	return out
}

func pct(sorted []float64, p int) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, len(sorted)*p/100)]
}

// parallel runs f(0..n-1) from clients goroutines.
func parallel(n int, f func(i int)) {
	work := make(chan int)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for i := range work {
				f(i)
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
}

// namespace creates an occ Namespace and waits until it is ready.
func (w *world) namespace(name string) string {
	id := w.call("POST", "/namespaces", map[string]any{"name": name}, 201)["id"].(string)
	deadline := time.Now().Add(2 * time.Minute)
	for w.call("GET", "/namespaces/"+id, nil, 200)["status"] != "ready" {
		if time.Now().After(deadline) {
			w.b.Fatalf("namespace %s not ready", name)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return id
}

// deployable makes a Namespace's model Secret, Configuration and a role
// that lets Agents' principals operate the Secret.
func (w *world) deployable(ns string) [3]string {
	p := "/namespaces/" + ns
	secret := w.call("POST", p+"/secrets", map[string]any{"name": "openai", "value": "sk-bench"}, 201)["id"].(string)
	cfg := w.call("POST", p+"/configurations", map[string]any{"name": "c", "kind": "agent",
		"values": map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": "openai/gpt-5"}}}}, 201)["id"].(string)
	role := w.call("POST", p+"/iam/roles", map[string]any{"name": "operate", "permissions": []string{"secret:operate"}}, 201)["id"].(string)
	return [3]string{secret, cfg, role}
}

// agents lists a Namespace's Agents, every page.
func (w *world) agents(ns string) []map[string]any {
	var out []map[string]any
	token := ""
	for {
		path := "/namespaces/" + ns + "/agents?pageSize=100"
		if token != "" {
			path += "&pageToken=" + url.QueryEscape(token)
		}
		body := w.do("GET", path, nil, 200)
		items, _ := body["data"].([]any)
		for _, it := range items {
			out = append(out, it.(map[string]any))
		}
		meta, _ := body["meta"].(map[string]any)
		next, _ := meta["nextPageToken"].(string)
		if next == "" {
			return out
		}
		token = next
	}
}

// call sends one request, fails unless the status is want, and returns data.
func (w *world) call(method, path string, body any, want int) map[string]any {
	d, _ := w.do(method, path, body, want)["data"].(map[string]any)
	return d
}

func (w *world) do(method, path string, body any, want int) map[string]any {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, w.occ.Base+path, rd)
	if err != nil {
		w.b.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+w.key)
	res, err := w.client.Do(req)
	if err != nil {
		w.b.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	if res.StatusCode != want {
		w.b.Fatalf("%s %s = %d %v", method, path, res.StatusCode, out)
	}
	return out
}

// freeAddr returns a free loopback address.
func freeAddr(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// cpuSlice is the length of each CPU profile of -profile.
const cpuSlice = 20 * time.Second

// profileCPU, with -profile, fetches consecutive CPU profiles of occ
// until the function it returns is called (which waits for the last).
func (w *world) profileCPU(base string) (stop func()) {
	if *profileDir == "" {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			w.profile(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, int(cpuSlice/time.Second)), fmt.Sprintf("cpu-%03d.pprof", i))
			select {
			case <-done:
				return
			default:
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// revisionPasses reads from occ's metrics how many passes its worker made
// over revisions (occ_job_run_seconds_count of revision_reconcile jobs,
// every outcome: a pass that deferred is a snoozed job run).
func (w *world) revisionPasses(url string) float64 {
	res, err := http.Get(url)
	if err != nil {
		w.b.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		w.b.Fatalf("GET %s = %d %v", url, res.StatusCode, err)
	}
	total := 0.0
	for line := range strings.Lines(string(raw)) {
		if !strings.HasPrefix(line, `occ_job_run_seconds_count{kind="revision_reconcile"`) {
			continue
		}
		w.b.Logf("occ: %s", strings.TrimSpace(line))
		v, err := strconv.ParseFloat(strings.TrimSpace(line[strings.LastIndexByte(line, ' ')+1:]), 64)
		if err != nil {
			w.b.Fatalf("metrics line %q: %v", line, err)
		}
		total += v
	}
	return total
}

// profile, with -profile, saves what url answers as DIR/name (from any
// goroutine: a failure is reported, not fatal).
func (w *world) profile(url, name string) {
	if *profileDir == "" {
		return
	}
	res, err := http.Get(url)
	if err != nil {
		w.b.Error(err)
		return
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		w.b.Errorf("GET %s = %d %v", url, res.StatusCode, err)
		return
	}
	if err := os.MkdirAll(*profileDir, 0o755); err != nil {
		w.b.Error(err)
	} else if err := os.WriteFile(filepath.Join(*profileDir, name), raw, 0o644); err != nil {
		w.b.Error(err)
	}
}

// buildOCC builds cmd/occ of this checkout into a temporary directory.
func buildOCC(b *testing.B) string {
	b.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(b.TempDir(), "occ")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/occ")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build ./cmd/occ: %v\n%s", err, out)
	}
	return bin
}
