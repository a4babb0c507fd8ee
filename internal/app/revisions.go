package app

import (
	"context"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

func revisionRef(nsID, id string) occ.ResourceRef {
	return occ.ResourceRef{Kind: occ.KindAgentRevision, ID: id, NamespaceID: nsID}
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
		func(r store.RevisionRow) occ.ResourceRef { return revisionRef(nsID, r.ID) }, store.DecodeRevision)
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
	return store.DecodeRevision(row), nil
}
