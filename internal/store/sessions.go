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

// SessionByDigest finds a session by its token digest, with its
// principal's Holder.
func (q Q) SessionByDigest(ctx context.Context, digest string) (occ.Session, Holder, error) {
	return q.heldSession(ctx, `s.digest = $1`, digest)
}

// SessionByID finds a session by its ID (the native admin proxy's shared
// token names its session by ID, see app.NativeAdminSession), with its
// principal's Holder.
func (q Q) SessionByID(ctx context.Context, id string) (occ.Session, Holder, error) {
	return q.heldSession(ctx, `s.id = $1`, id)
}

// heldSession reads the session where holds and its principal's Holder in
// one statement.
func (q Q) heldSession(ctx context.Context, where string, arg string) (occ.Session, Holder, error) {
	var s occ.Session
	var hr holderRow
	var created, expires int64
	var revoked sql.NullInt64
	err := q.q.QueryRowContext(ctx, `SELECT s.id, s.principal_id, s.digest, s.created_at, s.expires_at, s.revoked_at, `+holderCols+`
		FROM sessions s JOIN principals p ON p.id = s.principal_id WHERE `+where, arg).
		Scan(append([]any{&s.ID, &s.PrincipalID, &s.Digest, &created, &expires, &revoked}, hr.dests()...)...)
	s.CreatedAt, s.ExpiresAt, s.RevokedAt = occ.FromMillis(created), occ.FromMillis(expires), timePtr(revoked)
	return s, hr.holder(), classify(err)
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
