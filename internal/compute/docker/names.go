package docker

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/openclaw/occ/internal/compute"
)

// Names carry hashes of occ's IDs; the raw IDs are in the labels. h12(x)
// is the first 12 hex digits of SHA-256 of the exact ID string
// (reference §2.1).
func h12(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])[:12]
}

// Labels on every object occ creates (reference §2.1).
const (
	labelPrefix = "org.openclaw.enterprise."
	// LabelManaged = "true" and LabelDriver = "docker" mark occ's objects.
	LabelManaged = labelPrefix + "managed"
	LabelDriver  = labelPrefix + "compute-driver"
	// LabelNamespace, LabelAgent and LabelRevision carry the raw occ IDs,
	// LabelRevisionNumber the revision's number.
	LabelNamespace      = labelPrefix + "namespace-id"
	LabelAgent          = labelPrefix + "agent-id"
	LabelRevision       = labelPrefix + "revision-id"
	LabelRevisionNumber = labelPrefix + "revision-number"
	// LabelRole is the object's part: RoleNetwork, RoleGateway (the
	// container), RoleState and RoleWorkspace (its volumes).
	LabelRole     = labelPrefix + "role"
	RoleNetwork   = "network"
	RoleGateway   = "gateway"
	RoleState     = "state"
	RoleWorkspace = "workspace"
	// RoleHarness is a dedicated revision's Codex app-server container,
	// RoleCodex its volume (the Codex home), RolePluginInstall the
	// one-shot container that installs the gateway's codex plugin.
	RoleHarness       = "harness"
	RoleCodex         = "codex"
	RolePluginInstall = "plugin-install"
	// LabelHarness, on a dedicated revision's gateway container, is the ID
	// of the harness container whose app-server it was configured for.
	LabelHarness = labelPrefix + "harness-id"
	// LabelConfigHash is the first 32 hex digits of SHA-256 of the
	// rendered openclaw.json the container runs; LabelVersion its image.
	LabelConfigHash = labelPrefix + "configuration-hash"
	LabelVersion    = labelPrefix + "version"
)

// NetworkName is the bridge network of an occ Namespace.
func NetworkName(nsID string) string { return "oce-" + h12(nsID) }

// GatewayName is the name of an Agent's gateway container.
func GatewayName(a compute.AgentRef) string {
	return "oce-" + h12(a.NamespaceID) + "-gateway-" + h12(a.AgentID)
}

// HarnessName is the name of an Agent's harness container (dedicated).
func HarnessName(a compute.AgentRef) string {
	return "oce-" + h12(a.NamespaceID) + "-harness-" + h12(a.AgentID)
}

// pluginInstallName is the name of the Agent's one-shot plugin install.
func pluginInstallName(a compute.AgentRef) string {
	return "oce-" + h12(a.NamespaceID) + "-plugins-" + h12(a.AgentID)
}

// CodexVolumeName is the Agent's Codex home volume (dedicated), mounted in
// its harness container only.
func CodexVolumeName(a compute.AgentRef) string {
	return "oce-" + h12(a.NamespaceID) + "-" + h12(a.AgentID) + "-codex"
}

// StateVolumeName and WorkspaceVolumeName are an Agent's volumes.
func StateVolumeName(a compute.AgentRef) string {
	return "oce-" + h12(a.NamespaceID) + "-" + h12(a.AgentID) + "-state"
}

func WorkspaceVolumeName(a compute.AgentRef) string {
	return "oce-" + h12(a.NamespaceID) + "-" + h12(a.AgentID) + "-workspace"
}

// managed are the labels every object of occ's carries.
func managed() map[string]string {
	return map[string]string{LabelManaged: "true", LabelDriver: "docker"}
}

// NamespaceLabels are the ownership labels of a Namespace's network.
func NamespaceLabels(nsID string) map[string]string {
	l := managed()
	l[LabelNamespace], l[LabelRole] = nsID, RoleNetwork
	return l
}

// AgentLabels are the ownership labels of an Agent's object of role.
func AgentLabels(a compute.AgentRef, role string) map[string]string {
	l := managed()
	l[LabelNamespace], l[LabelAgent], l[LabelRole] = a.NamespaceID, a.AgentID, role
	return l
}

// revisionLabels are the labels of a revision's gateway container.
func revisionLabels(spec compute.RevisionSpec, configHash, image string) map[string]string {
	return roleRevisionLabels(spec, RoleGateway, configHash, image)
}

// roleRevisionLabels are the labels of a revision's container of role.
func roleRevisionLabels(spec compute.RevisionSpec, role, configHash, image string) map[string]string {
	l := AgentLabels(spec.AgentRef, role)
	l[LabelRevision], l[LabelRevisionNumber] = spec.RevisionID, strconv.FormatInt(spec.Number, 10)
	l[LabelConfigHash], l[LabelVersion] = configHash, image
	return l
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

// configHash is the configuration-hash label of a rendered openclaw.json.
func configHash(rendered []byte) string {
	sum := sha256.Sum256(rendered)
	return hex.EncodeToString(sum[:])[:32]
}
