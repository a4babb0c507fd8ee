package kubernetes

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/client-go/rest"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// testOptions are valid options for the object builders (no API server is
// contacted by New).
func testOptions() Options {
	return Options{Config: &rest.Config{Host: "https://127.0.0.1:1"}, GatewayImage: "registry.example/openclaw@sha256:" + strings.Repeat("ab", 32),
		GatewayPort: 8080, EndpointAccess: EndpointPortForward, StateSize: "10Gi",
		GatewayResources:  Resources{RequestsCPU: "100m", RequestsMemory: "1792Mi", LimitsCPU: "4", LimitsMemory: "3Gi"},
		ContainerDefaults: Resources{RequestsCPU: "100m", RequestsMemory: "128Mi", LimitsCPU: "4", LimitsMemory: "2Gi"},
		QuotaPods:         10, QuotaCPU: "40", QuotaMemory: "64Gi"}
}

func newTestDriver(t *testing.T, edit ...func(*Options)) *Driver {
	t.Helper()
	o := testOptions()
	for _, e := range edit {
		e(&o)
	}
	d, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// roundTrip turns an apply configuration into the typed object the API
// server would receive.
func roundTrip[T any](t *testing.T, ac any) T {
	t.Helper()
	b, err := json.Marshal(ac)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

func TestNames(t *testing.T) {
	t.Parallel()
	rev := testRevision()
	if got := NamespaceName(rev.NamespaceID); !regexp.MustCompile(`^oce-[0-9a-f]{15}$`).MatchString(got) || got != NamespaceName(rev.NamespaceID) {
		t.Errorf("NamespaceName = %q, want oce-<15 hex>, stable", got)
	}
	if NamespaceName(rev.NamespaceID) == NamespaceName(occ.NewID(occ.PrefixNamespace)) {
		t.Error("two Namespaces share a Kubernetes namespace")
	}
	for _, n := range []string{GatewayName(rev.AgentID), StateClaimName(rev.AgentID), TransportSecretName(rev.AgentID), ConfigMapName(rev), EnvSecretName(rev)} {
		if !dnsLabel.MatchString(n) || strings.Contains(n, rev.AgentID) {
			t.Errorf("name %q: want a DNS label carrying a hash, not the raw ID", n)
		}
	}
}

func testRevision() compute.RevisionRef {
	return compute.RevisionRef{AgentRef: compute.AgentRef{NamespaceID: occ.NewID(occ.PrefixNamespace), AgentID: occ.NewID(occ.PrefixAgent)},
		RevisionID: occ.NewID(occ.PrefixRevision)}
}

func TestNamespaceObjects(t *testing.T) {
	t.Parallel()
	d := newTestDriver(t)
	nsID := occ.NewID(occ.PrefixNamespace)
	ns := roundTrip[corev1.Namespace](t, namespaceObject(nsID))
	for k, v := range map[string]string{LabelManagedBy: ManagedBy, LabelNamespace: nsID,
		"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/audit": "restricted", "pod-security.kubernetes.io/warn": "restricted"} {
		if ns.Labels[k] != v {
			t.Errorf("namespace label %s = %q, want %q", k, ns.Labels[k], v)
		}
	}
	if ns.Annotations[AnnotationNamespaceID] != nsID {
		t.Errorf("namespace annotations %v lack the ID", ns.Annotations)
	}
	q := roundTrip[corev1.ResourceQuota](t, d.quotaObject(nsID))
	if p := q.Spec.Hard[corev1.ResourcePods]; p.Value() != 10 || q.Spec.Hard.Name(corev1.ResourceLimitsMemory, "").String() != "64Gi" {
		t.Errorf("quota %v", q.Spec.Hard)
	}
	lr := roundTrip[corev1.LimitRange](t, d.limitRangeObject(nsID))
	if len(lr.Spec.Limits) != 1 || lr.Spec.Limits[0].Default.Memory().String() != "2Gi" || lr.Spec.Limits[0].DefaultRequest.Cpu().String() != "100m" {
		t.Errorf("limit range %+v", lr.Spec.Limits)
	}

	policies := map[string]networkingv1.NetworkPolicy{}
	for _, p := range d.policyObjects(nsID) {
		np := roundTrip[networkingv1.NetworkPolicy](t, p)
		if !owns(np.Labels, namespaceLabels(nsID)) {
			t.Errorf("policy %s labels %v", np.Name, np.Labels)
		}
		policies[np.Name] = np
	}
	deny := policies[PolicyDenyAll]
	if len(deny.Spec.PodSelector.MatchLabels) != 0 || len(deny.Spec.Ingress) != 0 || len(deny.Spec.Egress) != 0 || len(deny.Spec.PolicyTypes) != 2 {
		t.Errorf("default deny %+v", deny.Spec)
	}
	dns := policies[PolicyAllowDNS]
	if len(dns.Spec.Egress) != 1 || len(dns.Spec.Egress[0].Ports) != 4 || len(dns.Spec.Ingress) != 0 {
		t.Errorf("allow-dns %+v", dns.Spec)
	}
	egress := policies[PolicyGatewayEgress]
	if len(egress.Spec.Egress) != 1 || egress.Spec.Egress[0].Ports[0].Port.IntVal != 443 || egress.Spec.PodSelector.MatchLabels[LabelRole] != RoleGateway {
		t.Errorf("gateway egress %+v", egress.Spec)
	}
	if _, ok := policies[PolicyGatewayInput]; ok || len(policies) != 3 {
		t.Errorf("without gateway clients: want no ingress policy, got %v", policies)
	}

	withClients := newTestDriver(t, func(o *Options) {
		o.EndpointAccess = EndpointService
		o.GatewayClients = Peer{Namespace: "occ-system", PodLabels: map[string]string{"app": "occ"}}
	})
	var in *networkingv1.NetworkPolicy
	for _, p := range withClients.policyObjects(nsID) {
		if np := roundTrip[networkingv1.NetworkPolicy](t, p); np.Name == PolicyGatewayInput {
			in = &np
		}
	}
	if in == nil || len(in.Spec.Ingress) != 1 || len(in.Spec.Ingress[0].From) != 1 {
		t.Fatalf("gateway ingress %+v", in)
	}
	from := in.Spec.Ingress[0].From[0]
	if from.NamespaceSelector.MatchLabels[corev1.LabelMetadataName] != "occ-system" || from.PodSelector.MatchLabels["app"] != "occ" ||
		in.Spec.Ingress[0].Ports[0].Port.IntVal != 8080 || from.IPBlock != nil {
		t.Errorf("gateway ingress from %+v ports %+v", from, in.Spec.Ingress[0].Ports)
	}
}

func TestDeploymentObject(t *testing.T) {
	t.Parallel()
	d := newTestDriver(t)
	rev := testRevision()
	spec := compute.RevisionSpec{RevisionRef: rev, ExecutionMode: occ.ExecutionEmbedded,
		Env: map[string]string{"OPENAI_API_KEY": "sk-canary-value-1", "OPENCLAW_GATEWAY_TOKEN": "sk-canary-value-2", "bad name": "x"}}
	dep := roundTrip[appsv1.Deployment](t, d.deploymentObject(spec, nil, 1))
	if *dep.Spec.Replicas != 1 || dep.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("replicas %d strategy %s", *dep.Spec.Replicas, dep.Spec.Strategy.Type)
	}
	if !owns(dep.Labels, agentLabels(rev.AgentRef, RoleGateway)) || dep.Annotations[AnnotationRevisionID] != rev.RevisionID ||
		dep.Annotations[AnnotationAgentID] != rev.AgentID || dep.Annotations[AnnotationNamespaceID] != rev.NamespaceID {
		t.Errorf("deployment labels %v annotations %v", dep.Labels, dep.Annotations)
	}
	pt := dep.Spec.Template
	if !owns(pt.Labels, revisionLabels(rev, RoleGateway)) || !owns(pt.Labels, dep.Spec.Selector.MatchLabels) {
		t.Errorf("pod labels %v, selector %v", pt.Labels, dep.Spec.Selector.MatchLabels)
	}
	ps := pt.Spec
	if ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken || ps.ServiceAccountName != GatewayName(rev.AgentID) {
		t.Errorf("service account %q automount %v", ps.ServiceAccountName, ps.AutomountServiceAccountToken)
	}
	if sc := ps.SecurityContext; sc == nil || !*sc.RunAsNonRoot || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context %+v", sc)
	}
	if len(ps.Containers) != 1 {
		t.Fatalf("containers %d", len(ps.Containers))
	}
	c := ps.Containers[0]
	sc := c.SecurityContext
	if sc == nil || !*sc.RunAsNonRoot || *sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem || *sc.Privileged ||
		len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || len(sc.Capabilities.Add) != 0 ||
		sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("container security context %+v", sc)
	}
	if c.Image != testOptions().GatewayImage || c.Resources.Limits.Memory().String() != "3Gi" || c.Resources.Requests.Cpu().String() != "100m" {
		t.Errorf("image %q resources %+v", c.Image, c.Resources)
	}
	refs := map[string]corev1.SecretKeySelector{}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			refs[e.Name] = *e.ValueFrom.SecretKeyRef
			continue
		}
		if strings.Contains(e.Value, "canary") {
			t.Errorf("env %s carries a secret value as a literal", e.Name)
		}
	}
	if r := refs["OPENAI_API_KEY"]; r.Name != EnvSecretName(rev) || r.Key != "OPENAI_API_KEY" {
		t.Errorf("OPENAI_API_KEY from %+v", r)
	}
	if r := refs["OPENCLAW_GATEWAY_TOKEN"]; r.Name != TransportSecretName(rev.AgentID) || r.Key != TokenKey {
		t.Errorf("the gateway token comes from %+v, want the transport Secret (a revision may not set it)", r)
	}
	if _, ok := refs["bad name"]; ok || len(refs) != 2 {
		t.Errorf("secret env refs %v", refs)
	}
	b, _ := json.Marshal(dep)
	if strings.Contains(string(b), "canary") {
		t.Errorf("the Deployment carries a secret value: %s", b)
	}
	if len(c.Ports) != 0 {
		t.Errorf("the gateway container declares ports %+v; it listens on loopback only", c.Ports)
	}
}

