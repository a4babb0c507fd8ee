package kubernetes_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/kubernetes"
	"github.com/openclaw/occ/internal/occ"
)

// TestAPIWatchWorkloads: the driver reports the Agent of a gateway Pod, in
// any namespace, when what readiness reads of it changed (it became Ready)
// and when it is deleted, not when it is merely created or placed, and
// nothing of a Pod without occ's labels; it watches once, until closed.
func TestAPIWatchWorkloads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := admin(t)
	d, other := open(t, cfg), open(t, cfg)
	seen, otherSeen := &reports{}, &reports{}
	if err := d.WatchWorkloads(seen.add); err != nil {
		t.Fatal(err)
	}
	if err := d.WatchWorkloads(func(compute.AgentRef) {}); err == nil {
		t.Error("a second WatchWorkloads was accepted")
	}
	if err := other.WatchWorkloads(otherSeen.add); err != nil {
		t.Fatal(err)
	}
	cs := clientset(t, cfg)
	ns := "watch-" + strings.ToLower(occ.NewID("t")[2:12])
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := cs.CoreV1().Pods(ns)
	// create makes a Pod; condition sets one of its conditions true.
	create := func(name string, labels map[string]string) *corev1.Pod {
		t.Helper()
		p, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: corev1.PodSpec{ServiceAccountName: "default", Containers: []corev1.Container{{Name: "gateway", Image: "registry.example/openclaw:2026.9.6"}}}},
			metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	condition := func(p *corev1.Pod, c corev1.PodConditionType) *corev1.Pod {
		t.Helper()
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue})
		p, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	rev := newRevision()
	// A Ready Pod with every label but managed-by is not occ's.
	foreign := compute.AgentRef{NamespaceID: rev.NamespaceID, AgentID: occ.NewID(occ.PrefixAgent)}
	condition(create("foreign", map[string]string{kubernetes.LabelNamespace: foreign.NamespaceID,
		kubernetes.LabelAgent: foreign.AgentID, kubernetes.LabelRole: kubernetes.RoleGateway}), corev1.PodReady)
	// Each reported step adds one report of the Agent.
	reported := func(what string, want int) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for seen.of(rev.AgentRef) < want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the Agent was reported %d times in a minute, want %d", what, seen.of(rev.AgentRef), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	p := create("gateway", revisionLabels(rev))
	p = condition(p, corev1.PodScheduled) // placed: still starting
	// Its container started, the Pod not Ready: still starting.
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: kubernetes.ContainerName, Image: p.Spec.Containers[0].Image,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
	p, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The watch reports in order: once another Agent's Ready Pod made
	// after these steps is reported, they would have been.
	fence := revisionLabels(newRevision())
	condition(create("fence", fence), corev1.PodReady)
	fenced := compute.AgentRef{NamespaceID: fence[kubernetes.LabelNamespace], AgentID: fence[kubernetes.LabelAgent]}
	deadline := time.Now().Add(time.Minute)
	for seen.of(fenced) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("a Pod that became Ready was not reported in a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := seen.of(rev.AgentRef); n != 0 {
		t.Errorf("a gateway Pod created, placed and started, not Ready, was reported %d times", n)
	}
	p = condition(p, corev1.PodReady)
	reported("a gateway Pod that became Ready", 1)
	if err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	reported("a gateway Pod deleted", 2)
	if n := seen.of(foreign); n != 0 {
		t.Errorf("a Pod without occ's managed-by label was reported %d times", n)
	}

	// Closed, the driver reports nothing more: another Agent's Pod, seen
	// by the other driver's watch, was not reported by the closed one.
	d.Close()
	later := revisionLabels(newRevision())
	condition(create("later", later), corev1.PodReady)
	agent := compute.AgentRef{NamespaceID: later[kubernetes.LabelNamespace], AgentID: later[kubernetes.LabelAgent]}
	deadline = time.Now().Add(time.Minute)
	for otherSeen.of(agent) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the open driver did not report a new gateway Pod in a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := seen.of(agent); n != 0 {
		t.Errorf("the closed driver reported %d changes", n)
	}
}

