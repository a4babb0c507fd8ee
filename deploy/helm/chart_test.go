// Package helm_test checks the Helm chart of occ (deploy/helm/occ) with the
// pinned helm (built by scripts/kube-assets) and a real kube-apiserver
// (internal/compute/kubernetes/kubetest): helm lint, helm template with
// every required value missing in turn, the rendered occ.yaml loaded by
// occ's own configuration loader, every rendered object created with
// server-side dry-run and strict field validation in a namespace that
// enforces the restricted Pod Security Standard (no warning allowed), and
// the chart's RBAC granting the driver's preflight, which fails without it.
package helm_test

import (
	"bytes"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/openclaw/occ/internal/compute/kubernetes"
	"github.com/openclaw/occ/internal/compute/kubernetes/kubetest"
	"github.com/openclaw/occ/internal/config"
)

const (
	chart     = "occ"
	namespace = "occ-system"
	gwImage   = "registry.example.com/occ/openclaw-gateway@sha256:2222222222222222222222222222222222222222222222222222222222222222"
)

// values are what an installation must give; each is required.
var values = map[string]string{
	"image.repository":             "registry.example.com/occ/occ",
	"image.digest":                 "sha256:1111111111111111111111111111111111111111111111111111111111111111",
	"publicOrigin":                 "https://occ.example.com",
	"database.existingSecret":      "occ-database",
	"secretsKeyset.existingSecret": "occ-keyset",
	"compute.gatewayImage":         gwImage,
}

// helm runs the pinned helm in this directory with its own empty home.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(kubetest.Asset(t, "helm"), args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// setArgs turns values (minus the keys in skip) and extra into --set flags.
func setArgs(skip string, extra ...string) []string {
	var args []string
	for k, v := range values {
		if k != skip {
			args = append(args, "--set", k+"="+v)
		}
	}
	for _, e := range extra {
		args = append(args, "--set", e)
	}
	return args
}

// render runs helm template and returns the objects.
func render(t *testing.T, extra ...string) []*unstructured.Unstructured {
	t.Helper()
	out, err := helm(t, append([]string{"template", "occ", chart, "--namespace", namespace}, setArgs("", extra...)...)...)
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	objs, err := kubetest.ParseManifests(out)
	if err != nil {
		t.Fatalf("rendered YAML: %v", err)
	}
	return objs
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s rendered", kind, name)
	return nil
}

func TestHelmLint(t *testing.T) {
	t.Parallel()
	out, err := helm(t, append([]string{"lint", chart}, setArgs("")...)...)
	if err != nil || !strings.Contains(out, "1 chart(s) linted, 0 chart(s) failed") {
		t.Fatalf("helm lint: %v\n%s", err, out)
	}
}

// TestHelmRequiredValues: without any one required value the chart does
// not render, and the error names the value.
func TestHelmRequiredValues(t *testing.T) {
	t.Parallel()
	for k := range values {
		if k == "image.digest" {
			continue // a tag instead of a digest is allowed; tested below
		}
		out, err := helm(t, append([]string{"template", "occ", chart}, setArgs(k)...)...)
		if err == nil || !strings.Contains(out, k+" is required") {
			t.Errorf("without %s: %v\n%s", k, err, out)
		}
	}
	out, err := helm(t, append([]string{"template", "occ", chart}, setArgs("image.digest")...)...)
	if err == nil || !strings.Contains(out, "image.digest (preferred) or image.tag is required") {
		t.Errorf("without image.digest or tag: %v\n%s", err, out)
	}
	// A key of no Secret is refused, not ignored.
	out, err = helm(t, append([]string{"template", "occ", chart}, setArgs("", "bootstrap.apiKeyKey=api-key")...)...)
	if err == nil || !strings.Contains(out, "bootstrap.apiKeyKey needs bootstrap.existingSecret") {
		t.Errorf("bootstrap.apiKeyKey without bootstrap.existingSecret: %v\n%s", err, out)
	}
}

