package kubernetes

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/openclaw/occ/internal/compute"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	gr := schema.GroupResource{Resource: "deployments"}
	terminating := apierrors.NewForbidden(gr, "x", errors.New("namespace is terminating"))
	terminating.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}
	tests := []struct {
		name string
		err  error
		code string // "" = retryable
		down bool   // marked compute.Unavailable
	}{
		{"400", apierrors.NewBadRequest("bad"), CodeRequestInvalid, false},
		{"422", apierrors.NewInvalid(schema.GroupKind{Kind: "Deployment"}, "x", nil), CodeRequestInvalid, false},
		{"401", apierrors.NewUnauthorized("who"), CodeAccessDenied, false},
		{"403", apierrors.NewForbidden(gr, "x", errors.New("no")), CodeAccessDenied, false},
		{"409 apply conflict", apierrors.NewConflict(gr, "x", errors.New("field managed by kubectl")), CodeOwnershipConflict, false},
		{"403 namespace terminating", terminating, "", false},
		{"429", apierrors.NewTooManyRequests("slow down", 1), "", true},
		{"500", apierrors.NewInternalError(errors.New("etcd")), "", true},
		{"503", apierrors.NewServiceUnavailable("later"), "", true},
		{"timeout", apierrors.NewTimeoutError("slow", 1), "", true},
		{"socket", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, "", true},
		{"refused", &url.Error{Op: "Get", URL: "https://127.0.0.1:1", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}, "", true},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), "", true},
		{"404", apierrors.NewNotFound(gr, "x"), "", false},
	}
	for _, tt := range tests {
		err := classify("apply deployment x", tt.err)
		if got := compute.PermanentCode(err); got != tt.code {
			t.Errorf("%s: code %q, want %q (%v)", tt.name, got, tt.code, err)
		}
		if got := errors.Is(err, compute.ErrUnavailable); got != tt.down {
			t.Errorf("%s: unavailable %v, want %v (%v)", tt.name, got, tt.down, err)
		}
		if !strings.Contains(err.Error(), "apply deployment x") {
			t.Errorf("%s: %v does not say what was attempted", tt.name, err)
		}
	}
	if classify("x", nil) != nil {
		t.Error("classify(nil) is not nil")
	}
}

func TestConnect(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "kubeconfig")
	kubeconfig := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u
  user: {token: "t0ken"}
contexts:
- name: occ
  context: {cluster: c, user: u}
current-context: occ
`
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Connect(Connection{Kubeconfig: path, Context: "occ", Timeout: 7e9})
	if err != nil || cfg.Host != "https://127.0.0.1:6443" || cfg.BearerToken != "t0ken" || cfg.Timeout != 7e9 {
		t.Fatalf("Connect = %+v, %v", cfg, err)
	}
	tests := []struct {
		c    Connection
		want string
	}{
		{Connection{}, "compute.kubernetes.kubeconfig: required"},
		{Connection{Kubeconfig: path}, "compute.kubernetes.context: required"},
		{Connection{Kubeconfig: path, Context: "prod"}, `compute.kubernetes.context: ` + path + ` has no context "prod"`},
		{Connection{Kubeconfig: filepath.Join(dir, "none"), Context: "occ"}, "compute.kubernetes.kubeconfig: " + filepath.Join(dir, "none") + " does not exist"},
		{Connection{InCluster: true, Kubeconfig: path, Context: "occ"}, "compute.kubernetes.inCluster: set either"},
		// Not in a Pod: no service account to fall back on.
		{Connection{InCluster: true}, "compute.kubernetes.inCluster: occ does not run in a Pod"},
	}
	for _, tt := range tests {
		if _, err := Connect(tt.c); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Connect(%+v) = %v, want an error starting %q", tt.c, err, tt.want)
		}
	}
}

// TestConnectHasNoAmbientFallback: KUBECONFIG and ~/.kube/config are never
// read when the settings name nothing.
func TestConnectHasNoAmbientFallback(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config")
	if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"+
		"users: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
	t.Setenv("HOME", dir)
	if cfg, err := Connect(Connection{}); err == nil {
		t.Fatalf("Connect with nothing named used %s", cfg.Host)
	}
}
