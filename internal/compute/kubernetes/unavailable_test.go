package kubernetes_test

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/kubernetes"
)

// TestAPIServerUnavailable: while the API server cannot be reached, every
// call of the driver fails retryably and marked compute.ErrUnavailable
// (the worker then waits without spending attempts), never permanently;
// once it is back the same calls converge. The driver reaches the API
// server through a proxy that the test takes down and brings back.
func TestAPIServerUnavailable(t *testing.T) {
	t.Parallel()
	c := apiServer(t)
	p := c.StartProxy(t)
	d := open(t, p.Config(c))
	ctx := context.Background()
	rev := newRevision()
	ensure(t, d, rev.NamespaceID)

	p.Down()
	unavailable := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, compute.ErrUnavailable) || compute.PermanentCode(err) != "" {
			t.Errorf("%s with the API server down: %v; want a retryable error marked unavailable", what, err)
		}
	}
	_, err := d.PrepareRevision(ctx, specOf(rev, 1))
	unavailable("PrepareRevision", err)
	_, err = d.EnsureNamespace(ctx, compute.NamespaceRef{ID: rev.NamespaceID})
	unavailable("EnsureNamespace", err)
	unavailable("StopAgent", d.StopAgent(ctx, rev.AgentRef))
	unavailable("DeleteAgent", d.DeleteAgent(ctx, rev.AgentRef))
	_, err = d.DeleteNamespace(ctx, compute.NamespaceRef{ID: rev.NamespaceID})
	unavailable("DeleteNamespace", err)

	p.Up(t)
	if _, err := d.PrepareRevision(ctx, specOf(rev, 1)); err != nil {
		t.Fatalf("PrepareRevision once the API server is back: %v", err)
	}
	dep, err := clientset(t, c.Config()).AppsV1().Deployments(kubernetes.NamespaceName(rev.NamespaceID)).Get(ctx, kubernetes.GatewayName(rev.AgentID), metav1.GetOptions{})
	if err != nil || dep.Annotations[kubernetes.AnnotationRevisionID] != rev.RevisionID {
		t.Fatalf("gateway Deployment once the API server is back: %v, %v", dep.GetAnnotations(), err)
	}
}
