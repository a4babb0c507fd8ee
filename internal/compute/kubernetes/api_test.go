package kubernetes_test

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/kubernetes"
	"github.com/openclaw/occ/internal/occ"
)

// canary is a secret value a revision's environment carries: it may be in
// the revision's Secret and nowhere else.
const canary = "sk-canary-9f2c41d7e0"

// options are the driver's options against cfg.
func options(cfg *rest.Config) kubernetes.Options {
	return kubernetes.Options{Config: cfg, GatewayImage: "registry.example/openclaw:2026.9.6", GatewayPort: 8080,
		EndpointAccess: kubernetes.EndpointPortForward, StateSize: "1Gi",
		GatewayResources:  kubernetes.Resources{RequestsCPU: "100m", RequestsMemory: "256Mi", LimitsCPU: "1", LimitsMemory: "1Gi"},
		ContainerDefaults: kubernetes.Resources{RequestsCPU: "50m", RequestsMemory: "64Mi", LimitsCPU: "1", LimitsMemory: "512Mi"},
		QuotaPods:         4, QuotaCPU: "8", QuotaMemory: "8Gi",
		// The API lane has no kube-controller-manager: no Pod ever comes.
		PodStartWait: -1}
}

func open(t *testing.T, cfg *rest.Config, edit ...func(*kubernetes.Options)) *kubernetes.Driver {
	t.Helper()
	o := options(cfg)
	for _, e := range edit {
		e(&o)
	}
	d, err := kubernetes.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func clientset(t *testing.T, cfg *rest.Config) *k8s.Clientset {
	t.Helper()
	cs, err := k8s.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func newRevision() compute.RevisionRef {
	return compute.RevisionRef{AgentRef: compute.AgentRef{NamespaceID: occ.NewID(occ.PrefixNamespace), AgentID: occ.NewID(occ.PrefixAgent)},
		RevisionID: occ.NewID(occ.PrefixRevision)}
}

func specOf(rev compute.RevisionRef, n int64) compute.RevisionSpec {
	return compute.RevisionSpec{RevisionRef: rev, Number: n, ExecutionMode: occ.ExecutionEmbedded,
		Document: map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": "openai/gpt-6"}}},
		Env:      map[string]string{"OPENAI_API_KEY": canary}}
}

func ensure(t *testing.T, d compute.Driver, nsID string) {
	t.Helper()
	o, err := d.EnsureNamespace(context.Background(), compute.NamespaceRef{ID: nsID})
	if err != nil || !o.Done {
		t.Fatalf("EnsureNamespace = %+v, %v", o, err)
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := compute.PermanentCode(err); got != code {
		t.Fatalf("error %v: code %q, want %q", err, got, code)
	}
}

// owned checks occ's ownership labels and ID annotations of an object.
func owned(t *testing.T, what string, m metav1.Object, ids map[string]string) {
	t.Helper()
	if m.GetLabels()[kubernetes.LabelManagedBy] != kubernetes.ManagedBy {
		t.Errorf("%s: labels %v lack %s=%s", what, m.GetLabels(), kubernetes.LabelManagedBy, kubernetes.ManagedBy)
	}
	for label, id := range ids {
		if m.GetLabels()[label] != id {
			t.Errorf("%s: label %s = %q, want the raw ID %q", what, label, m.GetLabels()[label], id)
		}
	}
	applied := false
	for _, f := range m.GetManagedFields() {
		if f.Manager == kubernetes.FieldManager {
			applied = true
		}
	}
	if !applied {
		t.Errorf("%s: not written by field manager %s: %v", what, kubernetes.FieldManager, m.GetManagedFields())
	}
}

func testEnsureNamespaceObjects(t *testing.T, cfg *rest.Config) {
	d, cs, ctx := open(t, cfg), clientset(t, cfg), context.Background()
	nsID := occ.NewID(occ.PrefixNamespace)
	ensure(t, d, nsID)
	name := kubernetes.NamespaceName(nsID)
	ns, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{kubernetes.LabelNamespace: nsID}
	owned(t, "namespace", ns, ids)
	for _, mode := range []string{"enforce", "audit", "warn"} {
		if v := ns.Labels["pod-security.kubernetes.io/"+mode]; v != "restricted" {
			t.Errorf("Pod Security %s = %q, want restricted", mode, v)
		}
	}
	q, err := cs.CoreV1().ResourceQuotas(name).Get(ctx, kubernetes.QuotaName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owned(t, "resourcequota", q, ids)
	if p := q.Spec.Hard[corev1.ResourcePods]; p.Value() != 4 {
		t.Errorf("quota pods %v", q.Spec.Hard)
	}
	lr, err := cs.CoreV1().LimitRanges(name).Get(ctx, kubernetes.LimitRangeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owned(t, "limitrange", lr, ids)
	if lr.Spec.Limits[0].Default.Memory().String() != "512Mi" {
		t.Errorf("limit range %+v", lr.Spec.Limits)
	}
	pols, err := cs.NetworkingV1().NetworkPolicies(name).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]networkingv1.NetworkPolicy{}
	for _, p := range pols.Items {
		owned(t, "networkpolicy "+p.Name, &p, ids)
		byName[p.Name] = p
	}
	deny, ok := byName[kubernetes.PolicyDenyAll]
	if !ok || len(deny.Spec.PolicyTypes) != 2 || len(deny.Spec.Ingress)+len(deny.Spec.Egress) != 0 || len(deny.Spec.PodSelector.MatchLabels) != 0 {
		t.Errorf("default deny: %+v", deny.Spec)
	}
	if dns, ok := byName[kubernetes.PolicyAllowDNS]; !ok || len(dns.Spec.Egress) != 1 || len(dns.Spec.Egress[0].Ports) != 4 {
		t.Errorf("allow-dns: %+v", dns.Spec)
	}
	if _, ok := byName[kubernetes.PolicyGatewayInput]; ok || len(byName) != 3 {
		t.Errorf("policies %v: want deny, dns and gateway egress only without gateway clients", pols.Items)
	}

	// Idempotent: a second call changes nothing.
	before := ns.ResourceVersion
	ensure(t, d, nsID)
	if ns, _ := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{}); ns.ResourceVersion != before {
		t.Errorf("a second EnsureNamespace rewrote the namespace (%s -> %s)", before, ns.ResourceVersion)
	}

	// With gateway clients, the gateway port is open to them only.
	d2 := open(t, cfg, func(o *kubernetes.Options) {
		o.EndpointAccess = kubernetes.EndpointService
		o.GatewayClients = kubernetes.Peer{Namespace: "occ-system", PodLabels: map[string]string{"app.kubernetes.io/name": "occ"}}
	})
	ensure(t, d2, nsID)
	in, err := cs.NetworkingV1().NetworkPolicies(name).Get(ctx, kubernetes.PolicyGatewayInput, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	from := in.Spec.Ingress[0].From[0]
	if in.Spec.PodSelector.MatchLabels[kubernetes.LabelRole] != kubernetes.RoleGateway ||
		from.NamespaceSelector.MatchLabels[corev1.LabelMetadataName] != "occ-system" || from.PodSelector.MatchLabels["app.kubernetes.io/name"] != "occ" {
		t.Errorf("gateway ingress %+v", in.Spec)
	}
}

func testForeignObjectsRefused(t *testing.T, cfg *rest.Config) {
	d, cs, ctx := open(t, cfg), clientset(t, cfg), context.Background()

	// A namespace of occ's name that occ did not create.
	nsID := occ.NewID(occ.PrefixNamespace)
	name := kubernetes.NamespaceName(nsID)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": "other"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := d.EnsureNamespace(ctx, compute.NamespaceRef{ID: nsID})
	wantCode(t, err, kubernetes.CodeOwnershipConflict)
	_, err = d.DeleteNamespace(ctx, compute.NamespaceRef{ID: nsID})
	wantCode(t, err, kubernetes.CodeOwnershipConflict)
	ns, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil || ns.DeletionTimestamp != nil || len(ns.Labels) != 2 || ns.Labels["team"] != "other" {
		t.Errorf("the foreign namespace was touched: %+v, %v", ns, err)
	}
	rev := newRevision()
	rev.NamespaceID = nsID
	_, err = d.PrepareRevision(ctx, specOf(rev, 1))
	wantCode(t, err, kubernetes.CodeOwnershipConflict)

	// A foreign object under the name of an Agent's Service, in occ's own
	// namespace.
	rev = newRevision()
	ensure(t, d, rev.NamespaceID)
	svcs := cs.CoreV1().Services(kubernetes.NamespaceName(rev.NamespaceID))
	foreign := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: kubernetes.GatewayName(rev.AgentID)},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := svcs.Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = d.PrepareRevision(ctx, specOf(rev, 1))
	wantCode(t, err, kubernetes.CodeOwnershipConflict)
	if err := d.DeleteAgent(ctx, rev.AgentRef); compute.PermanentCode(err) != kubernetes.CodeOwnershipConflict {
		t.Errorf("DeleteAgent over a foreign Service: %v", err)
	}
	if s, err := svcs.Get(ctx, foreign.Name, metav1.GetOptions{}); err != nil || s.Spec.Ports[0].Port != 80 || len(s.Labels) != 0 {
		t.Errorf("the foreign Service was changed: %+v, %v", s, err)
	}

	// A foreign object under the name of each object occ creates rather
	// than applies on a first pass (the transport Secret, the state claim,
	// the revision's ConfigMap): refused, untouched.
	for _, kind := range []string{"secret", "claim", "configmap"} {
		rev := newRevision()
		ensure(t, d, rev.NamespaceID)
		core, meta := cs.CoreV1(), metav1.ObjectMeta{Labels: map[string]string{"team": "other"}}
		ns := kubernetes.NamespaceName(rev.NamespaceID)
		var read func() (metav1.Object, error)
		switch kind {
		case "secret":
			meta.Name = kubernetes.TransportSecretName(rev.AgentID)
			_, err = core.Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: meta, Data: map[string][]byte{kubernetes.TokenKey: []byte("theirs")}}, metav1.CreateOptions{})
			read = func() (metav1.Object, error) { return core.Secrets(ns).Get(ctx, meta.Name, metav1.GetOptions{}) }
		case "claim":
			meta.Name = kubernetes.StateClaimName(rev.AgentID)
			_, err = core.PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: meta, Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}}}}, metav1.CreateOptions{})
			read = func() (metav1.Object, error) {
				return core.PersistentVolumeClaims(ns).Get(ctx, meta.Name, metav1.GetOptions{})
			}
		case "configmap":
			meta.Name = kubernetes.ConfigMapName(rev)
			_, err = core.ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta}, metav1.CreateOptions{})
			read = func() (metav1.Object, error) { return core.ConfigMaps(ns).Get(ctx, meta.Name, metav1.GetOptions{}) }
		}
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.PrepareRevision(ctx, specOf(rev, 1))
		wantCode(t, err, kubernetes.CodeOwnershipConflict)
		if o, err := read(); err != nil || len(o.GetLabels()) != 1 || o.GetLabels()["team"] != "other" || len(o.GetManagedFields()) != 1 {
			t.Errorf("the foreign %s was changed: labels %v, fields %v, %v", kind, o.GetLabels(), o.GetManagedFields(), err)
		}
	}

	// A foreign policy under one of occ's names.
	nsID = occ.NewID(occ.PrefixNamespace)
	ensure(t, d, nsID)
	pols := cs.NetworkingV1().NetworkPolicies(kubernetes.NamespaceName(nsID))
	if err := pols.Delete(ctx, kubernetes.PolicyAllowDNS, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pols.Create(ctx, &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: kubernetes.PolicyAllowDNS},
		Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
			Egress: []networkingv1.NetworkPolicyEgressRule{{}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = d.EnsureNamespace(ctx, compute.NamespaceRef{ID: nsID})
	wantCode(t, err, kubernetes.CodeOwnershipConflict)
}

// objectsOf lists what is in a tenant namespace, as JSON per object.
func objectsOf(t *testing.T, cs *k8s.Clientset, ns string) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	out := map[string][]byte{}
	add := func(kind string, list any, err error) {
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(list)
		var items struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(b, &items); err != nil {
			t.Fatal(err)
		}
		for _, it := range items.Items {
			var m struct {
				Metadata struct{ Name string } `json:"metadata"`
			}
			_ = json.Unmarshal(it, &m)
			out[kind+"/"+m.Metadata.Name] = it
		}
	}
	l1, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	add("deployment", l1, err)
	l2, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	add("configmap", l2, err)
	l3, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	add("secret", l3, err)
	l4, err := cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	add("service", l4, err)
	l5, err := cs.CoreV1().ServiceAccounts(ns).List(ctx, metav1.ListOptions{})
	add("serviceaccount", l5, err)
	l6, err := cs.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	add("persistentvolumeclaim", l6, err)
	l7, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	add("pod", l7, err)
	return out
}

