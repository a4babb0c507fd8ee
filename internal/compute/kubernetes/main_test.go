package kubernetes_test

import (
	"os"
	"sync"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/openclaw/occ/internal/compute/kubernetes/kubetest"
)

// The API lane: one etcd and kube-apiserver for the package's tests
// (started at the first test that needs it, stopped after the last).
var api struct {
	once sync.Once
	c    *kubetest.Cluster
	err  error
}

func apiServer(t *testing.T) *kubetest.Cluster {
	t.Helper()
	api.once.Do(func() { api.c, api.err = kubetest.New() })
	if api.err != nil {
		t.Fatal(api.err)
	}
	return api.c
}

func admin(t *testing.T) *rest.Config { return apiServer(t).Config() }

func TestMain(m *testing.M) {
	code := m.Run()
	if api.c != nil {
		api.c.Stop()
	}
	os.Exit(code)
}

func TestAPIEnsureNamespaceObjects(t *testing.T) {
	t.Parallel()
	testEnsureNamespaceObjects(t, admin(t))
}
func TestAPIForeignObjectsRefused(t *testing.T) { t.Parallel(); testForeignObjectsRefused(t, admin(t)) }
func TestAPIAgentObjects(t *testing.T)          { t.Parallel(); testAgentObjects(t, admin(t)) }
func TestAPILifecycle(t *testing.T)             { t.Parallel(); testLifecycle(t, admin(t)) }

func TestAPIPreflight(t *testing.T) { t.Parallel(); testPreflight(t, apiServer(t)) }
