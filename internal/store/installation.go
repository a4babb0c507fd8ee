package store

import (
	"context"

	"github.com/openclaw/occ/internal/occ"
)

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
