package occ

import "time"

// MaxSecretValueBytes bounds a Secret's value (UTF-8 bytes).
const MaxSecretValueBytes = 65536

// Secret is a Namespace-owned, write-only value. Only this metadata ever
// leaves the server; the value is stored encrypted and read back only to
// deliver it to a runtime.
type Secret struct {
	ID          string
	NamespaceID string
	Name        string
	Version     int64 // increases on every value change
	CreatedBy   string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Ref is the Secret as a resource.
func (s Secret) Ref() ResourceRef {
	return ResourceRef{Kind: KindSecret, ID: s.ID, NamespaceID: s.NamespaceID}
}
