package occ

import "time"

// Execution modes of an Agent.
const (
	ExecutionEmbedded  = "embedded"
	ExecutionDedicated = "dedicated"
)

// Harness authentication methods (seed: Harness authentication).
const (
	HarnessAPIKey                = "api_key"
	HarnessCodexPAT              = "codex_pat"
	HarnessChatGPTServiceAccount = "chatgpt_service_account"
	HarnessCredentialSource      = "credential_source"
	HarnessRuntime               = "runtime"
)

// HarnessAuth is how an Agent obtains model credentials: a reference, never
// a credential value.
type HarnessAuth struct {
	Method           string     `json:"method"`
	Source           *SecretRef `json:"source,omitempty"`           // api_key, codex_pat
	ServiceAccountID string     `json:"serviceAccountId,omitempty"` // chatgpt_service_account
	SourceID         string     `json:"sourceId,omitempty"`         // credential_source
}

// PluginSelection is one desired plugin, keyed by "name@catalog".
type PluginSelection struct {
	ApprovalPolicy string `json:"approvalPolicy,omitempty"`
}

// Preset sources.
const (
	PresetFromNamespace    = "namespace"
	PresetFromInstallation = "installation"
)

// PresetSettings are the launch settings a Preset copies into a new Agent.
type PresetSettings struct {
	ExecutionMode   string                     `json:"executionMode,omitempty"`
	BackendID       string                     `json:"backendId,omitempty"`
	HarnessAuth     *HarnessAuth               `json:"harnessAuth,omitempty"`
	Plugins         map[string]PluginSelection `json:"plugins"`
	ConfigurationID string                     `json:"configurationId,omitempty"`
}

// Preset is a Namespace's reusable set of launch settings.
type Preset struct {
	ID          string
	NamespaceID string
	Name        string
	Source      string
	Settings    *PresetSettings // nil when unreadable
	Version     int64
	CreatedBy   string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	ReadError   *ReadError
}

// Ref is the Preset as a resource.
func (p Preset) Ref() ResourceRef {
	return ResourceRef{Kind: KindPreset, ID: p.ID, NamespaceID: p.NamespaceID}
}
