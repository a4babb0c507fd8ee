package kubetest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/openclaw/occ/internal/compute/kubernetes/kubetest"
)

// cluster is the API-only cluster the tests of this file share.
var cluster *kubetest.Cluster

func TestMain(m *testing.M) {
	var err error
	cluster, err = kubetest.New()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cluster.Stop()
	os.Exit(code)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// clientFor builds a client from a kubeconfig file, as the driver does.
func clientFor(t *testing.T, kubeconfig string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: kubetest.ContextName},
	).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func adminClient(t *testing.T) kubernetes.Interface {
	t.Helper()
	client, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func namespace(t *testing.T, client kubernetes.Interface, name string, labels map[string]string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := client.CoreV1().Namespaces().Create(ctx(t), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestVersionIsThePinnedRelease(t *testing.T) {
	v, err := clientFor(t, cluster.KubeconfigPath()).Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != "v1.37.2" || v.Major != "1" || v.Minor != "37" {
		t.Fatalf("/version = %s (major %q minor %q), want v1.37.2", v.GitVersion, v.Major, v.Minor)
	}
}

// canI asks the API server, as the client's user, whether it may do verb on
// resource in ns (a SelfSubjectAccessReview, as the driver's preflight does).
func canI(t *testing.T, client kubernetes.Interface, verb, resource, ns string) bool {
	t.Helper()
	review, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx(t), &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: verb, Resource: resource, Namespace: ns,
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return review.Status.Allowed
}

func TestUserHoldsOnlyItsRules(t *testing.T) {
	admin := adminClient(t)
	namespace(t, admin, "rbac-cluster", nil)
	reader := clientFor(t, cluster.UserKubeconfig(t, "pod-reader",
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}))

	if _, err := reader.CoreV1().Pods("rbac-cluster").List(ctx(t), metav1.ListOptions{}); err != nil {
		t.Fatalf("listing pods, which the user may: %v", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}
	_, err := reader.CoreV1().ConfigMaps("rbac-cluster").Create(ctx(t), cm, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("creating a ConfigMap, which the user may not: got %v, want Forbidden", err)
	}
	if !strings.Contains(err.Error(), `User "pod-reader" cannot create resource "configmaps"`) {
		t.Fatalf("the denial does not name the user and the verb: %v", err)
	}
	if !canI(t, reader, "list", "pods", "rbac-cluster") {
		t.Fatal("SelfSubjectAccessReview denies list pods, which the user may")
	}
	if canI(t, reader, "create", "pods", "rbac-cluster") {
		t.Fatal("SelfSubjectAccessReview allows create pods, which the user may not")
	}

	nobody := clientFor(t, cluster.UserKubeconfig(t, "nobody"))
	_, err = nobody.CoreV1().Pods("rbac-cluster").List(ctx(t), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("a user without rules listing pods: got %v, want Forbidden", err)
	}
}

func TestNamespacedUserIsDeniedElsewhere(t *testing.T) {
	admin := adminClient(t)
	namespace(t, admin, "rbac-mine", nil)
	namespace(t, admin, "rbac-other", nil)
	user := clientFor(t, cluster.NamespacedUserKubeconfig(t, "rbac-mine", "cm-writer",
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create", "get"}}))

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}
	if _, err := user.CoreV1().ConfigMaps("rbac-mine").Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a ConfigMap in its namespace: %v", err)
	}
	_, err := user.CoreV1().ConfigMaps("rbac-other").Create(ctx(t), cm, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("creating a ConfigMap in another namespace: got %v, want Forbidden", err)
	}
}

// TestPodSecurityAdmissionEnforces shows the default admission plugins run:
// a namespace enforcing the restricted Pod Security Standard refuses a
// privileged Pod.
func TestPodSecurityAdmissionEnforces(t *testing.T) {
	admin := adminClient(t)
	namespace(t, admin, "psa-restricted", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	// Without kube-controller-manager nobody creates the namespace's
	// "default" ServiceAccount, which the ServiceAccount admission plugin needs.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := admin.CoreV1().ServiceAccounts("psa-restricted").Create(ctx(t), sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	privileged := true
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "privileged"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Image: "example.invalid/x",
			SecurityContext: &corev1.SecurityContext{Privileged: &privileged},
		}}},
	}
	_, err := admin.CoreV1().Pods("psa-restricted").Create(ctx(t), pod, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "violates PodSecurity") {
		t.Fatalf("creating a privileged Pod in a restricted namespace: got %v, want Forbidden by PodSecurity", err)
	}
}

func TestMissingAssetsFailWithHowToBuildThem(t *testing.T) {
	t.Setenv(kubetest.AssetsEnv, "")
	t.Setenv(kubetest.PendingEnv, "") // no build beside the tests either
	_, err := kubetest.New()
	if err == nil || !strings.Contains(err.Error(), "scripts/kube-assets") || !strings.Contains(err.Error(), "scripts/test") {
		t.Fatalf("New without %s: got %v, want an error saying how to build the binaries", kubetest.AssetsEnv, err)
	}
	t.Setenv(kubetest.AssetsEnv, t.TempDir())
	_, err = kubetest.New()
	if err == nil || !strings.Contains(err.Error(), "kube-apiserver") || !strings.Contains(err.Error(), "scripts/kube-assets") {
		t.Fatalf("New with an empty %s: got %v, want an error naming the missing binaries", kubetest.AssetsEnv, err)
	}
}

func TestStopRemovesTheClusterDirectory(t *testing.T) {
	// A second cluster, stopped here: its processes end and its files go.
	c, err := kubetest.New()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(c.KubeconfigPath())
	c.Stop()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("after Stop, %s: %v, want it removed", dir, err)
	}
	client, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Discovery().ServerVersion(); err == nil {
		t.Fatal("the API server still answers after Stop")
	}
}
