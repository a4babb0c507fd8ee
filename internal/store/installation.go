package store

import (
	"context"

	"github.com/openclaw/occ/internal/occ"
)

// startupLockKey is the PostgreSQL advisory lock that serialises start-up
// writes when several replicas start at once (migrationLockKey's sibling).
const startupLockKey = 7_242_001_332

// LockStartup makes tx wait for, and then hold until it ends, the lock of
// start-up writes (bootstrap, the built-in roles' sync), so replicas
// starting at once do them one after the other, each seeing what the one
// before committed. On PostgreSQL it is a transaction advisory lock; a
// SQLite write transaction already excludes every other.
func (t *Tx) LockStartup(ctx context.Context) error {
	if t.dialect != Postgres {
		return nil
	}
	_, err := t.tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", startupLockKey)
	return classify(err)
}

// InsertInstallation records the one installation; a second insert conflicts.
func (q Q) InsertInstallation(ctx context.Context, in occ.Installation) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO installation (id, name, created_at) VALUES ($1, $2, $3)`,
		in.ID, in.Name, occ.Millis(in.CreatedAt))
	return classify(err)
}

// GetInstallation returns the installation, or ErrNotFound before bootstrap.
func (q Q) GetInstallation(ctx context.Context) (occ.Installation, error) {
	var in occ.Installation
	var created int64
	err := q.q.QueryRowContext(ctx, `SELECT id, name, created_at FROM installation`).Scan(&in.ID, &in.Name, &created)
	in.CreatedAt = occ.FromMillis(created)
	return in, classify(err)
}
