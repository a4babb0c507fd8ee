package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/openclaw/occ/internal/occ"
)

// Sealed is a Secret value as stored: a tink AEAD ciphertext and the ID of
// the keyset key that made it.
type Sealed struct {
	Ciphertext []byte
	KeyID      uint32
}

// SealedSecret is one row for re-encryption: what identifies it, its
// version and its ciphertext.
type SealedSecret struct {
	ID          string
	NamespaceID string
	Version     int64
	Sealed
}

// secretCols are the metadata columns; the ciphertext is selected only
// where a value is needed.
const secretCols = `id, namespace_id, name, version, created_by, created_at, updated_at`

func scanSecret(r rowScanner) (occ.Secret, error) {
	var s occ.Secret
	var created, updated int64
	err := r.Scan(&s.ID, &s.NamespaceID, &s.Name, &s.Version, &s.CreatedBy, &created, &updated)
	s.CreatedAt, s.UpdatedAt = occ.FromMillis(created), occ.FromMillis(updated)
	return s, classify(err)
}

func encodeCiphertext(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// ErrCiphertextEncoding is returned when a stored ciphertext is not base64.
var ErrCiphertextEncoding = errors.New("store: stored ciphertext is not base64")

func decodeCiphertext(id, s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("secret %s: %w", id, ErrCiphertextEncoding)
	}
	return b, nil
}

// InsertSecret stores a new Secret; a name taken in its Namespace is ErrConflict.
func (q Q) InsertSecret(ctx context.Context, s occ.Secret, v Sealed) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO secrets (`+secretCols+`, ciphertext, key_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		s.ID, s.NamespaceID, s.Name, s.Version, s.CreatedBy, occ.Millis(s.CreatedAt), occ.Millis(s.UpdatedAt),
		encodeCiphertext(v.Ciphertext), int64(v.KeyID))
	return classify(err)
}

// GetSecret returns a Secret's metadata; a Secret of another Namespace is
// ErrNotFound.
func (q Q) GetSecret(ctx context.Context, namespaceID, id string) (occ.Secret, error) {
	return scanSecret(q.q.QueryRowContext(ctx,
		`SELECT `+secretCols+` FROM secrets WHERE namespace_id = $1 AND id = $2`, namespaceID, id))
}

// GetSealedSecret returns a Secret's metadata and its ciphertext.
func (q Q) GetSealedSecret(ctx context.Context, namespaceID, id string) (occ.Secret, Sealed, error) {
	var s occ.Secret
	var created, updated, keyID int64
	var ct string
	err := q.q.QueryRowContext(ctx, `SELECT `+secretCols+`, ciphertext, key_id FROM secrets
		WHERE namespace_id = $1 AND id = $2`, namespaceID, id).
		Scan(&s.ID, &s.NamespaceID, &s.Name, &s.Version, &s.CreatedBy, &created, &updated, &ct, &keyID)
	if err != nil {
		return s, Sealed{}, classify(err)
	}
	s.CreatedAt, s.UpdatedAt = occ.FromMillis(created), occ.FromMillis(updated)
	b, err := decodeCiphertext(id, ct)
	return s, Sealed{Ciphertext: b, KeyID: uint32(keyID)}, err
}