// TestEndpointRelayObject: with endpointAccess service the gateway Pod
// also runs the endpoint relay: the gateway image's Node.js relaying the
// gateway port from the Pod's address (downward API) to loopback,
// restricted, with small resources; the Service targets that port.
func TestEndpointRelayObject(t *testing.T) {
	t.Parallel()
	d := newTestDriver(t, func(o *Options) {
		o.EndpointAccess = EndpointService
		o.GatewayClients = Peer{Namespace: "occ-system", PodLabels: map[string]string{"app": "occ"}}
	})
	rev := testRevision()
	dep := roundTrip[appsv1.Deployment](t, d.deploymentObject(compute.RevisionSpec{RevisionRef: rev, ExecutionMode: occ.ExecutionEmbedded}, nil, 1))
	cs := dep.Spec.Template.Spec.Containers
	if len(cs) != 2 || cs[0].Name != ContainerName || cs[1].Name != EndpointContainerName {
		t.Fatalf("containers %+v, want the gateway and the endpoint relay", cs)
	}
	relay := cs[1]
	if relay.Image != testOptions().GatewayImage || len(relay.Command) != 3 || relay.Command[0] != "node" ||
		relay.Command[2] != endpointRelayScript(8080) || len(relay.Ports) != 1 || relay.Ports[0].ContainerPort != 8080 {
		t.Errorf("relay image %q command %q ports %+v", relay.Image, relay.Command, relay.Ports)
	}
	if len(relay.Env) != 1 || relay.Env[0].Name != podIPEnv || relay.Env[0].ValueFrom == nil || relay.Env[0].ValueFrom.FieldRef.FieldPath != "status.podIP" {
		t.Errorf("relay env %+v, want the Pod's address from the downward API", relay.Env)
	}
	if sc := relay.SecurityContext; sc == nil || !*sc.RunAsNonRoot || *sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem ||
		sc.Capabilities.Drop[0] != "ALL" || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("relay security context %+v", sc)
	}
	if relay.Resources.Limits.Memory().String() != "128Mi" || relay.Resources.Requests.Cpu().String() != "10m" {
		t.Errorf("relay resources %+v", relay.Resources)
	}
	svc := roundTrip[corev1.Service](t, d.serviceObject(rev.AgentRef))
	if p := svc.Spec.Ports[0]; p.Port != 8080 || p.TargetPort.IntVal != 8080 {
		t.Errorf("service port %+v", p)
	}
	// Port-forward access has no relay.
	plain := roundTrip[appsv1.Deployment](t, newTestDriver(t).deploymentObject(compute.RevisionSpec{RevisionRef: rev, ExecutionMode: occ.ExecutionEmbedded}, nil, 1))
	if n := len(plain.Spec.Template.Spec.Containers); n != 1 {
		t.Errorf("with port-forward access %d containers, want the gateway alone", n)
	}
}