func testAgentObjects(t *testing.T, cfg *rest.Config) {
	d, cs, ctx := open(t, cfg), clientset(t, cfg), context.Background()
	rev := newRevision()
	ensure(t, d, rev.NamespaceID)
	r, err := d.PrepareRevision(ctx, specOf(rev, 1))
	if err != nil || r.Ready || r.PendingReason != occ.PendingGatewayStarting {
		t.Fatalf("PrepareRevision = %+v, %v; want pending %s (no Pod yet)", r, err, occ.PendingGatewayStarting)
	}
	ns := kubernetes.NamespaceName(rev.NamespaceID)
	agentIDs := map[string]string{kubernetes.LabelNamespace: rev.NamespaceID, kubernetes.LabelAgent: rev.AgentID}
	revIDs := map[string]string{kubernetes.LabelNamespace: rev.NamespaceID, kubernetes.LabelAgent: rev.AgentID, kubernetes.LabelRevision: rev.RevisionID}

	sa, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, kubernetes.GatewayName(rev.AgentID), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owned(t, "serviceaccount", sa, agentIDs)
	if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
		t.Errorf("serviceaccount automount %v", sa.AutomountServiceAccountToken)
	}
	pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, kubernetes.StateClaimName(rev.AgentID), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owned(t, "pvc", pvc, agentIDs)
	if pvc.Spec.Resources.Requests.Storage().String() != "1Gi" || pvc.Spec.AccessModes[0] != corev1.ReadWriteOnce {
		t.Errorf("pvc spec %+v", pvc.Spec)
	}
	transport, err := cs.CoreV1().Secrets(ns).Get(ctx, kubernetes.TransportSecretName(rev.AgentID), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owned(t, "transport secret", transport, agentIDs)
	token := string(transport.Data[kubernetes.TokenKey])
	if len(token) != 64 {
		t.Errorf("gateway token of %d characters", len(token))
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, kubernetes.ConfigMapName(rev), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owned(t, "configmap", cm, revIDs)
	var doc struct {
		Gateway struct {
			Bind string `json:"bind"`
			Port int    `json:"port"`
			Auth struct {
				Mode string `json:"mode"`
			} `json:"auth"`
		} `json:"gateway"`
	}
	if cm.Immutable == nil || !*cm.Immutable || json.Unmarshal([]byte(cm.Data["openclaw.json"]), &doc) != nil ||
		doc.Gateway.Bind != "loopback" || doc.Gateway.Port != 8080 || doc.Gateway.Auth.Mode != "token" {
		t.Errorf("configmap %v: %+v", cm.Immutable, doc)
	}
	env, err := cs.CoreV1().Secrets(ns).Get(ctx, kubernetes.EnvSecretName(rev), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owned(t, "env secret", env, revIDs)
	if string(env.Data["OPENAI_API_KEY"]) != canary {
		t.Errorf("env secret data %v", env.Data)
	}
	svc, err := cs.CoreV1().Services(ns).Get(ctx, kubernetes.GatewayName(rev.AgentID), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owned(t, "service", svc, agentIDs)
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.Selector[kubernetes.LabelAgent] != rev.AgentID || svc.Spec.Ports[0].Port != 8080 {
		t.Errorf("service %+v", svc.Spec)
	}
	dep, err := cs.AppsV1().Deployments(ns).Get(ctx, kubernetes.GatewayName(rev.AgentID), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owned(t, "deployment", dep, agentIDs)
	checkDeployment(t, dep, rev)

	// No secret value in any ConfigMap, annotation or Pod spec: only the
	// revision's Secret and the transport Secret hold secrets.
	for where, b := range objectsOf(t, cs, ns) {
		if strings.HasPrefix(where, "secret/") {
			continue
		}
		if strings.Contains(string(b), canary) || strings.Contains(string(b), token) {
			t.Errorf("%s carries a secret value", where)
		}
	}
	for where, b := range objectsOf(t, cs, ns) {
		if strings.HasPrefix(where, "secret/") && where != "secret/"+kubernetes.EnvSecretName(rev) && strings.Contains(string(b), canary) {
			t.Errorf("%s carries the revision's secret", where)
		}
	}

	// Idempotent: a second call rewrites nothing.
	before := resourceVersions(t, cs, ns)
	if _, err := d.PrepareRevision(ctx, specOf(rev, 1)); err != nil {
		t.Fatal(err)
	}
	if after := resourceVersions(t, cs, ns); !maps.Equal(before, after) {
		t.Errorf("a second PrepareRevision rewrote objects:\n%v\n%v", before, after)
	}
	// Diagnose without a Pod: every check unknown; no endpoint.
	dg, err := d.Diagnose(ctx, rev)
	if err != nil || dg.RevisionID != rev.RevisionID || len(dg.Checks) == 0 {
		t.Fatalf("Diagnose = %+v, %v", dg, err)
	}
	for _, c := range dg.Checks {
		if c.Status != "unknown" || c.Code != kubernetes.CodeUnavailable || c.Message == "" {
			t.Errorf("check without a Pod: %+v, want unknown", c)
		}
	}
	if ep, ok := d.GatewayEndpoint(ctx, rev.AgentRef); ok {
		t.Errorf("endpoint %+v without a Pod", ep)
	}
}

func checkDeployment(t *testing.T, dep *appsv1.Deployment, rev compute.RevisionRef) {
	t.Helper()
	if *dep.Spec.Replicas != 1 || dep.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType || dep.Annotations[kubernetes.AnnotationRevisionID] != rev.RevisionID {
		t.Errorf("deployment replicas %d strategy %s annotations %v", *dep.Spec.Replicas, dep.Spec.Strategy.Type, dep.Annotations)
	}
	pod := dep.Spec.Template
	if pod.Labels[kubernetes.LabelRevision] != rev.RevisionID || pod.Labels[kubernetes.LabelAgent] != rev.AgentID || pod.Labels[kubernetes.LabelNamespace] != rev.NamespaceID {
		t.Errorf("pod labels %v", pod.Labels)
	}
	ps := pod.Spec
	if *ps.AutomountServiceAccountToken || !*ps.SecurityContext.RunAsNonRoot || ps.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod spec security %+v", ps.SecurityContext)
	}
	c := ps.Containers[0]
	sc := c.SecurityContext
	if !*sc.RunAsNonRoot || *sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem || sc.Capabilities.Drop[0] != "ALL" ||
		sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("container security %+v", sc)
	}
	refs := 0
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			refs++
		}
	}
	if refs != 2 {
		t.Errorf("%d secretKeyRef variables, want the token and OPENAI_API_KEY", refs)
	}
}

