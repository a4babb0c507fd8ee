package store

import (
	"context"
	"database/sql"
	"sort"

	"github.com/openclaw/occ/internal/occ"
)

// Grant is one binding or restriction that matches a principal and a
// permission, as the decision algorithm needs it.
type Grant struct {
	ID          string
	NamespaceID string
	Target      *occ.Target
}

// PolicyRows is everything iam.Authorize needs for one principal and one
// permission, read in one query.
type PolicyRows struct {
	Found        bool
	Disabled     bool
	NamespaceID  string // the principal's own scope
	AgentID      string
	Bindings     []Grant
	Restrictions []Grant
}

// LoadPolicy reads the principal and its bindings and restrictions that
// concern exactly perm.
func (q Q) LoadPolicy(ctx context.Context, principalID string, perm occ.Permission) (PolicyRows, error) {
	rs, err := q.q.QueryContext(ctx, `
SELECT 'p', id, namespace_id, CAST(disabled AS TEXT), agent_id FROM principals WHERE id = $1
UNION ALL
SELECT 'b', b.id, b.namespace_id, b.target_kind, b.target_id FROM bindings b
  JOIN role_permissions rp ON rp.role_id = b.role_id AND rp.kind = $2 AND rp.action = $3
  WHERE b.principal_id = $1
UNION ALL
SELECT 'r', id, namespace_id, target_kind, target_id FROM restrictions
  WHERE principal_id = $1 AND kind = $2 AND action = $3`, principalID, string(perm.Kind), string(perm.Action))
	if err != nil {
		return PolicyRows{}, err
	}
	defer rs.Close()
	var out PolicyRows
	for rs.Next() {
		var typ, id string
		var ns, a, b sql.NullString
		if err := rs.Scan(&typ, &id, &ns, &a, &b); err != nil {
			return PolicyRows{}, err
		}
		switch typ {
		case "p":
			out.Found, out.NamespaceID, out.Disabled, out.AgentID = true, str(ns), a.String != "0", str(b)
		case "b":
			out.Bindings = append(out.Bindings, Grant{ID: id, NamespaceID: str(ns), Target: target(a, b)})
		case "r":
			out.Restrictions = append(out.Restrictions, Grant{ID: id, NamespaceID: str(ns), Target: target(a, b)})
		}
	}
	return out, rs.Err()
}

// InsertRole stores a role with its permissions; a taken name in the same
// scope is ErrConflict.
func (q Q) InsertRole(ctx context.Context, r occ.Role) error {
	if _, err := q.q.ExecContext(ctx, `INSERT INTO roles (id, name, namespace_id, builtin, created_at) VALUES ($1, $2, $3, $4, $5)`,
		r.ID, r.Name, nullStr(r.NamespaceID), boolInt(r.Builtin), occ.Millis(r.CreatedAt)); err != nil {
		return classify(err)
	}
	for _, p := range r.Permissions {
		if _, err := q.q.ExecContext(ctx, `INSERT INTO role_permissions (role_id, kind, action) VALUES ($1, $2, $3)`,
			r.ID, string(p.Kind), string(p.Action)); err != nil {
			return classify(err)
		}
	}
	return nil
}

const roleCols = `id, name, namespace_id, builtin, created_at`

func (q Q) queryRoles(ctx context.Context, query string, args ...any) ([]occ.Role, error) {
	rs, err := q.q.QueryContext(ctx, query, args...)
	roles, err := collect(rs, err, func(r rowScanner) (occ.Role, error) {
		var ro occ.Role
		var ns sql.NullString
		var builtin int
		var created int64
		err := r.Scan(&ro.ID, &ro.Name, &ns, &builtin, &created)
		ro.NamespaceID, ro.Builtin, ro.CreatedAt = str(ns), builtin != 0, occ.FromMillis(created)
		return ro, classify(err)
	})
	if err != nil {
		return nil, err
	}
	for i := range roles {
		perms, err := q.rolePermissions(ctx, roles[i].ID)
		if err != nil {
			return nil, err
		}
		roles[i].Permissions = perms
	}
	return roles, nil
}