// TestHelmRendered: the roles, replicas, probes, Secrets and configuration
// the chart renders, the configuration accepted by occ itself, and the
// ClusterRole equal to the driver's rules.
func TestHelmRendered(t *testing.T) {
	t.Parallel()
	objs := render(t)
	image := values["image.repository"] + "@" + values["image.digest"]
	for role, replicas := range map[string]int64{"api": 2, "worker": 1} {
		d := find(t, objs, "Deployment", "occ-"+role)
		if n, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas"); n != replicas {
			t.Errorf("%s replicas %d, want %d", role, n, replicas)
		}
		containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		c := containers[0].(map[string]any)
		args, _, _ := unstructured.NestedStringSlice(c, "args")
		if !slices.Equal(args, []string{"serve", "--config", "/etc/occ/occ.yaml", "--role", role}) || c["image"] != image {
			t.Errorf("%s container args %q image %v", role, args, c["image"])
		}
		env, _, _ := unstructured.NestedSlice(c, "env")
		if len(env) != 1 || env[0].(map[string]any)["name"] != "OCC_DATABASE_URL" {
			t.Errorf("%s env %v, want only OCC_DATABASE_URL", role, env)
		}
		if ref, _, _ := unstructured.NestedString(env[0].(map[string]any), "valueFrom", "secretKeyRef", "name"); ref != values["database.existingSecret"] {
			t.Errorf("%s database URL from %q", role, ref)
		}
		for _, probe := range []string{"startupProbe", "livenessProbe", "readinessProbe"} {
			var got string
			if role == "api" {
				got, _, _ = unstructured.NestedString(c, probe, "httpGet", "path")
			} else {
				cmd, _, _ := unstructured.NestedStringSlice(c, probe, "exec", "command")
				got = strings.Join(cmd, " ")
			}
			want := map[string]string{"api": "/healthz", "worker": "/usr/local/bin/occ healthcheck http://127.0.0.1:9090/healthz"}[role]
			if probe == "readinessProbe" {
				want = strings.Replace(want, "/healthz", "/readyz", 1)
			}
			if got != want {
				t.Errorf("%s %s: %q, want %q", role, probe, got, want)
			}
		}
		inits, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "initContainers")
		initArgs, _, _ := unstructured.NestedStringSlice(inits[0].(map[string]any), "args")
		if !slices.Equal(initArgs[:2], []string{"secrets", "import-keyset"}) {
			t.Errorf("%s init container args %q", role, initArgs)
		}
	}

	// The first administrator's password, when given, only from its Secret.
	d := find(t, render(t, "bootstrap.existingSecret=occ-bootstrap"), "Deployment", "occ-api")
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	env, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "env")
	if len(env) != 2 || env[1].(map[string]any)["name"] != "OCC_BOOTSTRAP_ADMIN_PASSWORD" {
		t.Errorf("with bootstrap.existingSecret, env %v", env)
	} else if ref, _, _ := unstructured.NestedString(env[1].(map[string]any), "valueFrom", "secretKeyRef", "name"); ref != "occ-bootstrap" {
		t.Errorf("bootstrap password from %q", ref)
	}
	// And the bootstrap service key, when its key is named too.
	d = find(t, render(t, "bootstrap.existingSecret=occ-bootstrap", "bootstrap.apiKeyKey=api-key"), "Deployment", "occ-api")
	containers, _, _ = unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	env, _, _ = unstructured.NestedSlice(containers[0].(map[string]any), "env")
	if len(env) != 3 || env[2].(map[string]any)["name"] != "OCC_BOOTSTRAP_API_KEY" {
		t.Errorf("with bootstrap.apiKeyKey, env %v", env)
	} else if ref, _, _ := unstructured.NestedMap(env[2].(map[string]any), "valueFrom", "secretKeyRef"); ref["name"] != "occ-bootstrap" || ref["key"] != "api-key" {
		t.Errorf("bootstrap service key from %v", ref)
	}

	// occ's own loader accepts the rendered configuration, with the
	// database URL the Secret gives.
	cm := find(t, objs, "ConfigMap", "occ")
	yml, _, _ := unstructured.NestedString(cm.Object, "data", "occ.yaml")
	path := filepath.Join(t.TempDir(), "occ.yaml")
	if err := os.WriteFile(path, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.Source{File: path, Env: []string{"OCC_DATABASE_URL=postgres://occ:pw@db.example.com:5432/occ"}})
	if err != nil {
		t.Fatalf("occ rejects the rendered occ.yaml: %v\n%s", err, yml)
	}
	k := cfg.Compute.Kubernetes
	if cfg.Compute.Driver != "kubernetes" || !k.InCluster || k.EndpointAccess != kubernetes.EndpointService || k.Images.Gateway != gwImage ||
		!k.Images.RequireImmutableDigest || k.GatewayClients.Namespace != namespace || cfg.Metrics.Listen != "127.0.0.1:9090" ||
		cfg.Secrets.KeysetFile != "/var/lib/occ/secrets.keyset" {
		t.Errorf("loaded configuration %+v", cfg)
	}
	if _, err := config.Load(config.Source{File: path, Env: []string{"OCC_DATABASE_URL=postgres://occ:pw@db.example.com:5432/occ"},
		Flags: map[string]string{"compute.kubernetes.images.gateway": "registry.example.com/gw:latest"}}); err == nil {
		t.Error("a gateway image by tag was accepted although requireImmutableDigest is on")
	}

	// Exactly the driver's permissions.
	var role rbacv1.ClusterRole
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(find(t, objs, "ClusterRole", "occ-compute").Object, &role); err != nil {
		t.Fatal(err)
	}
	if want := kubernetes.Rules(kubernetes.EndpointService); !slices.EqualFunc(role.Rules, want, func(a, b rbacv1.PolicyRule) bool {
		return slices.Equal(a.APIGroups, b.APIGroups) && slices.Equal(a.Resources, b.Resources) && slices.Equal(a.Verbs, b.Verbs) &&
			len(a.ResourceNames) == 0 && len(a.NonResourceURLs) == 0
	}) {
		t.Errorf("ClusterRole rules %+v, want kubernetes.Rules(service) %+v", role.Rules, want)
	}
}

