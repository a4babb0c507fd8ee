package kubernetes_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/kubernetes"
	"github.com/openclaw/occ/internal/occ"
)

// TestAPIWatchWorkloads: the driver reports the Agent of each gateway Pod
// that is added, changed or deleted, in any namespace, and nothing of a
// Pod without occ's labels; it watches once, until closed.
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
	pod := func(name string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: corev1.PodSpec{ServiceAccountName: "default", Containers: []corev1.Container{{Name: "gateway", Image: "registry.example/openclaw:2026.9.6"}}}}
	}
	rev := newRevision()
	// A Pod with every label but managed-by is not occ's.
	foreign := compute.AgentRef{NamespaceID: rev.NamespaceID, AgentID: occ.NewID(occ.PrefixAgent)}
	if _, err := pods.Create(ctx, pod("foreign", map[string]string{kubernetes.LabelNamespace: foreign.NamespaceID,
		kubernetes.LabelAgent: foreign.AgentID, kubernetes.LabelRole: kubernetes.RoleGateway}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := revisionLabels(rev)
	// Each step is reported: the count of the Agent's reports grows.
	step := func(what string, do func() error) {
		t.Helper()
		before := seen.of(rev.AgentRef)
		if err := do(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		deadline := time.Now().Add(time.Minute)
		for seen.of(rev.AgentRef) == before {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no change of the Agent reported in a minute", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	var p *corev1.Pod
	step("a gateway Pod added", func() (err error) {
		p, err = pods.Create(ctx, pod("gateway", labels), metav1.CreateOptions{})
		return err
	})
	step("a gateway Pod that became Ready", func() (err error) {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		p, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err
	})
	step("a gateway Pod deleted", func() error { return pods.Delete(ctx, p.Name, metav1.DeleteOptions{}) })
	if n := seen.of(foreign); n != 0 {
		t.Errorf("a Pod without occ's managed-by label was reported %d times", n)
	}

	// Closed, the driver reports nothing more: another Agent's Pod, seen
	// by the other driver's watch, was not reported by the closed one.
	d.Close()
	later := revisionLabels(newRevision())
	if _, err := pods.Create(ctx, pod("later", later), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	agent := compute.AgentRef{NamespaceID: later[kubernetes.LabelNamespace], AgentID: later[kubernetes.LabelAgent]}
	deadline := time.Now().Add(time.Minute)
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
