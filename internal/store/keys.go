package store

import (
	"context"
	"database/sql"

	"github.com/openclaw/occ/internal/occ"
)

const keyCols = `id, principal_id, namespace_id, name, lookup, digest, created_by, created_at, expires_at, revoked_at`

func scanKey(r rowScanner) (occ.ServiceKey, error) {
	var k occ.ServiceKey
	var ns sql.NullString
	var created, expires int64
	var revoked sql.NullInt64
	err := r.Scan(&k.ID, &k.PrincipalID, &ns, &k.Name, &k.Lookup, &k.Digest, &k.CreatedBy, &created, &expires, &revoked)
	k.NamespaceID = str(ns)
	k.CreatedAt, k.ExpiresAt, k.RevokedAt = occ.FromMillis(created), occ.FromMillis(expires), timePtr(revoked)
	return k, classify(err)
}

// InsertServiceKey stores a key's digest and metadata.
func (q Q) InsertServiceKey(ctx context.Context, k occ.ServiceKey) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO service_keys (`+keyCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		k.ID, k.PrincipalID, nullStr(k.NamespaceID), k.Name, k.Lookup, k.Digest, k.CreatedBy,
		occ.Millis(k.CreatedAt), occ.Millis(k.ExpiresAt), nullTime(k.RevokedAt))
	return classify(err)
}

// HeldKey is a service key and its Holder, read in one statement.
type HeldKey struct {
	occ.ServiceKey
	Holder Holder
}

// ServiceKeysByLookup returns every key sharing a lookup prefix, each with
// its principal's Holder (one round trip: every API request makes it).
func (q Q) ServiceKeysByLookup(ctx context.Context, lookup string) ([]HeldKey, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT `+qualified("k", keyCols)+`, `+holderCols+` FROM service_keys k
		JOIN principals p ON p.id = k.principal_id WHERE k.lookup = $1`, lookup)
	return collect(rs, err, func(r rowScanner) (HeldKey, error) {
		var hr holderRow
		k, err := scanKey(extraScanner{r, hr.dests()})
		return HeldKey{ServiceKey: k, Holder: hr.holder()}, err
	})
}

// GetServiceKey returns one key's metadata.
func (q Q) GetServiceKey(ctx context.Context, id string) (occ.ServiceKey, error) {
	return scanKey(q.q.QueryRowContext(ctx, `SELECT `+keyCols+` FROM service_keys WHERE id = $1`, id))
}

// ListServiceKeys returns keys after the cursor.
func (q Q) ListServiceKeys(ctx context.Context, after Cursor, limit int) ([]occ.ServiceKey, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT `+keyCols+` FROM service_keys
		WHERE created_at > $1 OR (created_at = $1 AND id > $2) ORDER BY created_at, id LIMIT $3`,
		after.CreatedAt, after.ID, limit)
	return collect(rs, err, scanKey)
}

// RevokeServiceKey marks a key revoked (idempotent on an already revoked key).
func (q Q) RevokeServiceKey(ctx context.Context, id string, at int64) error {
	return affected(q.q.ExecContext(ctx,
		`UPDATE service_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2`, at, id))
}