func TestSecretsStayOutOfConfigMaps(t *testing.T) {
	t.Parallel()
	rev := testRevision()
	cm := roundTrip[corev1.ConfigMap](t, configMapObject(rev, []byte(`{"gateway":{}}`)))
	if cm.Immutable == nil || !*cm.Immutable || cm.Data["openclaw.json"] != `{"gateway":{}}` || !owns(cm.Labels, revisionLabels(rev, RoleConfig)) {
		t.Errorf("configmap %+v", cm)
	}
	s := roundTrip[corev1.Secret](t, envSecretObject(rev, map[string]string{"OPENAI_API_KEY": "sk-1"}, nil))
	if string(s.Data["OPENAI_API_KEY"]) != "sk-1" || !owns(s.Labels, revisionLabels(rev, RoleEnv)) || strings.Contains(strings.Join(mapValues(s.Annotations), ""), "sk-1") {
		t.Errorf("env secret %+v", s)
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func TestCapabilities(t *testing.T) {
	t.Parallel()
	caps := newTestDriver(t).Capabilities()
	if r := caps.Refusal("kubernetes", occ.RevisionNeeds{ExecutionMode: occ.ExecutionEmbedded, HarnessAuthMethod: occ.HarnessRuntime}); r == nil || r.Code != occ.DeployHarnessAuthUnsupported {
		t.Errorf("runtime harness auth: refusal %+v, want %s", r, occ.DeployHarnessAuthUnsupported)
	}
	if r := caps.Refusal("kubernetes", occ.RevisionNeeds{ExecutionMode: occ.ExecutionDedicated}); r == nil || r.Code != occ.DeployExecutionModeUnsupported {
		t.Errorf("dedicated: refusal %+v", r)
	}
	if r := caps.Refusal("kubernetes", occ.RevisionNeeds{ExecutionMode: occ.ExecutionEmbedded, HarnessAuthMethod: occ.HarnessAPIKey}); r != nil {
		t.Errorf("embedded api_key refused: %+v", r)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	t.Parallel()
	for name, edit := range map[string]func(*Options){
		"no config":      func(o *Options) { o.Config = nil },
		"no image":       func(o *Options) { o.GatewayImage = "" },
		"bad access":     func(o *Options) { o.EndpointAccess = "proxy" },
		"bad quantity":   func(o *Options) { o.GatewayResources.LimitsMemory = "lots" },
		"bad port":       func(o *Options) { o.GatewayPort = 0 },
		"bad quota pods": func(o *Options) { o.QuotaPods = 0 },
	} {
		o := testOptions()
		edit(&o)
		if _, err := New(o); err == nil {
			t.Errorf("%s: New accepted %+v", name, o)
		}
	}
}