// ListSecrets returns a Namespace's Secrets (metadata only) after the cursor.
func (q Q) ListSecrets(ctx context.Context, namespaceID string, after Cursor, limit int) ([]occ.Secret, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT `+secretCols+` FROM secrets
		WHERE namespace_id = $1 AND (created_at > $2 OR (created_at = $2 AND id > $3))
		ORDER BY created_at, id LIMIT $4`, namespaceID, after.CreatedAt, after.ID, limit)
	return collect(rs, err, scanSecret)
}

// UpdateSecretValue replaces the ciphertext when the stored version is
// still s.Version, and bumps it. A missing Secret is ErrNotFound, another
// version ErrStale.
func (q Q) UpdateSecretValue(ctx context.Context, s occ.Secret, v Sealed) (occ.Secret, error) {
	err := affected(q.q.ExecContext(ctx, `UPDATE secrets SET ciphertext = $1, key_id = $2, version = version + 1, updated_at = $3
		WHERE namespace_id = $4 AND id = $5 AND version = $6`,
		encodeCiphertext(v.Ciphertext), int64(v.KeyID), occ.Millis(s.UpdatedAt), s.NamespaceID, s.ID, s.Version))
	if err == ErrNotFound {
		if _, gerr := q.GetSecret(ctx, s.NamespaceID, s.ID); gerr == nil {
			return s, ErrStale
		}
	}
	if err != nil {
		return s, err
	}
	s.Version++
	return s, nil
}

// DeleteSecret removes a Secret.
func (q Q) DeleteSecret(ctx context.Context, namespaceID, id string) error {
	return affected(q.q.ExecContext(ctx, `DELETE FROM secrets WHERE namespace_id = $1 AND id = $2`, namespaceID, id))
}

// SealedSecretsNotUnder returns up to limit rows, in ID order after
// afterID, whose ciphertext was made by a key other than keyID: the work
// list of a key rotation. Every Namespace is included.
func (q Q) SealedSecretsNotUnder(ctx context.Context, keyID uint32, afterID string, limit int) ([]SealedSecret, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT id, namespace_id, version, ciphertext, key_id FROM secrets
		WHERE key_id <> $1 AND id > $2 ORDER BY id LIMIT $3`, int64(keyID), afterID, limit)
	return collect(rs, err, func(r rowScanner) (SealedSecret, error) {
		var s SealedSecret
		var ct string
		var k int64
		if err := r.Scan(&s.ID, &s.NamespaceID, &s.Version, &ct, &k); err != nil {
			return s, err
		}
		s.KeyID = uint32(k)
		// A ciphertext that is not even base64 stays nil: it cannot be
		// decrypted, and one bad row must not stop the others.
		s.Ciphertext, _ = decodeCiphertext(s.ID, ct)
		return s, nil
	})
}

// ResealSecret replaces a ciphertext with one of the same value under
// another key, when the row still has the version and key it was read
// with. The version and update time stay: the value did not change. A row
// that changed or went away is ErrStale.
func (q Q) ResealSecret(ctx context.Context, old SealedSecret, v Sealed) error {
	err := affected(q.q.ExecContext(ctx, `UPDATE secrets SET ciphertext = $1, key_id = $2
		WHERE id = $3 AND version = $4 AND key_id = $5`,
		encodeCiphertext(v.Ciphertext), int64(v.KeyID), old.ID, old.Version, int64(old.KeyID)))
	if err == ErrNotFound {
		return ErrStale
	}
	return err
}

// CountSecretsNotUnder counts Secrets whose ciphertext another key made.
func (q Q) CountSecretsNotUnder(ctx context.Context, keyID uint32) (int, error) {
	var n int
	err := q.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM secrets WHERE key_id <> $1`, int64(keyID)).Scan(&n)
	return n, err
}

// SecretBinders lists what binds a Secret, by kind: Configurations whose
// secretBindings name it and credential sources that reference it. (Agents
// and other binders are added here by the issues that introduce them.) The
// bindings of a Configuration are matched in their stored JSON text, so one
// whose bindings cannot be decoded still counts when it names the Secret.
func (q Q) SecretBinders(ctx context.Context, namespaceID, id string) ([]Owned, error) {
	pattern := `%"` + likeEscape(id) + `"%`
	rs, err := q.q.QueryContext(ctx, `SELECT 'configuration', id FROM configurations
		WHERE namespace_id = $1 AND secret_bindings LIKE $2 ESCAPE '\'
		UNION ALL SELECT DISTINCT 'credential_source', source_id FROM credential_source_secrets
		WHERE namespace_id = $1 AND secret_id = $3
		UNION ALL SELECT 'agent', id FROM agents
		WHERE namespace_id = $1 AND harness_auth LIKE $2 ESCAPE '\'
		ORDER BY 1, 2 LIMIT 100`, namespaceID, pattern, id)
	return collect(rs, err, func(r rowScanner) (Owned, error) { var o Owned; return o, r.Scan(&o.Kind, &o.ID) })
}

// likeEscape escapes LIKE wildcards (and the escape character) in s.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
