// Package audit builds, redacts and appends audit events. Every mutation
// appends its event in the same transaction as the change, so an event that
// cannot be written fails the change.
package audit

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openclaw/occ/internal/occ"
)

// Appender is where events go: a store transaction, or the store itself for a
// lone event such as a denial.
type Appender interface {
	InsertAuditEvent(ctx context.Context, e occ.AuditEvent) error
}

// Append redacts e's details, fills its ID, time, request ID and (when
// unset) kind mutation and outcome success, and writes it.
func Append(ctx context.Context, to Appender, e occ.AuditEvent) error {
	if e.ID == "" {
		e.ID = occ.NewID(occ.PrefixAudit)
	}
	if e.OccurredAt.IsZero() {
		e.OccurredAt = time.Now()
	}
	if e.Kind == "" {
		e.Kind = occ.AuditMutation
	}
	if e.Outcome == "" {
		e.Outcome = occ.OutcomeSuccess
	}
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details = Redact(e.Details)
	if e.RequestID == "" {
		e.RequestID = occ.RequestIDFrom(ctx)
	}
	if e.NamespaceID == "" {
		e.NamespaceID = e.Resource.NamespaceID
	}
	return to.InsertAuditEvent(ctx, e)
}

// Denial builds the authorization_denial event of a refused action: who
// was refused, on which resource, with a fixed reason code; details add
// what explains the decision (never a credential).
func Denial(action, actorID string, res occ.ResourceRef, reasonCode string, details map[string]any) occ.AuditEvent {
	denials.WithLabelValues(action, reasonCode).Inc()
	return occ.AuditEvent{Kind: occ.AuditDenial, Action: action, Outcome: occ.OutcomeDenied, ActorID: actorID,
		Resource: res, ReasonCode: reasonCode, Details: details}
}

// denials counts every denial made, by action and reason code (both from
// closed vocabularies), for occ_authorization_denials_total.
var denials = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "occ_authorization_denials_total",
	Help: "Denied requests and operations by action and reason code (each is also an audit event)."},
	[]string{"action", "reason"})

// DenialCounter is the counter of denials, for a registry.
func DenialCounter() prometheus.Collector { return denials }
