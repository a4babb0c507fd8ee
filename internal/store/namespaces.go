package store

import (
	"context"

	"github.com/openclaw/occ/internal/occ"
)

const namespaceCols = `id, name, status, created_at, updated_at, version`

func scanNamespace(r rowScanner) (occ.Namespace, error) {
	var n occ.Namespace
	var created, updated int64
	err := r.Scan(&n.ID, &n.Name, &n.Status, &created, &updated, &n.Version)
	n.CreatedAt, n.UpdatedAt = occ.FromMillis(created), occ.FromMillis(updated)
	return n, classify(err)
}

// InsertNamespace adds a Namespace; a name a live Namespace has is
// ErrConflict (a tombstoned one's is free).
func (q Q) InsertNamespace(ctx context.Context, n occ.Namespace) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO namespaces (`+namespaceCols+`) VALUES ($1, $2, $3, $4, $5, $6)`,
		n.ID, n.Name, n.Status, occ.Millis(n.CreatedAt), occ.Millis(n.UpdatedAt), n.Version)
	return classify(err)
}

// GetNamespace returns a live (not tombstoned) Namespace.
func (q Q) GetNamespace(ctx context.Context, id string) (occ.Namespace, error) {
	return scanNamespace(q.q.QueryRowContext(ctx,
		`SELECT `+namespaceCols+` FROM namespaces WHERE id = $1 AND deleted_at IS NULL`, id))
}

// ListNamespaces returns up to limit live Namespaces after the cursor.
func (q Q) ListNamespaces(ctx context.Context, after Cursor, limit int) ([]occ.Namespace, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT `+namespaceCols+` FROM namespaces
		WHERE deleted_at IS NULL AND (created_at > $1 OR (created_at = $1 AND id > $2))
		ORDER BY created_at, id LIMIT $3`, after.CreatedAt, after.ID, limit)
	return collect(rs, err, scanNamespace)
}

// UpdateNamespace writes name and status when the stored version is still
// n.Version, and bumps it. A missing row is ErrNotFound, another version ErrStale.
func (q Q) UpdateNamespace(ctx context.Context, n occ.Namespace) (occ.Namespace, error) {
	err := affected(q.q.ExecContext(ctx, `UPDATE namespaces SET name = $1, status = $2, updated_at = $3, version = version + 1
		WHERE id = $4 AND version = $5 AND deleted_at IS NULL`,
		n.Name, n.Status, occ.Millis(n.UpdatedAt), n.ID, n.Version))
	if err == ErrNotFound {
		if _, gerr := q.GetNamespace(ctx, n.ID); gerr == nil {
			return n, ErrStale
		}
	}
	if err != nil {
		return n, err
	}
	n.Version++
	return n, nil
}

// TombstoneNamespace hides a deleted Namespace for good; its name stays reserved.
func (q Q) TombstoneNamespace(ctx context.Context, id string, at int64) error {
	return affected(q.q.ExecContext(ctx,
		`UPDATE namespaces SET deleted_at = $1, updated_at = $1, version = version + 1 WHERE id = $2 AND deleted_at IS NULL`, at, id))
}

// CountNamespaces counts live Namespaces, for metrics and tests.
func (q Q) CountNamespaces(ctx context.Context) (int, error) {
	var n int
	err := q.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM namespaces WHERE deleted_at IS NULL`).Scan(&n)
	return n, err
}

// Owned is one resource a Namespace still owns.
type Owned struct {
	Kind string
	ID   string
}

// ownedKinds are the resources that block a Namespace's deletion: one
// query per kind returning the IDs the Namespace owns. A new Namespace-owned
// resource adds its line here.
var ownedKinds = []struct{ kind, query string }{
	{"service_principal", `SELECT id FROM principals WHERE namespace_id = $1 AND agent_id IS NULL ORDER BY id LIMIT 100`},
	{"agent", `SELECT id FROM agents WHERE namespace_id = $1 ORDER BY id LIMIT 100`},
	{"configuration", `SELECT id FROM configurations WHERE namespace_id = $1 ORDER BY id LIMIT 100`},
	{"service_account", `SELECT id FROM service_accounts WHERE namespace_id = $1 ORDER BY id LIMIT 100`},
	{"credential_source", `SELECT id FROM credential_sources WHERE namespace_id = $1 ORDER BY id LIMIT 100`},
	{"secret", `SELECT id FROM secrets WHERE namespace_id = $1 ORDER BY id LIMIT 100`},
	// Installation Presets nobody changed go with the Namespace instead.
	{"preset", `SELECT id FROM presets WHERE namespace_id = $1 AND NOT (source = 'installation' AND version = 1) ORDER BY id LIMIT 100`},
}

// NamespaceOwned lists what blocks a Namespace's deletion, interleaved by
// kind (one of each kind in turn).
func (q Q) NamespaceOwned(ctx context.Context, namespaceID string) ([]Owned, error) {
	var byKind [][]Owned
	for _, k := range ownedKinds {
		rs, err := q.q.QueryContext(ctx, k.query, namespaceID)
		ids, err := collect(rs, err, func(r rowScanner) (Owned, error) { o := Owned{Kind: k.kind}; return o, r.Scan(&o.ID) })
		if err != nil {
			return nil, err
		}
		byKind = append(byKind, ids)
	}
	var out []Owned
	for i := 0; ; i++ {
		added := false
		for _, ids := range byKind {
			if i < len(ids) {
				out = append(out, ids[i])
				added = true
			}
		}
		if !added {
			return out, nil
		}
	}
}
