package kubetest

import (
	"context"
	"errors"
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

	"github.com/openclaw/occ/internal/compute/kubernetes"
)

// Kubelet stands in for the kubelet of kwok's fake nodes, for occ's gateway
// Pods only: kwok runs nothing, and leaves these Pods' status to it
// (tools/kube/kwok/files). For each gateway Pod bound to a node it runs the fake gateway
// binary with the Pod's environment (secretKeyRef values read from their
// Secrets, as a kubelet does), the Pod's ConfigMap as its openclaw.json, and
// a directory per PersistentVolumeClaim as the state volume (kept across
// Pods, as a claim is); it routes port-forwards to the Pod's gateway port to
// that process (ForwardPodPort), reports the Pod's status as a kubelet
// does (Running; Ready only while the gateway's /readyz answers, as the
// Pod's readiness probe asks), and stops the process when the Pod is
// deleted. The fake gateway binary is gatewaytest.BuildBinary's.
type Kubelet struct {
	t   testing.TB
	c   *Cluster
	cs  *k8s.Clientset
	bin string
	// codex is the fake Codex CLI dedicated revisions' harnesses run
	// (RunHarnesses); "" refuses them.
	codex string
	root  string

	mu   sync.Mutex
	pods map[types.UID]*fakePod
	// starting holds the Pods whose gateway is being started, each by a
	// goroutine of its own (as a kubelet's Pod workers do); starts counts
	// those goroutines.
	starting map[types.UID]bool
	starts   sync.WaitGroup
	stop     chan struct{}
	done     chan struct{}
}

// fakePod is one gateway Pod's process.
type fakePod struct {
	ns, name string
	agent    string
	env      map[string]string
	cmd      *exec.Cmd
	exited   chan struct{}
	// killed closes when the stand-in kubelet stops the process (an exit
	// before that is the gateway's own).
	killed   chan struct{}
	killOnce sync.Once
	// harness is a dedicated revision's Codex harness, nil otherwise.
	harness *fakeHarness
}

// StartKubelet starts the stand-in kubelet of a cluster started WithNodes,
// running gatewayBin for each of occ's gateway Pods; it stops, with every
// process it started, when the test ends.
func (c *Cluster) StartKubelet(t testing.TB, gatewayBin string) *Kubelet {
	t.Helper()
	cs, err := k8s.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	k := &Kubelet{t: t, c: c, cs: cs, bin: gatewayBin, root: t.TempDir(),
		pods: map[types.UID]*fakePod{}, starting: map[types.UID]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	go k.loop()
	t.Cleanup(func() {
		close(k.stop)
		<-k.done
		k.starts.Wait()
		k.mu.Lock()
		defer k.mu.Unlock()
		for uid, p := range k.pods {
			p.kill()
			delete(k.pods, uid)
		}
	})
	return k
}

func (k *Kubelet) loop() {
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
// every new bound gateway Pod (in the background: a start takes API
// requests and, for a dedicated Pod, its harness) and stops the process of
// every Pod deleted or being deleted.
func (k *Kubelet) sync() {
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
		if !running && !k.starting[p.UID] {
			k.starting[p.UID] = true
			k.starts.Add(1)
			go k.start(p)
		}
		k.mu.Unlock()
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

// start starts Pod p's gateway; one that fails is tried again by the
// next sync.
func (k *Kubelet) start(p *corev1.Pod) {
	defer k.starts.Done()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fp, err := k.run(ctx, p)
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.starting, p.UID)
	if err == nil {
		k.pods[p.UID] = fp
	}
}

// provision plays a volume provisioner (the node lane has none): each of
// occ's pending claims gets a PersistentVolume of its own, bound to it
// (claimRef), on the directory standing for the claim.
func (k *Kubelet) provision(ctx context.Context) {
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
					Path: k.ClaimDir(c.Namespace, c.Name)}},
			},
		}
		_, _ = k.cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	}
}

// ClaimDir is the directory standing for a claim.
func (k *Kubelet) ClaimDir(ns, claim string) string {
	return filepath.Join(k.root, "claims", ns, claim)
}

