package kubernetes

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/openclaw/occ/internal/compute"
)

// Names carry hashes of occ's IDs (a Kubernetes name is short and a DNS
// label); the raw IDs are in the labels (LabelNamespace, LabelAgent,
// LabelRevision). h(n, id) is the first n hex digits of SHA-256 of the
// exact ID string (reference §2.2).
func h(n int, id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])[:n]
}

// Labels and annotations every object occ creates carries.
const (
	// LabelManagedBy is app.kubernetes.io/managed-by with ManagedBy: the
	// mark of occ's ownership, with the ID labels below.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "openclaw-enterprise"
	// LabelNamespace, LabelAgent and LabelRevision carry the raw occ IDs an
	// object belongs to.
	LabelNamespace = "openclaw.dev/namespace"
	LabelAgent     = "openclaw.dev/agent"
	LabelRevision  = "openclaw.dev/revision"
	// LabelRole is the object's part: RoleGateway (Deployment, Service,
	// ServiceAccount, Pods), RoleConfig (a revision's ConfigMap), RoleEnv
	// (a revision's secret environment), RoleTransport (the gateway
	// credential), RoleState (the gateway state volume), RoleNamespace
	// (the namespace's quota, limits and policies).
	LabelRole     = "openclaw.dev/workload-role"
	RoleGateway   = "gateway"
	RoleConfig    = "gateway-config"
	RoleEnv       = "gateway-env"
	RoleTransport = "gateway-transport"
	RoleState     = "gateway-state"
	RoleNamespace = "namespace"
	// AnnotationNamespaceID, AnnotationAgentID and AnnotationRevisionID
	// repeat the IDs as annotations (labels may be rewritten by others;
	// annotations are what a human reads).
	AnnotationNamespaceID = "openclaw.dev/namespace-id"
	AnnotationAgentID     = "openclaw.dev/agent-id"
	AnnotationRevisionID  = "openclaw.dev/revision-id"
	// AnnotationActiveRevision on the gateway Deployment is the revision
	// ActivateRevision made the one that serves.
	AnnotationActiveRevision = "openclaw.dev/active-revision-id"
	// AnnotationModelProbedPod on the gateway Deployment is the UID of the
	// gateway Pod whose model credential occ's probe accepted: a restarted
	// occ that finds that Pod still running checks its health and identity
	// only, without a second (billable) model call. It is written by its
	// own field manager (ProbeFieldManager), so applies keep it.
	AnnotationModelProbedPod = "openclaw.dev/model-probed-pod"
)

// ProbeFieldManager owns AnnotationModelProbedPod.
const ProbeFieldManager = "openclaw-enterprise-compute-probe"

// FieldManager is the one server-side apply field manager of the driver.
const FieldManager = "openclaw-enterprise-compute"

// NamespaceName is the Kubernetes namespace of an occ Namespace:
// oce-<h15(nsID)>.
func NamespaceName(nsID string) string { return "oce-" + h(15, nsID) }

// Fixed names of the per-namespace objects.
const (
	QuotaName           = "oce-quota"
	LimitRangeName      = "oce-limits"
	PolicyDenyAll       = "oce-default-deny"
	PolicyAllowDNS      = "allow-dns"
	PolicyGatewayInput  = "oce-gateway-ingress"
	PolicyGatewayEgress = "oce-gateway-egress"
)

// GatewayName is the name of an Agent's Deployment, Service and
// ServiceAccount: gateway-<h12(agentID)>.
func GatewayName(agentID string) string { return "gateway-" + h(12, agentID) }

// StateClaimName is the Agent's gateway state PVC.
func StateClaimName(agentID string) string { return "gateway-state-" + h(12, agentID) }

// TransportSecretName is the Agent's gateway credential Secret.
func TransportSecretName(agentID string) string { return "gateway-transport-" + h(12, agentID) }

// ConfigMapName is a revision's immutable openclaw.json ConfigMap.
func ConfigMapName(rev compute.RevisionRef) string {
	return GatewayName(rev.AgentID) + "-rev-" + h(12, rev.RevisionID)
}

// EnvSecretName is a revision's secret environment Secret.
func EnvSecretName(rev compute.RevisionRef) string { return ConfigMapName(rev) + "-env" }

// namespaceLabels are the ownership labels of a namespace-level object.
func namespaceLabels(nsID string) map[string]string {
	return map[string]string{LabelManagedBy: ManagedBy, LabelNamespace: nsID}
}

// agentLabels are the ownership labels of an Agent's object of role.
func agentLabels(a compute.AgentRef, role string) map[string]string {
	return map[string]string{LabelManagedBy: ManagedBy, LabelNamespace: a.NamespaceID, LabelAgent: a.AgentID, LabelRole: role}
}

// revisionLabels are the ownership labels of a revision's object of role.
func revisionLabels(r compute.RevisionRef, role string) map[string]string {
	l := agentLabels(r.AgentRef, role)
	l[LabelRevision] = r.RevisionID
	return l
}

// idAnnotations are the annotations naming the IDs of labels.
func idAnnotations(labels map[string]string) map[string]string {
	a := map[string]string{}
	for l, ann := range map[string]string{LabelNamespace: AnnotationNamespaceID, LabelAgent: AnnotationAgentID, LabelRevision: AnnotationRevisionID} {
		if v, ok := labels[l]; ok {
			a[ann] = v
		}
	}
	return a
}

// owns reports whether an object's labels show occ owns it for want
// (every label of want present with the same value).
func owns(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}
