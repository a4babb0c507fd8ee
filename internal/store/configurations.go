package store

import (
	"context"
)

// ConfigurationRow is a Configuration as stored: the document and the
// bindings stay encoded, so a row that cannot be decoded is still listed
// with its readable metadata.
type ConfigurationRow struct {
	ID             string
	NamespaceID    string
	Name           string
	Kind           string
	SchemaVersion  int
	Values         string // JSON object
	SecretBindings string // JSON object
	Generation     int64
	Version        int64
	CreatedBy      string
	CreatedAt      int64
	UpdatedAt      int64
}

const configurationCols = `id, namespace_id, name, kind, schema_version, doc_values, secret_bindings, generation, version, created_by, created_at, updated_at`

func scanConfiguration(r rowScanner) (ConfigurationRow, error) {
	var c ConfigurationRow
	err := r.Scan(&c.ID, &c.NamespaceID, &c.Name, &c.Kind, &c.SchemaVersion, &c.Values, &c.SecretBindings,
		&c.Generation, &c.Version, &c.CreatedBy, &c.CreatedAt, &c.UpdatedAt)
	return c, classify(err)
}

// InsertConfiguration stores a new Configuration; a taken name is ErrConflict.
func (q Q) InsertConfiguration(ctx context.Context, c ConfigurationRow) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO configurations (`+configurationCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		c.ID, c.NamespaceID, c.Name, c.Kind, c.SchemaVersion, c.Values, c.SecretBindings, c.Generation, c.Version,
		c.CreatedBy, c.CreatedAt, c.UpdatedAt)
	return classify(err)
}

// GetConfiguration returns one Configuration of a Namespace.
func (q Q) GetConfiguration(ctx context.Context, namespaceID, id string) (ConfigurationRow, error) {
	return scanConfiguration(q.q.QueryRowContext(ctx,
		`SELECT `+configurationCols+` FROM configurations WHERE namespace_id = $1 AND id = $2`, namespaceID, id))
}

// ListConfigurations returns a Namespace's Configurations after the cursor.
func (q Q) ListConfigurations(ctx context.Context, namespaceID string, after Cursor, limit int) ([]ConfigurationRow, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT `+configurationCols+` FROM configurations
		WHERE namespace_id = $1 AND (created_at > $2 OR (created_at = $2 AND id > $3))
		ORDER BY created_at, id LIMIT $4`, namespaceID, after.CreatedAt, after.ID, limit)
	return collect(rs, err, scanConfiguration)
}

// UpdateConfiguration writes name, document and bindings when the stored
// version is still c.Version, and bumps it; another version is ErrStale.
func (q Q) UpdateConfiguration(ctx context.Context, c ConfigurationRow) error {
	err := affected(q.q.ExecContext(ctx, `UPDATE configurations SET name = $1, schema_version = $2, doc_values = $3,
		secret_bindings = $4, generation = $5, version = version + 1, updated_at = $6
		WHERE namespace_id = $7 AND id = $8 AND version = $9`,
		c.Name, c.SchemaVersion, c.Values, c.SecretBindings, c.Generation, c.UpdatedAt, c.NamespaceID, c.ID, c.Version))
	if err == ErrNotFound {
		if _, gerr := q.GetConfiguration(ctx, c.NamespaceID, c.ID); gerr == nil {
			return ErrStale
		}
	}
	return err
}

// DeleteConfiguration removes a Configuration.
func (q Q) DeleteConfiguration(ctx context.Context, namespaceID, id string) error {
	return affected(q.q.ExecContext(ctx, `DELETE FROM configurations WHERE namespace_id = $1 AND id = $2`, namespaceID, id))
}
