package store

import (
	"context"
	"errors"
)

// PresetRow is a Preset as stored; its settings stay encoded so a row that
// cannot be decoded still lists with its readable metadata.
type PresetRow struct {
	ID            string
	NamespaceID   string
	Name          string
	Source        string
	SchemaVersion int
	Settings      string
	Version       int64
	CreatedBy     string
	CreatedAt     int64
	UpdatedAt     int64
}

const presetCols = `id, namespace_id, name, source, schema_version, settings, version, created_by, created_at, updated_at`

func scanPreset(r rowScanner) (PresetRow, error) {
	var p PresetRow
	err := r.Scan(&p.ID, &p.NamespaceID, &p.Name, &p.Source, &p.SchemaVersion, &p.Settings, &p.Version, &p.CreatedBy, &p.CreatedAt, &p.UpdatedAt)
	return p, classify(err)
}

const insertPreset = `INSERT INTO presets (` + presetCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`

func presetArgs(p PresetRow) []any {
	return []any{p.ID, p.NamespaceID, p.Name, p.Source, p.SchemaVersion, p.Settings, p.Version, p.CreatedBy, p.CreatedAt, p.UpdatedAt}
}

// InsertPreset stores a Preset; a taken name is ErrConflict (on
// PostgreSQL the transaction can then only roll back).
func (q Q) InsertPreset(ctx context.Context, p PresetRow) error {
	_, err := q.q.ExecContext(ctx, insertPreset, presetArgs(p)...)
	return classify(err)
}

// InsertPresetIfAbsent stores a Preset unless its Namespace has one of that
// name, and reports whether it did; a taken name leaves the transaction
// usable.
func (q Q) InsertPresetIfAbsent(ctx context.Context, p PresetRow) (bool, error) {
	err := affected(q.q.ExecContext(ctx, insertPreset+` ON CONFLICT (namespace_id, name) DO NOTHING`, presetArgs(p)...))
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// GetPreset returns one Preset of a Namespace.
func (q Q) GetPreset(ctx context.Context, namespaceID, id string) (PresetRow, error) {
	return scanPreset(q.q.QueryRowContext(ctx, `SELECT `+presetCols+` FROM presets WHERE namespace_id = $1 AND id = $2`, namespaceID, id))
}

// ListPresets returns a Namespace's Presets after the cursor.
func (q Q) ListPresets(ctx context.Context, namespaceID string, after Cursor, limit int) ([]PresetRow, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT `+presetCols+` FROM presets
		WHERE namespace_id = $1 AND (created_at > $2 OR (created_at = $2 AND id > $3))
		ORDER BY created_at, id LIMIT $4`, namespaceID, after.CreatedAt, after.ID, limit)
	return collect(rs, err, scanPreset)
}

// UpdatePreset writes name and settings at the expected version.
func (q Q) UpdatePreset(ctx context.Context, p PresetRow) error {
	err := affected(q.q.ExecContext(ctx, `UPDATE presets SET name = $1, schema_version = $2, settings = $3, version = version + 1, updated_at = $4
		WHERE namespace_id = $5 AND id = $6 AND version = $7`, p.Name, p.SchemaVersion, p.Settings, p.UpdatedAt, p.NamespaceID, p.ID, p.Version))
	if err == ErrNotFound {
		if _, gerr := q.GetPreset(ctx, p.NamespaceID, p.ID); gerr == nil {
			return ErrStale
		}
	}
	return err
}

// DeletePreset removes a Preset.
func (q Q) DeletePreset(ctx context.Context, namespaceID, id string) error {
	return affected(q.q.ExecContext(ctx, `DELETE FROM presets WHERE namespace_id = $1 AND id = $2`, namespaceID, id))
}

// DeleteSeededPresets removes the installation Presets nobody changed, as
// a Namespace's teardown does.
func (q Q) DeleteSeededPresets(ctx context.Context, namespaceID string) error {
	_, err := q.q.ExecContext(ctx, `DELETE FROM presets WHERE namespace_id = $1 AND source = 'installation' AND version = 1`, namespaceID)
	return classify(err)
}