// run starts the fake gateway of Pod p.
func (k *Kubelet) run(ctx context.Context, p *corev1.Pod) (*fakePod, error) {
	podDir := filepath.Join(k.root, "pods", string(p.UID))
	var stateDir, configDir string
	for _, v := range p.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			stateDir = k.ClaimDir(p.Namespace, v.PersistentVolumeClaim.ClaimName)
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
	// The Pod's paths (and, for a dedicated revision, its harness's
	// loopback address), as this host has them.
	pairs := []string{kubernetes.DataDir, stateDir, kubernetes.ConfigDir, configDir}
	harness, err := k.runInit(ctx, p, podDir, stateDir)
	if err != nil {
		return nil, err
	}
	if harness != nil {
		pairs = append(pairs, kubernetes.AppServerURL, harness.url)
	}
	local := strings.NewReplacer(pairs...)
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
	env, err := k.env(ctx, p.Namespace, c.Env)
	if err != nil {
		harness.kill()
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		harness.kill()
		return nil, err
	}
	cmd := exec.Command(k.bin, "gateway", "run", "--port", strconv.Itoa(port))
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	for name, v := range env {
		cmd.Env = append(cmd.Env, name+"="+local.Replace(v))
	}
	cmd.Dir = filepath.Join(stateDir, "home")
	// The container's log, as a kubelet keeps it, served by kwok as the
	// Pod's logs.
	logFile := filepath.Join(podDir, "container.log")
	log, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = CRILog(log)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		harness.kill()
		return nil, err
	}
	fp := &fakePod{ns: p.Namespace, name: p.Name, agent: p.Labels[kubernetes.LabelAgent], env: env, cmd: cmd,
		exited: make(chan struct{}), killed: make(chan struct{}), harness: harness}
	go func() { _ = cmd.Wait(); log.Close(); close(fp.exited) }()
	if err := k.c.ServePodLogs(k.t, p.Namespace, p.Name, c.Name, logFile); err != nil {
		fp.kill()
		return nil, err
	}
	// A Pod deleted meanwhile (a rollout, a namespace deleted) is no
	// failure: the next sync stops its gateway.
	err = k.c.forwardPodPort(k.t, p.Namespace, p.Name, gatewayPort(c), "127.0.0.1:"+strconv.Itoa(port))
	if err != nil && !errors.Is(err, errPodGone) {
		k.t.Error(err)
	}
	period := 10 * time.Second
	if rp := c.ReadinessProbe; rp != nil && rp.PeriodSeconds > 0 {
		period = time.Duration(rp.PeriodSeconds) * time.Second
	}
	go k.report(fp, newStatus(p), port, period)
	return fp, nil
}

// gatewayPort is the port the gateway container listens on in its Pod
// (on loopback): its --port argument.
func gatewayPort(c corev1.Container) int32 {
	for i, a := range c.Args {
		if a == "--port" && i+1 < len(c.Args) {
			if n, err := strconv.Atoi(c.Args[i+1]); err == nil {
				return int32(n)
			}
		}
	}
	return 0
}

func (p *fakePod) kill() {
	p.killOnce.Do(func() { close(p.killed) })
	stopGroup(p.cmd, p.exited)
	p.harness.kill()
}

// stopGroup ends a started process's group: SIGTERM, then SIGKILL after
// 10 s; exited closes when the process has been waited for.
func stopGroup(cmd *exec.Cmd, exited <-chan struct{}) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

// env is a container's environment, secretKeyRef values read from their
// Secrets as a kubelet does.
func (k *Kubelet) env(ctx context.Context, ns string, vars []corev1.EnvVar) (map[string]string, error) {
	env := map[string]string{}
	for _, e := range vars {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			s, err := k.cs.CoreV1().Secrets(ns).Get(ctx, e.ValueFrom.SecretKeyRef.Name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			env[e.Name] = string(s.Data[e.ValueFrom.SecretKeyRef.Key])
		default:
			env[e.Name] = e.Value
		}
	}
	return env, nil
}

// Process is a fake gateway the stand-in kubelet runs for a Pod.
type Process struct {
	Namespace, Pod string
	// Env is the environment the Pod's spec gave the gateway.
	Env map[string]string
}

// Processes lists the fake gateways running for the Agent's Pods.
func (k *Kubelet) Processes(agentID string) []Process {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []Process
	for _, p := range k.pods {
		if p.agent == agentID {
			out = append(out, Process{Namespace: p.ns, Pod: p.name, Env: p.env})
		}
	}
	return out
}
