package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/openclaw/occ/internal/occ"
)

const credentialSourceCols = `id, namespace_id, name, source_type, config, secrets, state, created_by, created_at, updated_at, version`

func scanCredentialSource(r rowScanner) (occ.CredentialSource, error) {
	var s occ.CredentialSource
	var cfg, secrets string
	var created, updated int64
	err := r.Scan(&s.ID, &s.NamespaceID, &s.Name, &s.Type, &cfg, &secrets, &s.State, &s.CreatedBy, &created, &updated, &s.Version)
	if err != nil {
		return s, classify(err)
	}
	s.CreatedAt, s.UpdatedAt = occ.FromMillis(created), occ.FromMillis(updated)
	if err := json.Unmarshal([]byte(cfg), &s.Config); err != nil {
		return s, fmt.Errorf("credential source %s: decode config: %w", s.ID, err)
	}
	if err := json.Unmarshal([]byte(secrets), &s.Secrets); err != nil {
		return s, fmt.Errorf("credential source %s: decode secrets: %w", s.ID, err)
	}
	if s.Config == nil {
		s.Config = map[string]any{}
	}
	if s.Secrets == nil {
		s.Secrets = map[string]occ.SecretRef{}
	}
	return s, nil
}

func encodeSource(s occ.CredentialSource) (cfg, secrets string, err error) {
	if s.Config == nil {
		s.Config = map[string]any{}
	}
	if s.Secrets == nil {
		s.Secrets = map[string]occ.SecretRef{}
	}
	c, err := json.Marshal(s.Config)
	if err != nil {
		return "", "", fmt.Errorf("encode config: %w", err)
	}
	x, err := json.Marshal(s.Secrets)
	if err != nil {
		return "", "", fmt.Errorf("encode secrets: %w", err)
	}
	return string(c), string(x), nil
}

// InsertCredentialSource adds a credential source and its Secret
// references; a name taken in its Namespace is ErrConflict.
func (q Q) InsertCredentialSource(ctx context.Context, s occ.CredentialSource) error {
	cfg, secrets, err := encodeSource(s)
	if err != nil {
		return err
	}
	_, err = q.q.ExecContext(ctx, `INSERT INTO credential_sources (`+credentialSourceCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		s.ID, s.NamespaceID, s.Name, s.Type, cfg, secrets, s.State, s.CreatedBy, occ.Millis(s.CreatedAt), occ.Millis(s.UpdatedAt), s.Version)
	if err != nil {
		return classify(err)
	}
	return q.writeSourceSecrets(ctx, s)
}

// writeSourceSecrets replaces the reference rows of a source.
func (q Q) writeSourceSecrets(ctx context.Context, s occ.CredentialSource) error {
	if _, err := q.q.ExecContext(ctx, `DELETE FROM credential_source_secrets WHERE source_id = $1`, s.ID); err != nil {
		return classify(err)
	}
	fields := make([]string, 0, len(s.Secrets))
	for f := range s.Secrets {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for _, f := range fields {
		ref := s.Secrets[f]
		if _, err := q.q.ExecContext(ctx, `INSERT INTO credential_source_secrets (source_id, field, namespace_id, secret_id)
			VALUES ($1, $2, $3, $4)`, s.ID, f, ref.NamespaceID, ref.ID); err != nil {
			return classify(err)
		}
	}
	return nil
}

// GetCredentialSource returns one credential source of a Namespace.
func (q Q) GetCredentialSource(ctx context.Context, namespaceID, id string) (occ.CredentialSource, error) {
	return scanCredentialSource(q.q.QueryRowContext(ctx,
		`SELECT `+credentialSourceCols+` FROM credential_sources WHERE namespace_id = $1 AND id = $2`, namespaceID, id))
}

// ListCredentialSources returns up to limit credential sources of a
// Namespace after the cursor, in (created_at, id) order.
func (q Q) ListCredentialSources(ctx context.Context, namespaceID string, after Cursor, limit int) ([]occ.CredentialSource, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT `+credentialSourceCols+` FROM credential_sources
		WHERE namespace_id = $1 AND (created_at > $2 OR (created_at = $2 AND id > $3))
		ORDER BY created_at, id LIMIT $4`, namespaceID, after.CreatedAt, after.ID, limit)
	return collect(rs, err, scanCredentialSource)
}

// UpdateCredentialSource writes the Secret references and state of s when
// the stored version is still s.Version, bumps the version and returns the
// result. A missing source is ErrNotFound, another version ErrStale.
func (q Q) UpdateCredentialSource(ctx context.Context, s occ.CredentialSource) (occ.CredentialSource, error) {
	_, secrets, err := encodeSource(s)
	if err != nil {
		return s, err
	}
	err = affected(q.q.ExecContext(ctx, `UPDATE credential_sources SET secrets = $1, state = $2, updated_at = $3, version = version + 1
		WHERE namespace_id = $4 AND id = $5 AND version = $6`,
		secrets, s.State, occ.Millis(s.UpdatedAt), s.NamespaceID, s.ID, s.Version))
	if err == ErrNotFound {
		if _, gerr := q.GetCredentialSource(ctx, s.NamespaceID, s.ID); gerr == nil {
			return s, ErrStale
		}
	}
	if err != nil {
		return s, err
	}
	if err := q.writeSourceSecrets(ctx, s); err != nil {
		return s, err
	}
	s.Version++
	return s, nil
}

// DeleteCredentialSource removes a credential source and its references.
func (q Q) DeleteCredentialSource(ctx context.Context, namespaceID, id string) error {
	if _, err := q.q.ExecContext(ctx, `DELETE FROM credential_source_secrets WHERE source_id = $1
		AND EXISTS (SELECT 1 FROM credential_sources WHERE id = $1 AND namespace_id = $2)`, id, namespaceID); err != nil {
		return classify(err)
	}
	return affected(q.q.ExecContext(ctx, `DELETE FROM credential_sources WHERE namespace_id = $1 AND id = $2`, namespaceID, id))
}

// CredentialSourcesUsingSecret lists the IDs of the credential sources that
// reference a Secret (at most 100), for the Secret's delete check.
func (q Q) CredentialSourcesUsingSecret(ctx context.Context, namespaceID, secretID string) ([]string, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT DISTINCT source_id FROM credential_source_secrets
		WHERE namespace_id = $1 AND secret_id = $2 ORDER BY source_id LIMIT 100`, namespaceID, secretID)
	return collect(rs, err, func(r rowScanner) (string, error) { var s string; return s, r.Scan(&s) })
}
