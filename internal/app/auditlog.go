package app

import (
	"context"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// AuditQuery filters audit events.
type AuditQuery struct {
	NamespaceID string
	Action      string
	Kind        string
	Outcome     string
	ActorID     string
	ResourceID  string
	Since       time.Time
	Until       time.Time
}

// ListAuditEvents returns installation-wide events (installation:administer)
// or, with scopeNS set, one Namespace's events (namespace:administer), newest
// first.
func (a *App) ListAuditEvents(ctx context.Context, c occ.Caller, scopeNS string, q AuditQuery, page PageRequest) (Page[occ.AuditEvent], error) {
	if scopeNS == "" {
		if err := a.require(ctx, c, occ.P(occ.KindInstallation, occ.ActionAdminister), a.installationRef(), "audit_events.list", nil); err != nil {
			return Page[occ.AuditEvent]{}, err
		}
	} else {
		if err := a.require(ctx, c, occ.P(occ.KindNamespace, occ.ActionAdminister), namespaceRef(scopeNS), "audit_events.list", a.seeNamespace(scopeNS)); err != nil {
			return Page[occ.AuditEvent]{}, err
		}
		if _, err := a.st.GetNamespace(ctx, scopeNS); err != nil {
			return Page[occ.AuditEvent]{}, notFoundOr(err)
		}
		q.NamespaceID = scopeNS
	}
	f := store.AuditFilter{NamespaceID: q.NamespaceID, Action: q.Action, Kind: q.Kind, Outcome: q.Outcome,
		ActorID: q.ActorID, ResourceID: q.ResourceID}
	if !q.Since.IsZero() {
		f.SinceMillis = occ.Millis(q.Since)
	}
	if !q.Until.IsZero() {
		f.UntilMillis = occ.Millis(q.Until)
	}
	fetch := func(ctx context.Context, before store.Cursor, limit int) ([]occ.AuditEvent, error) {
		f.Before, f.Limit = before, limit
		return a.st.ListAuditEvents(ctx, f)
	}
	return paginate(ctx, page, fetch,
		func(e occ.AuditEvent) (time.Time, string) { return e.OccurredAt, e.ID },
		func(occ.AuditEvent) bool { return true })
}

// Installation returns the installation (installation:read).
func (a *App) Installation(ctx context.Context, c occ.Caller) (occ.Installation, error) {
	if err := a.require(ctx, c, occ.P(occ.KindInstallation, occ.ActionRead), a.installationRef(), "installation.read", nil); err != nil {
		return occ.Installation{}, err
	}
	in, err := a.st.GetInstallation(ctx)
	return in, notFoundOr(err)
}

// Ready checks the database, for /readyz.
func (a *App) Ready(ctx context.Context) error {
	if err := a.st.Ping(ctx); err != nil {
		return occ.Unavailable(err)
	}
	return nil
}

// RequireInstallationAdmin checks installation:administer, for handlers
// outside the API document such as /metrics.
func (a *App) RequireInstallationAdmin(ctx context.Context, c occ.Caller, action string) error {
	return a.require(ctx, c, occ.P(occ.KindInstallation, occ.ActionAdminister), a.installationRef(), action, nil)
}

// auditExportPage is how many events an export reads at once.
const auditExportPage = 1000

// AuditExport reads the events of an export page after page.
type AuditExport struct {
	a     *App
	r     store.AuditRange
	ended bool
}

// ExportAuditEvents opens an export of every audit event with since <=
// occurredAt < until (a zero bound is open), oldest first, for an
// installation administrator (installation:administer, as listing).
func (a *App) ExportAuditEvents(ctx context.Context, c occ.Caller, since, until time.Time) (*AuditExport, error) {
	if err := a.require(ctx, c, occ.P(occ.KindInstallation, occ.ActionAdminister), a.installationRef(), "audit_events.export", nil); err != nil {
		return nil, err
	}
	if !since.IsZero() && !until.IsZero() && !since.Before(until) {
		return nil, occ.Invalid("since must be before until.", occ.Detail{Path: "/until", Code: occ.DetailInvalidValue})
	}
	r := store.AuditRange{Limit: auditExportPage}
	if !since.IsZero() {
		r.SinceMillis = occ.Millis(since)
	}
	if !until.IsZero() {
		r.UntilMillis = occ.Millis(until)
	}
	return &AuditExport{a: a, r: r}, nil
}

// Next returns the next events in order; none once the export is done.
func (x *AuditExport) Next(ctx context.Context) ([]occ.AuditEvent, error) {
	if x.ended {
		return nil, nil
	}
	evs, err := x.a.st.AuditEventsInOrder(ctx, x.r)
	if err != nil {
		return nil, occ.Unavailable(err)
	}
	if len(evs) < x.r.Limit {
		x.ended = true
	}
	if len(evs) > 0 {
		last := evs[len(evs)-1]
		x.r.After = store.Cursor{CreatedAt: occ.Millis(last.OccurredAt), ID: last.ID}
	}
	return evs, nil
}