func resourceVersions(t *testing.T, cs *k8s.Clientset, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for where, b := range objectsOf(t, cs, ns) {
		var m struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(b, &m)
		out[where] = m.Metadata.ResourceVersion
	}
	return out
}

func testLifecycle(t *testing.T, cfg *rest.Config) {
	d, cs, ctx := open(t, cfg, func(o *kubernetes.Options) { o.TerminationTimeout = time.Second }), clientset(t, cfg), context.Background()
	rev1 := newRevision()
	ns := kubernetes.NamespaceName(rev1.NamespaceID)
	ensure(t, d, rev1.NamespaceID)
	deps := cs.AppsV1().Deployments(ns)
	depName := kubernetes.GatewayName(rev1.AgentID)
	if err := d.ActivateRevision(ctx, rev1); err == nil {
		t.Error("ActivateRevision of a revision never prepared succeeded")
	}
	if _, err := d.PrepareRevision(ctx, specOf(rev1, 1)); err != nil {
		t.Fatal(err)
	}
	prepared, _ := deps.Get(ctx, depName, metav1.GetOptions{})
	for range 2 {
		if err := d.ActivateRevision(ctx, rev1); err != nil {
			t.Fatal(err)
		}
	}
	dep, _ := deps.Get(ctx, depName, metav1.GetOptions{})
	if dep.Annotations[kubernetes.AnnotationActiveRevision] != rev1.RevisionID {
		t.Errorf("active annotation %v", dep.Annotations)
	}
	// Activation changes no field of the spec (the Pod is not made again).
	if !apiequality.Semantic.DeepEqual(dep.Spec, prepared.Spec) {
		t.Errorf("activation changed the gateway's spec:\n%+v\n%+v", prepared.Spec, dep.Spec)
	}
	// Preparing the same revision again keeps it active.
	if _, err := d.PrepareRevision(ctx, specOf(rev1, 1)); err != nil {
		t.Fatal(err)
	}
	if dep, _ := deps.Get(ctx, depName, metav1.GetOptions{}); dep.Annotations[kubernetes.AnnotationActiveRevision] != rev1.RevisionID {
		t.Errorf("re-preparing the active revision dropped the mark: %v", dep.Annotations)
	}

	// A second revision replaces the first; the first's objects stay until
	// it is retired.
	rev2 := rev1
	rev2.RevisionID = occ.NewID(occ.PrefixRevision)
	if _, err := d.PrepareRevision(ctx, specOf(rev2, 2)); err != nil {
		t.Fatal(err)
	}
	dep, _ = deps.Get(ctx, depName, metav1.GetOptions{})
	if dep.Annotations[kubernetes.AnnotationRevisionID] != rev2.RevisionID || dep.Annotations[kubernetes.AnnotationActiveRevision] != "" ||
		dep.Spec.Template.Labels[kubernetes.LabelRevision] != rev2.RevisionID {
		t.Errorf("after the second revision: annotations %v", dep.Annotations)
	}
	if err := d.ActivateRevision(ctx, rev1); err == nil {
		t.Error("activating the replaced revision succeeded")
	}
	// Retiring the first never touches the second's gateway.
	for range 2 {
		if err := d.RetireRevision(ctx, rev1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, kubernetes.ConfigMapName(rev1), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("retired revision's ConfigMap: %v", err)
	}
	if _, err := cs.CoreV1().Secrets(ns).Get(ctx, kubernetes.EnvSecretName(rev1), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("retired revision's Secret: %v", err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, kubernetes.ConfigMapName(rev2), metav1.GetOptions{}); err != nil {
		t.Errorf("the running revision's ConfigMap: %v", err)
	}
	if dep, _ := deps.Get(ctx, depName, metav1.GetOptions{}); *dep.Spec.Replicas != 1 || dep.Annotations[kubernetes.AnnotationRevisionID] != rev2.RevisionID {
		t.Errorf("retiring the old revision changed the gateway: %v replicas %d", dep.Annotations, *dep.Spec.Replicas)
	}
	// Nor does activation by another driver (a reopened occ).
	prepared, _ = deps.Get(ctx, depName, metav1.GetOptions{})
	if err := open(t, cfg).ActivateRevision(ctx, rev2); err != nil {
		t.Fatal(err)
	}
	if dep, _ := deps.Get(ctx, depName, metav1.GetOptions{}); !apiequality.Semantic.DeepEqual(dep.Spec, prepared.Spec) || dep.Annotations[kubernetes.AnnotationActiveRevision] != rev2.RevisionID {
		t.Errorf("activation by another driver: spec\n%+v\nthen\n%+v\nannotations %v", prepared.Spec, dep.Spec, dep.Annotations)
	}

	// Stop keeps state, credentials and configuration.
	for range 2 {
		if err := d.StopAgent(ctx, rev2.AgentRef); err != nil {
			t.Fatal(err)
		}
	}
	dep, _ = deps.Get(ctx, depName, metav1.GetOptions{})
	if *dep.Spec.Replicas != 0 || dep.Annotations[kubernetes.AnnotationActiveRevision] != "" {
		t.Errorf("stopped deployment: replicas %d annotations %v", *dep.Spec.Replicas, dep.Annotations)
	}
	checkDeploymentKept(t, dep, rev2)
	for _, get := range []func() error{
		func() error {
			_, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, kubernetes.StateClaimName(rev2.AgentID), metav1.GetOptions{})
			return err
		},
		func() error {
			_, err := cs.CoreV1().Secrets(ns).Get(ctx, kubernetes.TransportSecretName(rev2.AgentID), metav1.GetOptions{})
			return err
		},
		func() error {
			_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, kubernetes.ConfigMapName(rev2), metav1.GetOptions{})
			return err
		},
	} {
		if err := get(); err != nil {
			t.Errorf("after a stop: %v", err)
		}
	}
	if err := d.ActivateRevision(ctx, rev2); err == nil {
		t.Error("activating a stopped revision succeeded")
	}
	// Redeploy: the same claim and token.
	claim, _ := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, kubernetes.StateClaimName(rev2.AgentID), metav1.GetOptions{})
	token, _ := cs.CoreV1().Secrets(ns).Get(ctx, kubernetes.TransportSecretName(rev2.AgentID), metav1.GetOptions{})
	if _, err := d.PrepareRevision(ctx, specOf(rev2, 2)); err != nil {
		t.Fatal(err)
	}
	claim2, _ := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, kubernetes.StateClaimName(rev2.AgentID), metav1.GetOptions{})
	token2, _ := cs.CoreV1().Secrets(ns).Get(ctx, kubernetes.TransportSecretName(rev2.AgentID), metav1.GetOptions{})
	if claim.UID != claim2.UID || string(token.Data[kubernetes.TokenKey]) != string(token2.Data[kubernetes.TokenKey]) {
		t.Error("a redeploy replaced the state claim or the gateway token")
	}

	// Delete removes only occ's objects of this Agent.
	other := rev1
	other.AgentID = occ.NewID(occ.PrefixAgent)
	if _, err := d.PrepareRevision(ctx, specOf(other, 1)); err != nil {
		t.Fatal(err)
	}
	userCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "notes", Labels: map[string]string{kubernetes.LabelAgent: rev2.AgentID}}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, userCM, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := d.DeleteAgent(ctx, rev2.AgentRef); err != nil {
			t.Fatal(err)
		}
	}
	for where, b := range objectsOf(t, cs, ns) {
		if strings.Contains(string(b), rev2.AgentID) && where != "configmap/notes" && !terminating(b) {
			t.Errorf("%s of the deleted Agent is left", where)
		}
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "notes", metav1.GetOptions{}); err != nil {
		t.Errorf("DeleteAgent removed a ConfigMap occ did not create: %v", err)
	}
	if _, err := deps.Get(ctx, kubernetes.GatewayName(other.AgentID), metav1.GetOptions{}); err != nil {
		t.Errorf("DeleteAgent removed another Agent's gateway: %v", err)
	}

	// The namespace holds a foreign object: not deleted.
	_, err := d.DeleteNamespace(ctx, compute.NamespaceRef{ID: rev1.NamespaceID})
	wantCode(t, err, kubernetes.CodeForeignObjects)
	if n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil || n.DeletionTimestamp != nil {
		t.Errorf("namespace with a foreign object: %v, %v", n.DeletionTimestamp, err)
	}
	if _, err := deps.Get(ctx, kubernetes.GatewayName(other.AgentID), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("DeleteNamespace left the other Agent's gateway: %v", err)
	}
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "notes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Without kube-controller-manager nothing finalizes a namespace: it
	// stays terminating, and the deletion is not done yet (never an error).
	for range 2 {
		o, err := d.DeleteNamespace(ctx, compute.NamespaceRef{ID: rev1.NamespaceID})
		if err != nil || o.Done {
			t.Fatalf("DeleteNamespace of a namespace Kubernetes cannot finalize = %+v, %v; want not done yet", o, err)
		}
	}
	if n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil || n.DeletionTimestamp == nil {
		t.Errorf("namespace not terminating after DeleteNamespace: %v", err)
	}
	// EnsureNamespace of the same ID waits for it to go.
	if o, err := d.EnsureNamespace(ctx, compute.NamespaceRef{ID: rev1.NamespaceID}); err != nil || o.Done {
		t.Errorf("EnsureNamespace of a terminating namespace = %+v, %v; want not done yet", o, err)
	}
}

func checkDeploymentKept(t *testing.T, dep *appsv1.Deployment, rev compute.RevisionRef) {
	t.Helper()
	if dep.Spec.Template.Labels[kubernetes.LabelRevision] != rev.RevisionID || len(dep.Spec.Template.Spec.Containers) != 1 ||
		dep.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("a stop changed more than the replicas: %+v", dep.Spec)
	}
}

// terminating reports whether an object (JSON) is being deleted: deletion
// was asked and Kubernetes finishes it (a claim waits for its protection
// finalizer, which only kube-controller-manager removes).
func terminating(obj []byte) bool {
	var m struct {
		Metadata struct {
			DeletionTimestamp *metav1.Time `json:"deletionTimestamp"`
		} `json:"metadata"`
	}
	return json.Unmarshal(obj, &m) == nil && m.Metadata.DeletionTimestamp != nil
}
