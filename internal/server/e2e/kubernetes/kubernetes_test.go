package kubernetes_test

import (
	"path/filepath"
	"testing"

	"github.com/openclaw/occ/internal/compute/kubernetes/kubetest"
	"github.com/openclaw/occ/internal/server/servertest"
)

// TestKubernetesDriverStart: --compute kubernetes starts only against an API
// server occ can reach with credentials holding every permission the driver
// needs; otherwise the refusal names the setting or the permissions.
func TestKubernetesDriverStart(t *testing.T) {
	t.Parallel()
	c := kubetest.Start(t)
	kube := func(kubeconfig string) []string {
		return []string{"OCC_COMPUTE=kubernetes", "OCC_COMPUTE_KUBERNETES_KUBECONFIG=" + kubeconfig,
			"OCC_COMPUTE_KUBERNETES_CONTEXT=" + kubetest.ContextName, "OCC_COMPUTE_KUBERNETES_IMAGES_GATEWAY=registry.example/openclaw:2026.9.6"}
	}
	tests := []struct {
		name string
		env  []string
		want string // "" starts
	}{
		{"missing kubeconfig", kube(filepath.Join(t.TempDir(), "none")), "compute.kubernetes.kubeconfig: "},
		{"no permissions", kube(c.UserKubeconfig(t, "occ-nobody")), "lacks cluster-wide permissions the driver needs: get namespaces"},
		{"admin", kube(c.KubeconfigPath()), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { servertest.WantStart(t, tt.want, tt.env...) })
	}
}