func (q Q) rolePermissions(ctx context.Context, roleID string) ([]occ.Permission, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT kind, action FROM role_permissions WHERE role_id = $1`, roleID)
	perms, err := collect(rs, err, func(r rowScanner) (occ.Permission, error) {
		var p occ.Permission
		return p, r.Scan(&p.Kind, &p.Action)
	})
	sort.Slice(perms, func(i, j int) bool { return perms[i].String() < perms[j].String() })
	return perms, err
}

// GetRole returns one role with its permissions.
func (q Q) GetRole(ctx context.Context, id string) (occ.Role, error) {
	roles, err := q.queryRoles(ctx, `SELECT `+roleCols+` FROM roles WHERE id = $1`, id)
	if err != nil {
		return occ.Role{}, err
	}
	if len(roles) == 0 {
		return occ.Role{}, ErrNotFound
	}
	return roles[0], nil
}

// GetRoleByName returns the role of that name in a scope ("" = installation).
func (q Q) GetRoleByName(ctx context.Context, namespaceID, name string) (occ.Role, error) {
	roles, err := q.queryRoles(ctx,
		`SELECT `+roleCols+` FROM roles WHERE COALESCE(namespace_id, '') = $1 AND name = $2`, namespaceID, name)
	if err != nil {
		return occ.Role{}, err
	}
	if len(roles) == 0 {
		return occ.Role{}, ErrNotFound
	}
	return roles[0], nil
}

// ListRoles returns the roles of one scope ("" = installation) after the cursor.
func (q Q) ListRoles(ctx context.Context, namespaceID string, after Cursor, limit int) ([]occ.Role, error) {
	return q.queryRoles(ctx, `SELECT `+roleCols+` FROM roles
		WHERE COALESCE(namespace_id, '') = $1 AND (created_at > $2 OR (created_at = $2 AND id > $3))
		ORDER BY created_at, id LIMIT $4`, namespaceID, after.CreatedAt, after.ID, limit)
}

// DeleteRole removes a role; one still bound is ErrConflict.
func (q Q) DeleteRole(ctx context.Context, id string) error {
	var n int
	if err := q.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM bindings WHERE role_id = $1`, id).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return ErrConflict
	}
	return affected(q.q.ExecContext(ctx, `DELETE FROM roles WHERE id = $1`, id))
}

const bindingCols = `id, principal_id, role_id, namespace_id, target_kind, target_id, created_by, created_at`

func scanBinding(r rowScanner) (occ.Binding, error) {
	var b occ.Binding
	var ns, tk, ti sql.NullString
	var created int64
	err := r.Scan(&b.ID, &b.PrincipalID, &b.RoleID, &ns, &tk, &ti, &b.CreatedBy, &created)
	b.NamespaceID, b.Target, b.CreatedAt = str(ns), target(tk, ti), occ.FromMillis(created)
	return b, classify(err)
}

// InsertBinding stores a binding.
func (q Q) InsertBinding(ctx context.Context, b occ.Binding) error {
	tk, ti := targetArgs(b.Target)
	_, err := q.q.ExecContext(ctx, `INSERT INTO bindings (`+bindingCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		b.ID, b.PrincipalID, b.RoleID, nullStr(b.NamespaceID), tk, ti, b.CreatedBy, occ.Millis(b.CreatedAt))
	return classify(err)
}

// GetBinding returns one binding.
func (q Q) GetBinding(ctx context.Context, id string) (occ.Binding, error) {
	return scanBinding(q.q.QueryRowContext(ctx, `SELECT `+bindingCols+` FROM bindings WHERE id = $1`, id))
}

// ListBindings returns the bindings of one scope ("" = installation) after the cursor.
func (q Q) ListBindings(ctx context.Context, namespaceID string, after Cursor, limit int) ([]occ.Binding, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT `+bindingCols+` FROM bindings
		WHERE COALESCE(namespace_id, '') = $1 AND (created_at > $2 OR (created_at = $2 AND id > $3))
		ORDER BY created_at, id LIMIT $4`, namespaceID, after.CreatedAt, after.ID, limit)
	return collect(rs, err, scanBinding)
}

// PrincipalBindings returns every binding of one principal.
func (q Q) PrincipalBindings(ctx context.Context, principalID string) ([]occ.Binding, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT `+bindingCols+` FROM bindings WHERE principal_id = $1 ORDER BY created_at, id`, principalID)
	return collect(rs, err, scanBinding)
}

// DeleteBinding removes one binding.
func (q Q) DeleteBinding(ctx context.Context, id string) error {
	return affected(q.q.ExecContext(ctx, `DELETE FROM bindings WHERE id = $1`, id))
}

const restrictionCols = `id, principal_id, kind, action, namespace_id, target_kind, target_id, created_by, created_at`

