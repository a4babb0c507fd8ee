package app

import (
	"context"
	"encoding/json"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// revisionSchema is the encoding version of stored revision snapshots.
const revisionSchema = 1

func revisionRef(nsID, id string) occ.ResourceRef {
	return occ.ResourceRef{Kind: occ.KindAgentRevision, ID: id, NamespaceID: nsID}
}

// EncodeRevision turns a revision into its stored row.
func EncodeRevision(r occ.Revision) (store.RevisionRow, error) {
	snap, err := json.Marshal(r.Snapshot)
	if err != nil {
		return store.RevisionRow{}, err
	}
	return store.RevisionRow{ID: r.ID, AgentID: r.AgentID, NamespaceID: r.NamespaceID, Number: r.Number, SchemaVersion: revisionSchema,
		Snapshot: string(snap), CreatedBy: r.CreatedBy, CreatedAt: occ.Millis(r.CreatedAt)}, nil
}

// decodeRevision reads a stored revision; an unreadable snapshot is
// omitted and named, the readable metadata kept.
func decodeRevision(row store.RevisionRow) occ.Revision {
	r := occ.Revision{ID: row.ID, AgentID: row.AgentID, NamespaceID: row.NamespaceID, Number: row.Number, CreatedBy: row.CreatedBy,
		CreatedAt: occ.FromMillis(row.CreatedAt)}
	var s occ.RevisionSnapshot
	if row.SchemaVersion != revisionSchema || json.Unmarshal([]byte(row.Snapshot), &s) != nil || s.Configuration.Document == nil {
		r.ReadError = &occ.ReadError{Code: occ.CodeSavedConfigurationUnreadable, Field: "configuration"}
		return r
	}
	r.Snapshot = &s
	return r
}

// ListRevisions lists an Agent's revisions the caller may read; the caller
// must read the Agent first.
func (a *App) ListRevisions(ctx context.Context, c occ.Caller, nsID, agentID string, page PageRequest) (Page[occ.Revision], error) {
	if err := a.require(ctx, c, occ.P(occ.KindAgent, occ.ActionRead), agentRef(nsID, agentID), "agent_revisions.list", a.seeAgent(nsID, agentID)); err != nil {
		return Page[occ.Revision]{}, err
	}
	if _, err := a.st.GetAgent(ctx, nsID, agentID); err != nil {
		return Page[occ.Revision]{}, notFoundOr(err)
	}
	return readable(ctx, a, c, occ.KindAgentRevision, page,
		func(ctx context.Context, after store.Cursor, limit int) ([]store.RevisionRow, error) {
			return a.st.ListRevisions(ctx, nsID, agentID, after, limit)
		},
		func(r store.RevisionRow) (time.Time, string) { return rowPos(r.CreatedAt, r.ID) },
		func(r store.RevisionRow) occ.ResourceRef { return revisionRef(nsID, r.ID) }, decodeRevision)
}

// GetRevision returns one revision (exact agent_revision:read).
func (a *App) GetRevision(ctx context.Context, c occ.Caller, nsID, agentID, id string) (occ.Revision, error) {
	see := seeExact(revisionRef(nsID, id), func(ctx context.Context) error { _, err := a.st.GetRevision(ctx, nsID, agentID, id); return err })
	if err := a.require(ctx, c, occ.P(occ.KindAgentRevision, occ.ActionRead), revisionRef(nsID, id), "agent_revisions.read", see); err != nil {
		return occ.Revision{}, err
	}
	row, err := a.st.GetRevision(ctx, nsID, agentID, id)
	if err != nil {
		return occ.Revision{}, notFoundOr(err)
	}
	return decodeRevision(row), nil
}

// DecodeRevision reads a stored revision (for the worker).
func DecodeRevision(row store.RevisionRow) occ.Revision { return decodeRevision(row) }

// DecodeAgent reads a stored Agent (for the worker).
func DecodeAgent(row store.AgentRow) occ.Agent { return decodeAgent(row) }

// EncodeAgent turns an Agent into its stored row (for the worker).
func EncodeAgent(g occ.Agent) (store.AgentRow, error) { return encodeAgent(g) }
