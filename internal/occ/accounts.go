package occ

import "time"

// IssuedCredential describes the credential a Backend issued for a service
// account. The credential value itself is never part of it: only the store
// holds it, encrypted.
type IssuedCredential struct {
	Kind      string // access_token, api_key or oauth_access_token
	IssuedAt  time.Time
	ExpiresAt *time.Time // when the Backend said so
}

// ServiceAccount is a Namespace-owned provider account tied to one Backend.
// It is an occ object, not an IAM principal.
type ServiceAccount struct {
	ID          string
	NamespaceID string
	Name        string
	BackendID   string
	Credential  *IssuedCredential // nil until issued
	CreatedBy   string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	Version     int64
}

// Ref is the service account as a resource.
func (s ServiceAccount) Ref() ResourceRef {
	return ResourceRef{Kind: KindServiceAccount, ID: s.ID, NamespaceID: s.NamespaceID}
}

// CredentialSourceState is where a credential source stands with the
// Credential Gateway.
type CredentialSourceState string

// Credential source states.
const (
	CredentialSourceRegistering CredentialSourceState = "registering"
	CredentialSourceReady       CredentialSourceState = "ready"
	CredentialSourceDeleting    CredentialSourceState = "deleting"
)

// CredentialSource is a Namespace-owned reference the Credential Gateway
// resolves for dedicated Codex. Secrets maps a field of the source type to a
// Secret of the same Namespace; values never appear here.
type CredentialSource struct {
	ID          string
	NamespaceID string
	Name        string
	Type        string
	Config      map[string]any
	Secrets     map[string]SecretRef
	State       CredentialSourceState
	CreatedBy   string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	Version     int64
}

// Ref is the credential source as a resource.
func (s CredentialSource) Ref() ResourceRef {
	return ResourceRef{Kind: KindCredentialSource, ID: s.ID, NamespaceID: s.NamespaceID}
}
