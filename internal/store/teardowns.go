package store

import (
	"context"
	"database/sql"

	"github.com/openclaw/occ/internal/occ"
)

// UpsertTeardown records (or resets) a deletion's initiator and state.
func (q Q) UpsertTeardown(ctx context.Context, t occ.Teardown) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO teardowns (resource_id, resource_kind, namespace_id, actor_id, state, attempts, last_code, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (resource_id) DO UPDATE SET actor_id = excluded.actor_id, state = excluded.state,
			attempts = excluded.attempts, last_code = excluded.last_code, updated_at = excluded.updated_at`,
		t.ResourceID, string(t.ResourceKind), t.NamespaceID, t.ActorID, string(t.State), t.Attempts, nullStr(t.LastCode),
		occ.Millis(t.CreatedAt), occ.Millis(t.UpdatedAt))
	return classify(err)
}

// GetTeardown returns a deletion's bookkeeping.
func (q Q) GetTeardown(ctx context.Context, resourceID string) (occ.Teardown, error) {
	var t occ.Teardown
	var code sql.NullString
	var created, updated int64
	err := q.q.QueryRowContext(ctx, `SELECT resource_id, resource_kind, namespace_id, actor_id, state, attempts, last_code, created_at, updated_at
		FROM teardowns WHERE resource_id = $1`, resourceID).Scan(&t.ResourceID, &t.ResourceKind, &t.NamespaceID, &t.ActorID,
		&t.State, &t.Attempts, &code, &created, &updated)
	t.LastCode, t.CreatedAt, t.UpdatedAt = str(code), occ.FromMillis(created), occ.FromMillis(updated)
	return t, classify(err)
}

// DeleteTeardown removes a finished deletion's bookkeeping.
func (q Q) DeleteTeardown(ctx context.Context, resourceID string) error {
	_, err := q.q.ExecContext(ctx, `DELETE FROM teardowns WHERE resource_id = $1`, resourceID)
	return classify(err)
}
