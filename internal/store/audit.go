package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openclaw/occ/internal/occ"
)

// InsertAuditEvent appends one audit event. Callers append inside the
// transaction of the change they record; there it is sent with the
// transaction's next statement or its commit (execDeferred), and its
// failure fails the transaction.
func (q Q) InsertAuditEvent(ctx context.Context, e occ.AuditEvent) error {
	details, err := json.Marshal(e.Details)
	if err != nil {
		return fmt.Errorf("encode audit details: %w", err)
	}
	return q.execDeferred(ctx, `INSERT INTO audit_events (id, occurred_at, kind, action, outcome, actor_id, namespace_id,
		resource_kind, resource_id, request_id, reason_code, details) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		e.ID, occ.Millis(e.OccurredAt), e.Kind, e.Action, e.Outcome, e.ActorID, nullStr(e.NamespaceID),
		string(e.Resource.Kind), e.Resource.ID, nullStr(e.RequestID), nullStr(e.ReasonCode), string(details))
}

// AuditFilter selects audit events; empty fields do not filter.
type AuditFilter struct {
	NamespaceID string // "" = every Namespace and the installation
	Action      string
	Kind        string
	Outcome     string
	ActorID     string
	ResourceID  string
	SinceMillis int64 // inclusive; 0 = no bound
	UntilMillis int64 // exclusive; 0 = no bound
	Before      Cursor
	Limit       int
}

// ListAuditEvents returns matching events, newest first, before the cursor.
func (q Q) ListAuditEvents(ctx context.Context, f AuditFilter) ([]occ.AuditEvent, error) {
	var where []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", fmt.Sprintf("$%d", len(args))))
	}
	for _, c := range []struct {
		col, v string
	}{{"namespace_id", f.NamespaceID}, {"action", f.Action}, {"kind", f.Kind}, {"outcome", f.Outcome},
		{"actor_id", f.ActorID}, {"resource_id", f.ResourceID}} {
		if c.v != "" {
			add(c.col+" = ?", c.v)
		}
	}
	if f.SinceMillis > 0 {
		add("occurred_at >= ?", f.SinceMillis)
	}
	if f.UntilMillis > 0 {
		add("occurred_at < ?", f.UntilMillis)
	}
	if f.Before.ID != "" {
		args = append(args, f.Before.CreatedAt, f.Before.ID)
		n := len(args)
		where = append(where, fmt.Sprintf("(occurred_at < $%d OR (occurred_at = $%d AND id < $%d))", n-1, n-1, n))
	}
	query := `SELECT id, occurred_at, kind, action, outcome, actor_id, namespace_id, resource_kind, resource_id,
		request_id, reason_code, details FROM audit_events`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	args = append(args, f.Limit)
	query += fmt.Sprintf(" ORDER BY occurred_at DESC, id DESC LIMIT $%d", len(args))
	rs, err := q.q.QueryContext(ctx, query, args...)
	return collect(rs, err, scanAudit)
}

func scanAudit(r rowScanner) (occ.AuditEvent, error) {
	var e occ.AuditEvent
	var at int64
	var ns, req, reason sql.NullString
	var details string
	if err := r.Scan(&e.ID, &at, &e.Kind, &e.Action, &e.Outcome, &e.ActorID, &ns, &e.Resource.Kind, &e.Resource.ID,
		&req, &reason, &details); err != nil {
		return e, err
	}
	e.OccurredAt, e.NamespaceID, e.RequestID, e.ReasonCode = occ.FromMillis(at), str(ns), str(req), str(reason)
	e.Resource.NamespaceID = e.NamespaceID
	if err := json.Unmarshal([]byte(details), &e.Details); err != nil {
		return e, fmt.Errorf("decode audit details of %s: %w", e.ID, err)
	}
	return e, nil
}

// AuditRange selects audit events in time order for an export.
type AuditRange struct {
	SinceMillis int64  // inclusive; 0 = no bound
	UntilMillis int64  // exclusive; 0 = no bound
	After       Cursor // resume after this event (occurred_at, id); zero = from the start
	Limit       int
}

// AuditEventsInOrder returns up to Limit events of the range, oldest first
// (occurred_at, then id): the order of an export and of retention.
func (q Q) AuditEventsInOrder(ctx context.Context, r AuditRange) ([]occ.AuditEvent, error) {
	var where []string
	var args []any
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	if r.SinceMillis > 0 {
		where = append(where, "occurred_at >= "+arg(r.SinceMillis))
	}
	if r.UntilMillis > 0 {
		where = append(where, "occurred_at < "+arg(r.UntilMillis))
	}
	if r.After.ID != "" {
		at, id := arg(r.After.CreatedAt), arg(r.After.ID)
		where = append(where, fmt.Sprintf("(occurred_at > %s OR (occurred_at = %s AND id > %s))", at, at, id))
	}
	query := `SELECT id, occurred_at, kind, action, outcome, actor_id, namespace_id, resource_kind, resource_id,
		request_id, reason_code, details FROM audit_events`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY occurred_at, id LIMIT " + arg(r.Limit)
	rs, err := q.q.QueryContext(ctx, query, args...)
	return collect(rs, err, scanAudit)
}

// maxDeleteIDs bounds the IDs of one DELETE statement (both databases
// accept far more parameters).
const maxDeleteIDs = 500

// DeleteAuditEvents deletes the events with these IDs and returns how many
// it deleted. Only retention deletes audit events, and only once they were
// exported; run it in one transaction so a batch goes whole or not at all.
func (q Q) DeleteAuditEvents(ctx context.Context, ids []string) (int64, error) {
	var n int64
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), maxDeleteIDs)]
		ids = ids[len(chunk):]
		marks := make([]string, len(chunk))
		args := make([]any, len(chunk))
		for i, id := range chunk {
			marks[i], args[i] = fmt.Sprintf("$%d", i+1), id
		}
		res, err := q.q.ExecContext(ctx, `DELETE FROM audit_events WHERE id IN (`+strings.Join(marks, ", ")+`)`, args...)
		if err != nil {
			return n, classify(err)
		}
		k, err := res.RowsAffected()
		if err != nil {
			return n, classify(err)
		}
		n += k
	}
	return n, nil
}
