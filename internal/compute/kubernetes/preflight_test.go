package kubernetes_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/rest"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/kubernetes"
	"github.com/openclaw/occ/internal/compute/kubernetes/kubetest"
	"github.com/openclaw/occ/internal/occ"
)

func connect(t *testing.T, path string) *rest.Config {
	t.Helper()
	cfg, err := kubernetes.Connect(kubernetes.Connection{Kubeconfig: path, Context: kubetest.ContextName, Timeout: 30e9})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func preflight(t *testing.T, cfg *rest.Config, edit ...func(*kubernetes.Options)) error {
	t.Helper()
	return open(t, cfg, edit...).Preflight(context.Background())
}

func testPreflight(t *testing.T, c *kubetest.Cluster) {
	ctx := context.Background()
	// Allowed: the admin's kubeconfig and context, through Connect.
	if err := preflight(t, connect(t, c.KubeconfigPath())); err != nil {
		t.Errorf("admin: %v", err)
	}

	// Denied: a user who may only manage namespaces lacks everything else,
	// and each missing permission is named.
	partial := connect(t, c.UserKubeconfig(t, "occ-partial", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"*"}}))
	err := preflight(t, partial)
	for _, want := range []string{"lacks cluster-wide permissions", "create deployments.apps", "patch networkpolicies.networking.k8s.io", "create pods/portforward", "deletecollection secrets"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("partial user: %v, want it to name %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "create namespaces") {
		t.Errorf("partial user: %v names a permission it has", err)
	}
	// With service access, pods/portforward is not needed; the rest is.
	if err := preflight(t, partial, func(o *kubernetes.Options) { o.EndpointAccess = kubernetes.EndpointService }); err == nil || strings.Contains(err.Error(), "portforward") {
		t.Errorf("partial user, service access: %v", err)
	}

	// Allowed: a user holding exactly kubernetes.Rules passes, and can run
	// the driver through a whole lifecycle.
	exact := connect(t, c.UserKubeconfig(t, "occ-exact", kubernetes.Rules(kubernetes.EndpointPortForward)...))
	if err := preflight(t, exact); err != nil {
		t.Fatalf("user with kubernetes.Rules: %v", err)
	}
	d := open(t, exact, func(o *kubernetes.Options) { o.TerminationTimeout = time.Second })
	rev := newRevision()
	ensure(t, d, rev.NamespaceID)
	if _, err := d.PrepareRevision(ctx, specOf(rev, 1)); err != nil {
		t.Fatal(err)
	}
	steps := []func() error{
		func() error { return d.ActivateRevision(ctx, rev) },
		func() error { return d.RetireRevision(ctx, rev) },
		func() error { return d.StopAgent(ctx, rev.AgentRef) },
		func() error { _, err := d.Diagnose(ctx, rev); return err },
		func() error { return d.DeleteAgent(ctx, rev.AgentRef) },
		func() error { _, err := d.DeleteNamespace(ctx, compute.NamespaceRef{ID: rev.NamespaceID}); return err },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d with kubernetes.Rules: %v", i+1, err)
		}
	}
	// A user without them meets a permanent KUBERNETES_ACCESS_DENIED at
	// run time (Preflight refuses to start first).
	none := connect(t, c.UserKubeconfig(t, "occ-none"))
	_, err = open(t, none).EnsureNamespace(ctx, compute.NamespaceRef{ID: occ.NewID(occ.PrefixNamespace)})
	wantCode(t, err, kubernetes.CodeAccessDenied)

	// Wrong credentials: a token the API server does not know.
	wrong := c.Config()
	wrong.CertData, wrong.KeyData, wrong.CertFile, wrong.KeyFile = nil, nil, "", ""
	wrong.BearerToken = "not-a-token"
	if err := preflight(t, wrong); err == nil || !strings.Contains(err.Error(), "refused occ's credentials") || !strings.Contains(err.Error(), "compute.kubernetes.kubeconfig") {
		t.Errorf("wrong credentials: %v", err)
	}

	// Unreachable: nothing listens.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	gone := c.Config()
	gone.Host = "https://127.0.0.1:" + strconv.Itoa(port)
	gone.Timeout = 5e9
	if err := preflight(t, gone); err == nil || !strings.Contains(err.Error(), "cannot reach the API server") || !strings.Contains(err.Error(), "compute.kubernetes.kubeconfig") {
		t.Errorf("unreachable: %v", err)
	}
}
