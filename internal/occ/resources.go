package occ

import "time"

// Installation is the one occ installation a database holds.
type Installation struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

// NamespaceStatus is the lifecycle state of a Namespace.
type NamespaceStatus string

// Namespace statuses. A deleted Namespace is a tombstone and never shown.
const (
	NamespaceProvisioning NamespaceStatus = "provisioning"
	NamespaceReady        NamespaceStatus = "ready"
	NamespaceFailed       NamespaceStatus = "failed"
	NamespaceDeleting     NamespaceStatus = "deleting"
)

// Namespace is a tenant that owns resources.
type Namespace struct {
	ID        string
	Name      string
	Status    NamespaceStatus
	CreatedAt time.Time
	UpdatedAt time.Time
	Version   int64
}

// Ref is the resource reference of the Namespace itself.
func (n Namespace) Ref() ResourceRef {
	return ResourceRef{Kind: KindNamespace, ID: n.ID, NamespaceID: n.ID}
}

// PrincipalKind tells humans from service principals.
type PrincipalKind string

// Principal kinds.
const (
	PrincipalHuman   PrincipalKind = "human"
	PrincipalService PrincipalKind = "service"
)

// Principal is an identity that can be granted permissions: a human
// (installation-wide) or a service principal (installation- or
// namespace-scoped; an Agent owns exactly one).
type Principal struct {
	ID           string
	Kind         PrincipalKind
	Name         string
	Email        string // humans only
	PasswordHash string // humans only; never leaves the server
	NamespaceID  string // "" = installation scope
	AgentID      string // set for an Agent's service principal
	Disabled     bool
	CreatedAt    time.Time
	UpdatedAt    time.Time
	Version      int64
}

// Target names one exact resource a binding or restriction is aimed at.
type Target struct {
	Kind Kind
	ID   string
}

// Role is a named set of permissions.
type Role struct {
	ID          string
	Name        string
	NamespaceID string // "" = installation scope
	Builtin     bool
	Permissions []Permission
	CreatedAt   time.Time
}

// Binding grants a role to a principal at installation scope (NamespaceID
// "") or namespace scope, untargeted or aimed at one exact resource.
type Binding struct {
	ID          string
	PrincipalID string
	RoleID      string
	NamespaceID string
	Target      *Target
	CreatedBy   string
	CreatedAt   time.Time
}

// Restriction denies one permission to one principal on a scope or exact
// resource, overriding every grant.
type Restriction struct {
	ID          string
	PrincipalID string
	Permission  Permission
	NamespaceID string
	Target      *Target
	CreatedBy   string
	CreatedAt   time.Time
}

// ServiceKey is a hashed API key acting as one service principal.
type ServiceKey struct {
	ID          string
	PrincipalID string
	NamespaceID string // pin; "" = none
	Name        string
	Lookup      string // short non-secret prefix used to find the row
	Digest      string // hex SHA-256 of the whole key
	CreatedBy   string
	CreatedAt   time.Time
	ExpiresAt   time.Time
	RevokedAt   *time.Time
}

// Session is a signed-in browser session; only the token's digest is stored.
type Session struct {
	ID          string
	PrincipalID string
	Digest      string
	CreatedAt   time.Time
	ExpiresAt   time.Time
	RevokedAt   *time.Time
}

// Teardown tracks one deletion's initiator, state and attempts.
type Teardown struct {
	ResourceID   string
	ResourceKind Kind
	NamespaceID  string
	ActorID      string
	State        TeardownState
	Attempts     int
	LastCode     string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// TeardownState is where a deletion stands.
type TeardownState string

// Teardown states.
const (
	TeardownQueued    TeardownState = "queued"
	TeardownFailed    TeardownState = "failed"
	TeardownSucceeded TeardownState = "succeeded"
)
