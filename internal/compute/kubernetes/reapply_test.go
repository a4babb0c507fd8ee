package kubernetes_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/openclaw/occ/internal/compute/kubernetes"
)

func TestAPIReapply(t *testing.T) { t.Parallel(); testReapply(t, admin(t)) }

// testReapply: a second PrepareRevision that changes nothing writes
// nothing (every object keeps its resourceVersion), while a Deployment
// changed by someone else is applied again (and their field refused) and
// deleted objects are made again by the next one; EnsureNamespace
// re-creates a deleted NetworkPolicy.
func testReapply(t *testing.T, cfg *rest.Config) {
	ctx := context.Background()
	// Count the driver's applies (server-side apply is a PATCH).
	var applies atomic.Int64
	counted := rest.CopyConfig(cfg)
	counted.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPatch {
				applies.Add(1)
			}
			return rt.RoundTrip(r)
		})
	}
	d := open(t, counted)
	cs := clientset(t, cfg)
	rev := newRevision()
	ensure(t, d, rev.NamespaceID)
	ns, name := kubernetes.NamespaceName(rev.NamespaceID), kubernetes.GatewayName(rev.AgentID)
	core, deps := cs.CoreV1(), cs.AppsV1().Deployments(ns)
	if _, err := d.PrepareRevision(ctx, specOf(rev, 1)); err != nil {
		t.Fatal(err)
	}
	versions := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		add := func(kind string, o metav1.Object, err error) {
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			out[kind] = o.GetResourceVersion()
		}
		sa, err := core.ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
		add("serviceaccount", sa, err)
		svc, err := core.Services(ns).Get(ctx, name, metav1.GetOptions{})
		add("service", svc, err)
		env, err := core.Secrets(ns).Get(ctx, kubernetes.EnvSecretName(rev), metav1.GetOptions{})
		add("secret", env, err)
		dep, err := deps.Get(ctx, name, metav1.GetOptions{})
		add("deployment", dep, err)
		return out
	}
	before := versions()
	applies.Store(0)
	if _, err := d.PrepareRevision(ctx, specOf(rev, 1)); err != nil {
		t.Fatal(err)
	}
	if after := versions(); !maps.Equal(after, before) || applies.Load() != 0 {
		t.Errorf("an unchanged PrepareRevision applied %d objects: resourceVersions %v, then %v", applies.Load(), before, after)
	}

	// Another manager annotates the Deployment, as the Deployment
	// controller does with its revision (which also grows the Deployment's
	// generation): nothing occ applied changed, so nothing is applied.
	mark, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{"deployment.kubernetes.io/revision": "1"}}})
	if _, err := deps.Patch(ctx, name, types.MergePatchType, mark, metav1.PatchOptions{FieldManager: "kube-controller-manager"}); err != nil {
		t.Fatal(err)
	}
	applies.Store(0)
	if _, err := d.PrepareRevision(ctx, specOf(rev, 1)); err != nil {
		t.Fatal(err)
	}
	if applies.Load() != 0 {
		t.Errorf("PrepareRevision after another manager's annotation applied %d objects", applies.Load())
	}

	// Someone changes the Deployment's image: the next PrepareRevision
	// applies again and meets the other manager's field (a conflict, never
	// taken over), so the change is seen, not skipped.
	dep, err := deps.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dep.Spec.Template.Spec.Containers[0].Image = "registry.example/other:1"
	if _, err := deps.Update(ctx, dep, metav1.UpdateOptions{FieldManager: "someone"}); err != nil {
		t.Fatal(err)
	}
	_, err = d.PrepareRevision(ctx, specOf(rev, 1))
	wantCode(t, err, kubernetes.CodeOwnershipConflict)

	// Someone deletes the Service and the Deployment: the next
	// PrepareRevision makes them again.
	if err := core.Services(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := deps.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.PrepareRevision(ctx, specOf(rev, 1)); err != nil {
		t.Fatal(err)
	}
	svc, err := core.Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil || svc.Labels[kubernetes.LabelAgent] != rev.AgentID || len(svc.Spec.Ports) != 1 {
		t.Errorf("the deleted Service after PrepareRevision: %+v, %v", svc, err)
	}
	if dep, err := deps.Get(ctx, name, metav1.GetOptions{}); err != nil || dep.Spec.Template.Spec.Containers[0].Image != "registry.example/openclaw:2026.9.6" {
		t.Errorf("the deleted Deployment after PrepareRevision: %v", err)
	}

	// A deleted NetworkPolicy comes back with the next EnsureNamespace.
	pols := cs.NetworkingV1().NetworkPolicies(ns)
	if err := pols.Delete(ctx, kubernetes.PolicyAllowDNS, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ensure(t, d, rev.NamespaceID)
	if p, err := pols.Get(ctx, kubernetes.PolicyAllowDNS, metav1.GetOptions{}); err != nil || p.Labels[kubernetes.LabelManagedBy] != kubernetes.ManagedBy {
		t.Errorf("the deleted NetworkPolicy after EnsureNamespace: %+v, %v", p, err)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
