package occ

import "time"

// AuditKind classifies an audit event.
type AuditKind string

// Audit event kinds.
const (
	AuditBootstrap AuditKind = "bootstrap"
	AuditMutation  AuditKind = "mutation"
	AuditDenial    AuditKind = "authorization_denial"
	AuditReconcile AuditKind = "reconcile"
	AuditAccess    AuditKind = "access"
)

// AuditOutcome is how the audited action ended.
type AuditOutcome string

// Audit outcomes.
const (
	OutcomeSuccess AuditOutcome = "success"
	OutcomeDenied  AuditOutcome = "denied"
	OutcomeFailure AuditOutcome = "failure"
)

// AuditEvent is one append-only audit record.
type AuditEvent struct {
	ID          string
	OccurredAt  time.Time
	Kind        AuditKind
	Action      string // e.g. "namespaces.create"
	Outcome     AuditOutcome
	ActorID     string
	NamespaceID string
	Resource    ResourceRef
	RequestID   string
	ReasonCode  string
	Details     map[string]any
}