// warnings collects the API server's warnings (Pod Security's included).
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

// TestHelmServerDryRun: every rendered object is accepted by a real
// kube-apiserver (server-side dry-run, strict field validation) in a
// namespace enforcing the restricted Pod Security Standard, without a
// warning; then, applied for real, the chart's ServiceAccount passes the
// driver's preflight, and fails it without the chart's RBAC.
func TestHelmServerDryRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	objs := render(t)
	c := kubetest.Start(t)
	cfg := c.Config()
	w := &warnings{}
	cfg.WarningHandler = w
	cs, err := k8s.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	psa := map[string]string{}
	for _, mode := range []string{"enforce", "audit", "warn"} {
		psa["pod-security.kubernetes.io/"+mode] = "restricted"
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace, Labels: psa}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	resource, err := kubetest.Resources(cfg, namespace)
	if err != nil {
		t.Fatal(err)
	}
	create := func(o *unstructured.Unstructured, dryRun bool) error {
		ri, err := resource(o)
		if err != nil {
			return err
		}
		opts := metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		_, err = ri.Create(ctx, o, opts)
		return err
	}
	kinds := map[string]int{}
	for _, o := range objs {
		if err := create(o, true); err != nil {
			t.Errorf("%s %s refused: %v", o.GetKind(), o.GetName(), err)
		}
		kinds[o.GetKind()]++
	}
	want := map[string]int{"ServiceAccount": 1, "ClusterRole": 1, "ClusterRoleBinding": 1, "ConfigMap": 1, "Service": 1, "Deployment": 2}
	if !maps.Equal(kinds, want) {
		t.Errorf("rendered kinds %v, want %v", kinds, want)
	}
	w.mu.Lock()
	if len(w.msgs) > 0 {
		t.Errorf("the API server warned: %q", w.msgs)
	}
	w.mu.Unlock()
	// The check can fail: a Pod template that breaks the restricted
	// standard draws a warning.
	loose := find(t, objs, "Deployment", "occ-api").DeepCopy()
	containers, _, _ := unstructured.NestedSlice(loose.Object, "spec", "template", "spec", "containers")
	_ = unstructured.SetNestedField(containers[0].(map[string]any), true, "securityContext", "allowPrivilegeEscalation")
	_ = unstructured.SetNestedSlice(loose.Object, containers, "spec", "template", "spec", "containers")
	if err := create(loose, true); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	if len(w.msgs) != 1 || !strings.Contains(w.msgs[0], "allowPrivilegeEscalation") {
		t.Errorf("a template allowing privilege escalation drew the warnings %q", w.msgs)
	}
	w.mu.Unlock()
	// Dry-run kept nothing.
	if _, err := cs.AppsV1().Deployments(namespace).Get(ctx, "occ-api", metav1.GetOptions{}); err == nil {
		t.Error("a dry-run Deployment was stored")
	}
	// Strict validation is on: a field the API does not know is refused.
	bad := find(t, objs, "Service", "occ").DeepCopy()
	_ = unstructured.SetNestedField(bad.Object, "x", "spec", "notAField")
	if err := create(bad, true); err == nil || !strings.Contains(err.Error(), "notAField") {
		t.Errorf("unknown field: %v", err)
	}

	// The ServiceAccount, for real: without the chart's RBAC the driver's
	// preflight fails naming what is missing; with it, it passes.
	sa := find(t, objs, "ServiceAccount", "occ")
	if err := create(sa, false); err != nil {
		t.Fatal(err)
	}
	asSA := c.Config()
	asSA.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + namespace + ":occ",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}}
	preflight := func() error {
		d, err := kubernetes.New(kubernetes.Options{Config: asSA, GatewayImage: gwImage, GatewayPort: 8080,
			EndpointAccess: kubernetes.EndpointService, StateSize: "1Gi",
			GatewayResources:  kubernetes.Resources{RequestsCPU: "100m", RequestsMemory: "256Mi", LimitsCPU: "1", LimitsMemory: "1Gi"},
			ContainerDefaults: kubernetes.Resources{RequestsCPU: "50m", RequestsMemory: "64Mi", LimitsCPU: "1", LimitsMemory: "512Mi"},
			QuotaPods:         4, QuotaCPU: "8", QuotaMemory: "8Gi", PodStartWait: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		return d.Preflight(ctx)
	}
	if err := preflight(); err == nil || !strings.Contains(err.Error(), "create deployments.apps") {
		t.Fatalf("preflight without the chart's RBAC: %v, want the missing permissions named", err)
	}
	for _, kind := range []string{"ClusterRole", "ClusterRoleBinding"} {
		if err := create(find(t, objs, kind, "occ-compute"), false); err != nil {
			t.Fatal(err)
		}
	}
	// RBAC takes effect asynchronously in the authorizer's cache.
	var last error
	for i := 0; i < 100; i++ {
		if last = preflight(); last == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if last != nil {
		t.Fatalf("preflight with the chart's RBAC: %v", last)
	}
}
