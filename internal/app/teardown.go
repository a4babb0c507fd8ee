package app

import (
	"context"
	"github.com/openclaw/occ/internal/audit"

	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// teardownRetry handles a DELETE of a resource already deleting (a
// Namespace or an Agent): queued or running work is left alone; after a
// failure the initiator refills the attempt budget, and another permitted
// caller takes over only once the initiator has lost the delete permission.
// It returns a refusal (already audited) for a caller who may not retry.
func (a *App) teardownRetry(ctx context.Context, tx *store.Tx, c occ.Caller, res occ.ResourceRef, perm occ.Permission,
	action string, enqueue func(actorID string) error) (refused error, err error) {
	td, err := tx.GetTeardown(ctx, res.ID)
	if err != nil {
		return nil, notFoundOr(err)
	}
	if td.State != occ.TeardownFailed {
		return nil, nil
	}
	act := action + ".retry"
	if td.ActorID != c.PrincipalID {
		initiator, err := iam.DecideIn(ctx, tx, occ.Caller{PrincipalID: td.ActorID}, perm, res)
		if err != nil {
			return nil, err
		}
		if initiator.Allowed {
			ev := audit.Denial(act, c.PrincipalID, res, "DELETION_RETRY_OWNED", map[string]any{"initiatingActorId": td.ActorID})
			refusal := occ.E(occ.CodeForbidden, "Only the caller who started this deletion can retry it while it still holds the delete permission.")
			return refusal, a.record(ctx, tx, ev)
		}
		act = action + ".takeover"
	}
	previous := td.ActorID
	td.ActorID, td.State, td.Attempts, td.LastCode, td.UpdatedAt = c.PrincipalID, occ.TeardownQueued, 0, "", a.now()
	if err := tx.UpsertTeardown(ctx, td); err != nil {
		return nil, occ.Unavailable(err)
	}
	if err := enqueue(c.PrincipalID); err != nil {
		return nil, occ.Unavailable(err)
	}
	return nil, a.record(ctx, tx, occ.AuditEvent{Action: act, ActorID: c.PrincipalID, Resource: res,
		Details: map[string]any{"initiatingActorId": previous}})
}
