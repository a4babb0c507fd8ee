package occ

import "time"

// ConfigurationKindAgent is the one Configuration kind today.
const ConfigurationKindAgent = "agent"

// CodeSavedConfigurationUnreadable marks settings that are stored but cannot
// be decoded; reads still return the readable metadata.
const CodeSavedConfigurationUnreadable = "SAVED_CONFIGURATION_UNREADABLE"

// ReadError says which saved setting could not be read.
type ReadError struct {
	Code  string
	Field string
}

// SecretRef names a Secret: {kind: "secret", namespaceId, id}.
type SecretRef struct {
	Kind        string `json:"kind"`
	NamespaceID string `json:"namespaceId"`
	ID          string `json:"id"`
}

// SecretBinding delivers a Secret to the gateway as an environment variable.
type SecretBinding struct {
	Source   SecretRef `json:"source"`
	Delivery string    `json:"delivery"` // "env"
}

// Configuration is a native OpenClaw configuration document of a Namespace.
type Configuration struct {
	ID             string
	NamespaceID    string
	Name           string
	Kind           string
	Values         map[string]any           // nil when unreadable
	SecretBindings map[string]SecretBinding // nil when unreadable
	Generation     int64
	Version        int64
	CreatedBy      string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	ReadError      *ReadError
}

// Ref is the Configuration as a resource.
func (c Configuration) Ref() ResourceRef {
	return ResourceRef{Kind: KindConfiguration, ID: c.ID, NamespaceID: c.NamespaceID}
}
