package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// ParsePermissions validates a role's permission list: known, routable,
// unique, and for a Namespace role no installation permission or create of
// Namespaces. Details point at /permissions/<i>.
func ParsePermissions(names []string, namespaceRole bool) ([]occ.Permission, error) {
	seen := map[occ.Permission]bool{}
	var out []occ.Permission
	for i, n := range names {
		p, err := occ.ParsePermission(n)
		bad := err != nil || !occ.Routable[p] || seen[p] ||
			(namespaceRole && (p.Kind == occ.KindInstallation || p == occ.P(occ.KindNamespace, occ.ActionCreate)))
		if bad {
			return nil, occ.Invalid("A permission is unknown, repeated, or not grantable at this scope.",
				occ.Detail{Path: fmt.Sprintf("/permissions/%d", i), Code: occ.DetailInvalidValue})
		}
		seen[p] = true
		out = append(out, p)
	}
	return out, nil
}

// CreateRole adds a custom role at installation scope (scopeNS "") or in a
// Namespace; the caller must hold every permission it names at that scope.
func (a *App) CreateRole(ctx context.Context, c occ.Caller, scopeNS, name string, perms []string) (occ.Role, error) {
	const action = "iam.roles.create"
	if err := a.requireAdmin(ctx, c, scopeNS, action); err != nil {
		return occ.Role{}, err
	}
	if err := validName("name", name); err != nil {
		return occ.Role{}, err
	}
	ps, err := ParsePermissions(perms, scopeNS != "")
	if err != nil {
		return occ.Role{}, err
	}
	role := occ.Role{ID: occ.NewID(occ.PrefixRole), Name: name, NamespaceID: scopeNS, Permissions: ps, CreatedAt: a.now()}
	ok, err := a.covered(ctx, c, ps, scopeNS, nil)
	if err := a.escalation(ctx, c, action, occ.ReasonGrantsNotCovered, roleRef(role), ok, err); err != nil {
		return occ.Role{}, err
	}
	err = a.tx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertRole(ctx, role); err != nil {
			return nameConflict(err, "A role with this name exists in this scope.")
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: action, ActorID: c.PrincipalID, Resource: roleRef(role),
			Details: map[string]any{"name": name, "permissions": permNames(ps)}})
	})
	return role, err
}

func roleRef(r occ.Role) occ.ResourceRef {
	return occ.ResourceRef{Kind: "role", ID: r.ID, NamespaceID: r.NamespaceID}
}

func permNames(ps []occ.Permission) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// GetRole returns one role of the scope; a role of another scope is 404.
func (a *App) GetRole(ctx context.Context, c occ.Caller, scopeNS, id string) (occ.Role, error) {
	if err := a.requireAdmin(ctx, c, scopeNS, "iam.roles.read"); err != nil {
		return occ.Role{}, err
	}
	return a.roleIn(ctx, scopeNS, id)
}

func (a *App) roleIn(ctx context.Context, scopeNS, id string) (occ.Role, error) {
	r, err := a.st.GetRole(ctx, id)
	if err != nil {
		return r, notFoundOr(err)
	}
	if r.NamespaceID != scopeNS {
		return occ.Role{}, occ.ErrNotFound
	}
	return r, nil
}

// ListRoles lists the roles of one scope (the built-in ones at installation scope).
func (a *App) ListRoles(ctx context.Context, c occ.Caller, scopeNS string, page PageRequest) (Page[occ.Role], error) {
	if err := a.requireAdmin(ctx, c, scopeNS, "iam.roles.list"); err != nil {
		return Page[occ.Role]{}, err
	}
	fetch := func(ctx context.Context, after store.Cursor, limit int) ([]occ.Role, error) {
		return a.st.ListRoles(ctx, scopeNS, after, limit)
	}
	return paginate(ctx, page, fetch, func(r occ.Role) (time.Time, string) { return r.CreatedAt, r.ID }, all[occ.Role])
}

func all[T any](T) bool { return true }

// DeleteRole removes a custom role that no binding uses.
func (a *App) DeleteRole(ctx context.Context, c occ.Caller, scopeNS, id string) error {
	const action = "iam.roles.delete"
	if err := a.requireAdmin(ctx, c, scopeNS, action); err != nil {
		return err
	}
	r, err := a.roleIn(ctx, scopeNS, id)
	if err != nil {
		return err
	}
	if r.Builtin {
		return occ.E(occ.CodeResourceConflict, "Built-in roles cannot be changed or deleted.")
	}
	return a.tx(ctx, func(tx *store.Tx) error {
		if err := tx.DeleteRole(ctx, id); errors.Is(err, store.ErrConflict) {
			return occ.E(occ.CodeResourceConflict, "The role is still bound; delete its bindings first.")
		} else if err != nil {
			return notFoundOr(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: action, ActorID: c.PrincipalID, Resource: roleRef(r)})
	})
}
