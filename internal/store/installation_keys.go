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

// InstallationKeys lists every named key's ciphertext.
func (q Q) InstallationKeys(ctx context.Context) ([]SealedCredential, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT name, '', ciphertext FROM installation_keys ORDER BY name`)
	return collect(rs, err, func(r rowScanner) (SealedCredential, error) {
		var c SealedCredential
		return c, r.Scan(&c.ID, &c.NamespaceID, &c.Ciphertext)
	})
}

// ResealInstallationKey replaces a key's ciphertext if it is still the one read.
func (q Q) ResealInstallationKey(ctx context.Context, name, old, sealed string) error {
	err := affected(q.q.ExecContext(ctx, `UPDATE installation_keys SET ciphertext = $1 WHERE name = $2 AND ciphertext = $3`, sealed, name, old))
	if err == ErrNotFound {
		return ErrStale
	}
	return err
}
