package store

import (
	"context"
	"database/sql"

	"github.com/openclaw/occ/internal/occ"
)

const serviceAccountCols = `id, namespace_id, name, backend_id, credential_kind, credential_issued_at, credential_expires_at,
	created_by, created_at, updated_at, version`

func scanServiceAccount(r rowScanner) (occ.ServiceAccount, error) {
	var s occ.ServiceAccount
	var kind sql.NullString
	var issued, expires sql.NullInt64
	var created, updated int64
	err := r.Scan(&s.ID, &s.NamespaceID, &s.Name, &s.BackendID, &kind, &issued, &expires,
		&s.CreatedBy, &created, &updated, &s.Version)
	if err != nil {
		return s, classify(err)
	}
	s.CreatedAt, s.UpdatedAt = occ.FromMillis(created), occ.FromMillis(updated)
	if kind.Valid {
		s.Credential = &occ.IssuedCredential{Kind: kind.String, IssuedAt: occ.FromMillis(issued.Int64), ExpiresAt: timePtr(expires)}
	}
	return s, nil
}

// InsertServiceAccount adds a service account without a credential; a name
// taken in its Namespace is ErrConflict.
func (q Q) InsertServiceAccount(ctx context.Context, s occ.ServiceAccount) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO service_accounts (id, namespace_id, name, backend_id, created_by, created_at, updated_at, version)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		s.ID, s.NamespaceID, s.Name, s.BackendID, s.CreatedBy, occ.Millis(s.CreatedAt), occ.Millis(s.UpdatedAt), s.Version)
	return classify(err)
}

// GetServiceAccount returns one service account of a Namespace (never its
// credential).
func (q Q) GetServiceAccount(ctx context.Context, namespaceID, id string) (occ.ServiceAccount, error) {
	return scanServiceAccount(q.q.QueryRowContext(ctx,
		`SELECT `+serviceAccountCols+` FROM service_accounts WHERE namespace_id = $1 AND id = $2`, namespaceID, id))
}

// ListServiceAccounts returns up to limit service accounts of a Namespace
// after the cursor, in (created_at, id) order.
func (q Q) ListServiceAccounts(ctx context.Context, namespaceID string, after Cursor, limit int) ([]occ.ServiceAccount, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT `+serviceAccountCols+` FROM service_accounts
		WHERE namespace_id = $1 AND (created_at > $2 OR (created_at = $2 AND id > $3))
		ORDER BY created_at, id LIMIT $4`, namespaceID, after.CreatedAt, after.ID, limit)
	return collect(rs, err, scanServiceAccount)
}

// SetServiceAccountCredential stores the first credential of an account:
// its public metadata and its ciphertext (base64 text), and bumps the
// version. A missing account is ErrNotFound; one that already has a
// credential is ErrConflict.
func (q Q) SetServiceAccountCredential(ctx context.Context, namespaceID, id string, cred occ.IssuedCredential, ciphertext string, at int64) (occ.ServiceAccount, error) {
	err := affected(q.q.ExecContext(ctx, `UPDATE service_accounts SET credential_kind = $1, credential_ciphertext = $2,
		credential_issued_at = $3, credential_expires_at = $4, updated_at = $5, version = version + 1
		WHERE namespace_id = $6 AND id = $7 AND credential_ciphertext IS NULL`,
		cred.Kind, ciphertext, occ.Millis(cred.IssuedAt), nullTime(cred.ExpiresAt), at, namespaceID, id))
	if err == ErrNotFound {
		if _, gerr := q.GetServiceAccount(ctx, namespaceID, id); gerr == nil {
			return occ.ServiceAccount{}, ErrConflict
		}
	}
	if err != nil {
		return occ.ServiceAccount{}, err
	}
	return q.GetServiceAccount(ctx, namespaceID, id)
}

// ServiceAccountCiphertext returns the stored credential ciphertext of an
// account, for the code that delivers it (never for a response). An account
// without a credential is ErrNotFound.
func (q Q) ServiceAccountCiphertext(ctx context.Context, namespaceID, id string) (string, error) {
	var c sql.NullString
	err := q.q.QueryRowContext(ctx, `SELECT credential_ciphertext FROM service_accounts WHERE namespace_id = $1 AND id = $2`,
		namespaceID, id).Scan(&c)
	if err != nil {
		return "", classify(err)
	}
	if !c.Valid {
		return "", ErrNotFound
	}
	return c.String, nil
}

// DeleteServiceAccount removes a service account and its credential.
func (q Q) DeleteServiceAccount(ctx context.Context, namespaceID, id string) error {
	return affected(q.q.ExecContext(ctx, `DELETE FROM service_accounts WHERE namespace_id = $1 AND id = $2`, namespaceID, id))
}

// SealedCredential is one encrypted value outside the secrets table that
// key rotation re-encrypts.
type SealedCredential struct {
	ID          string
	NamespaceID string
	Ciphertext  string
}

// SealedAccountCredentials lists issued account credentials after an ID.
func (q Q) SealedAccountCredentials(ctx context.Context, afterID string, limit int) ([]SealedCredential, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT id, namespace_id, credential_ciphertext FROM service_accounts
		WHERE credential_ciphertext IS NOT NULL AND id > $1 ORDER BY id LIMIT $2`, afterID, limit)
	return collect(rs, err, func(r rowScanner) (SealedCredential, error) {
		var c SealedCredential
		return c, r.Scan(&c.ID, &c.NamespaceID, &c.Ciphertext)
	})
}

// ResealAccountCredential replaces a credential's ciphertext if it is still
// the one read (ErrStale otherwise).
func (q Q) ResealAccountCredential(ctx context.Context, id, old, sealed string) error {
	err := affected(q.q.ExecContext(ctx, `UPDATE service_accounts SET credential_ciphertext = $1 WHERE id = $2 AND credential_ciphertext = $3`,
		sealed, id, old))
	if err == ErrNotFound {
		return ErrStale
	}
	return err
}