// revisionLabels are the labels of a revision's gateway Pod.
func revisionLabels(rev compute.RevisionRef) map[string]string {
	return map[string]string{kubernetes.LabelManagedBy: kubernetes.ManagedBy, kubernetes.LabelNamespace: rev.NamespaceID,
		kubernetes.LabelAgent: rev.AgentID, kubernetes.LabelRole: kubernetes.RoleGateway, kubernetes.LabelRevision: rev.RevisionID}
}

// reports counts the Agents a watch reported.
type reports struct {
	mu sync.Mutex
	n  map[compute.AgentRef]int
}

func (r *reports) add(a compute.AgentRef) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = map[compute.AgentRef]int{}
	}
	r.n[a]++
}

func (r *reports) of(a compute.AgentRef) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[a]
}

// TestAPIWatchOutlivesTheRequestTimeout: the per-request timeout of the
// settings does not cut the watch (it would be made again every timeout,
// each time with a warning in occ's log).
func TestAPIWatchOutlivesTheRequestTimeout(t *testing.T) {
	t.Parallel()
	var watches atomic.Int64
	cfg := rest.CopyConfig(admin(t))
	cfg.Timeout = time.Second
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			if r.URL.Query().Get("watch") == "true" {
				watches.Add(1)
			}
			return rt.RoundTrip(r)
		})
	}
	d := open(t, cfg)
	if err := d.WatchWorkloads(func(compute.AgentRef) {}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for watches.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no watch request in a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(5 * time.Second) // five request timeouts
	if n := watches.Load(); n != 1 {
		t.Errorf("%d watch requests in 5 s with a 1 s request timeout; want the first one, still open", n)
	}
}

// TestAPIWatchedPodsAreNotListed: a driver that watches reads its gateway
// Pods from the watch: a pass over an Agent whose Pod cannot be placed
// finds it so without listing Pods.
func TestAPIWatchedPodsAreNotListed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := rest.CopyConfig(admin(t))
	var lists atomic.Int64
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
			if r.Method == http.MethodGet && len(parts) == 5 && parts[2] == "namespaces" && parts[4] == "pods" && r.URL.Query().Get("watch") != "true" {
				lists.Add(1)
			}
			return rt.RoundTrip(r)
		})
	}
	d := open(t, cfg, func(o *kubernetes.Options) { o.PodStartWait = time.Second })
	if err := d.WatchWorkloads(func(compute.AgentRef) {}); err != nil {
		t.Fatal(err)
	}
	rev := newRevision()
	ensure(t, d, rev.NamespaceID)
	if r, err := d.PrepareRevision(ctx, specOf(rev, 1)); err != nil || r.PendingReason != occ.PendingGatewayStarting {
		t.Fatalf("first pass, no Pod (the API lane has no controllers): %+v, %v", r, err)
	}
	// The Pod the Deployment asks for, made by hand, which no node takes.
	cs, ns := clientset(t, cfg), kubernetes.NamespaceName(rev.NamespaceID)
	dep, err := cs.AppsV1().Deployments(ns).Get(ctx, kubernetes.GatewayName(rev.AgentID), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tpl := dep.Spec.Template
	tpl.ObjectMeta.Name = "gateway-by-hand"
	p, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: tpl.ObjectMeta, Spec: tpl.Spec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for kubernetes.WatchedPods(d, rev.AgentRef, rev.RevisionID) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the watch did not hold the Pod in a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
	lists.Store(0)
	r, err := d.PrepareRevision(ctx, specOf(rev, 1))
	if err != nil || r.PendingReason != occ.PendingWorkloadUnschedulable {
		t.Fatalf("pass over an unplaceable Pod: %+v, %v; want %s", r, err, occ.PendingWorkloadUnschedulable)
	}
	if n := lists.Load(); n != 0 {
		t.Errorf("the pass listed Pods %d times; the watch holds them", n)
	}
}
