package store

import "context"

// ClaimWork takes the claim on a resource until expiresAt, replacing only
// an expired claim. It reports false while another live claim holds it.
func (q Q) ClaimWork(ctx context.Context, resourceID, token string, now, expiresAt int64) (bool, error) {
	res, err := q.q.ExecContext(ctx, `INSERT INTO work_claims (resource_id, token, expires_at) VALUES ($1, $2, $3)
		ON CONFLICT (resource_id) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at
		WHERE work_claims.expires_at < $4`, resourceID, token, expiresAt, now)
	if err != nil {
		return false, classify(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ReleaseWork gives a claim up, if this token still holds it.
func (q Q) ReleaseWork(ctx context.Context, resourceID, token string) error {
	_, err := q.q.ExecContext(ctx, `DELETE FROM work_claims WHERE resource_id = $1 AND token = $2`, resourceID, token)
	return classify(err)
}

// ClearWorkClaims drops every claim; only a process that owns the whole
// database (the SQLite file) may do this, at start.
func (q Q) ClearWorkClaims(ctx context.Context) error {
	_, err := q.q.ExecContext(ctx, `DELETE FROM work_claims`)
	return classify(err)
}