func scanRestriction(r rowScanner) (occ.Restriction, error) {
	var x occ.Restriction
	var ns, tk, ti sql.NullString
	var created int64
	err := r.Scan(&x.ID, &x.PrincipalID, &x.Permission.Kind, &x.Permission.Action, &ns, &tk, &ti, &x.CreatedBy, &created)
	x.NamespaceID, x.Target, x.CreatedAt = str(ns), target(tk, ti), occ.FromMillis(created)
	return x, classify(err)
}

// InsertRestriction stores a restriction.
func (q Q) InsertRestriction(ctx context.Context, x occ.Restriction) error {
	tk, ti := targetArgs(x.Target)
	_, err := q.q.ExecContext(ctx, `INSERT INTO restrictions (`+restrictionCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		x.ID, x.PrincipalID, string(x.Permission.Kind), string(x.Permission.Action), nullStr(x.NamespaceID), tk, ti,
		x.CreatedBy, occ.Millis(x.CreatedAt))
	return classify(err)
}

// GetRestriction returns one restriction.
func (q Q) GetRestriction(ctx context.Context, id string) (occ.Restriction, error) {
	return scanRestriction(q.q.QueryRowContext(ctx, `SELECT `+restrictionCols+` FROM restrictions WHERE id = $1`, id))
}

// ListRestrictions returns the restrictions of one scope after the cursor.
func (q Q) ListRestrictions(ctx context.Context, namespaceID string, after Cursor, limit int) ([]occ.Restriction, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT `+restrictionCols+` FROM restrictions
		WHERE COALESCE(namespace_id, '') = $1 AND (created_at > $2 OR (created_at = $2 AND id > $3))
		ORDER BY created_at, id LIMIT $4`, namespaceID, after.CreatedAt, after.ID, limit)
	return collect(rs, err, scanRestriction)
}

// DeleteRestriction removes one restriction.
func (q Q) DeleteRestriction(ctx context.Context, id string) error {
	return affected(q.q.ExecContext(ctx, `DELETE FROM restrictions WHERE id = $1`, id))
}

// DeleteNamespacePolicy removes every role, binding and restriction scoped to
// a Namespace (its teardown), returning how many of each went.
func (q Q) DeleteNamespacePolicy(ctx context.Context, namespaceID string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, st := range []struct{ name, sql string }{
		{"bindings", `DELETE FROM bindings WHERE namespace_id = $1 OR role_id IN (SELECT id FROM roles WHERE namespace_id = $1)`},
		{"restrictions", `DELETE FROM restrictions WHERE namespace_id = $1`},
		{"roles", `DELETE FROM roles WHERE namespace_id = $1`},
	} {
		res, err := q.q.ExecContext(ctx, st.sql, namespaceID)
		if err != nil {
			return nil, classify(err)
		}
		out[st.name], _ = res.RowsAffected()
	}
	return out, nil
}

// SetRolePermissions replaces a role's permissions.
func (q Q) SetRolePermissions(ctx context.Context, roleID string, perms []occ.Permission) error {
	if _, err := q.q.ExecContext(ctx, `DELETE FROM role_permissions WHERE role_id = $1`, roleID); err != nil {
		return classify(err)
	}
	for _, p := range perms {
		if _, err := q.q.ExecContext(ctx, `INSERT INTO role_permissions (role_id, kind, action) VALUES ($1, $2, $3)`,
			roleID, string(p.Kind), string(p.Action)); err != nil {
			return classify(err)
		}
	}
	return nil
}

// DeleteTargetPolicy removes the bindings and restrictions aimed at one
// resource, in the transaction that deletes it; it returns their IDs.
func (q Q) DeleteTargetPolicy(ctx context.Context, kind occ.Kind, id string) ([]string, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT id FROM bindings WHERE target_kind = $1 AND target_id = $2
		UNION ALL SELECT id FROM restrictions WHERE target_kind = $1 AND target_id = $2`, string(kind), id)
	ids, err := collect(rs, err, func(r rowScanner) (string, error) { var s string; return s, r.Scan(&s) })
	if err != nil {
		return nil, err
	}
	for _, table := range []string{"bindings", "restrictions"} {
		if _, err := q.q.ExecContext(ctx, `DELETE FROM `+table+` WHERE target_kind = $1 AND target_id = $2`, string(kind), id); err != nil {
			return nil, classify(err)
		}
	}
	return ids, nil
}
