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
	// OutcomePending records an intent: the action is about to take
	// effect outside occ's database, and a later event of the same action
	// (whose details name this one as intentId) records how it ended.
	OutcomePending AuditOutcome = "pending"
)

// AuditOutcomes is the closed set of audit outcomes.
var AuditOutcomes = []AuditOutcome{OutcomeSuccess, OutcomeDenied, OutcomeFailure, OutcomePending}

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
