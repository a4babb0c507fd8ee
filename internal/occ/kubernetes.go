package occ

// Permanent error codes of the kubernetes compute driver (a deployment or
// Namespace that fails with one shows it as its error code).
const (
	// KubernetesOwnershipConflict: an object exists under a name occ uses
	// but without occ's ownership labels; occ never adopts it.
	KubernetesOwnershipConflict = "KUBERNETES_OWNERSHIP_CONFLICT"
	// KubernetesAccessDenied: the API server refused occ's credentials or
	// permissions (HTTP 401/403).
	KubernetesAccessDenied = "KUBERNETES_ACCESS_DENIED"
	// KubernetesRequestInvalid: the API server refused a request as invalid
	// (HTTP 400/422).
	KubernetesRequestInvalid = "KUBERNETES_REQUEST_INVALID"
	// KubernetesForeignObjects: a tenant namespace holds objects occ did
	// not create, so occ does not delete it.
	KubernetesForeignObjects = "KUBERNETES_FOREIGN_OBJECTS"
)
