package store

import "context"

// PutInstallationKey stores a named key's ciphertext unless one exists
// (replicas starting together keep the first).
func (q Q) PutInstallationKey(ctx context.Context, name, ciphertext string, at int64) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO installation_keys (name, ciphertext, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO NOTHING`, name, ciphertext, at)
	return classify(err)
}

// GetInstallationKey returns a named key's ciphertext.
func (q Q) GetInstallationKey(ctx context.Context, name string) (string, error) {
	var c string
	err := q.q.QueryRowContext(ctx, `SELECT ciphertext FROM installation_keys WHERE name = $1`, name).Scan(&c)
	return c, classify(err)
}
