package store

import (
	"context"
	"database/sql"

	"github.com/openclaw/occ/internal/occ"
)

// InsertSession stores a session by its token digest.
func (q Q) InsertSession(ctx context.Context, s occ.Session) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO sessions (id, principal_id, digest, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
		s.ID, s.PrincipalID, s.Digest, occ.Millis(s.CreatedAt), occ.Millis(s.ExpiresAt))
	return classify(err)
}

// SessionByDigest finds a session by its token digest.
func (q Q) SessionByDigest(ctx context.Context, digest string) (occ.Session, error) {
	var s occ.Session
	var created, expires int64
	var revoked sql.NullInt64
	err := q.q.QueryRowContext(ctx, `SELECT id, principal_id, digest, created_at, expires_at, revoked_at FROM sessions WHERE digest = $1`,
		digest).Scan(&s.ID, &s.PrincipalID, &s.Digest, &created, &expires, &revoked)
	s.CreatedAt, s.ExpiresAt, s.RevokedAt = occ.FromMillis(created), occ.FromMillis(expires), timePtr(revoked)
	return s, classify(err)
}

// SessionByID finds a session by its ID (the native admin proxy's shared
// token names its session by ID, see app.NativeAdminSession).
func (q Q) SessionByID(ctx context.Context, id string) (occ.Session, error) {
	var s occ.Session
	var created, expires int64
	var revoked sql.NullInt64
	err := q.q.QueryRowContext(ctx, `SELECT id, principal_id, digest, created_at, expires_at, revoked_at FROM sessions WHERE id = $1`,
		id).Scan(&s.ID, &s.PrincipalID, &s.Digest, &created, &expires, &revoked)
	s.CreatedAt, s.ExpiresAt, s.RevokedAt = occ.FromMillis(created), occ.FromMillis(expires), timePtr(revoked)
	return s, classify(err)
}

// RevokeSession ends one session.
func (q Q) RevokeSession(ctx context.Context, id string, at int64) error {
	return affected(q.q.ExecContext(ctx, `UPDATE sessions SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2`, at, id))
}

// RevokePrincipalSessions ends every session of a principal.
func (q Q) RevokePrincipalSessions(ctx context.Context, principalID string, at int64) error {
	_, err := q.q.ExecContext(ctx, `UPDATE sessions SET revoked_at = $1 WHERE principal_id = $2 AND revoked_at IS NULL`, at, principalID)
	return classify(err)
}
