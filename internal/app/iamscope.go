package app

import (
	"context"
	"fmt"
	"slices"

	"github.com/openclaw/occ/internal/audit"
	"github.com/openclaw/occ/internal/occ"
)

// requireAdmin gates IAM management: installation:administer at
// installation scope (scopeNS ""); in a Namespace, namespace:administer on
// it or installation:administer. The installation administrator's
// permission is checked on the installation itself, which no Namespace's
// restriction matches, so no Namespace can lock it out of that Namespace's
// roles, bindings and restrictions.
func (a *App) requireAdmin(ctx context.Context, c occ.Caller, scopeNS, action string) error {
	if scopeNS == "" {
		return a.require(ctx, c, occ.P(occ.KindInstallation, occ.ActionAdminister), a.installationRef(), action, nil)
	}
	if admin, err := a.installationAdmin(ctx, c); err != nil {
		return err
	} else if !admin {
		if err := a.require(ctx, c, occ.P(occ.KindNamespace, occ.ActionAdminister), namespaceRef(scopeNS), action, a.seeNamespace(scopeNS)); err != nil {
			return err
		}
	}
	_, err := a.st.GetNamespace(ctx, scopeNS)
	return notFoundOr(err)
}

// installationAdmin reports whether c holds installation:administer on the
// installation (a Namespace-pinned key never does).
func (a *App) installationAdmin(ctx context.Context, c occ.Caller) (bool, error) {
	d, err := a.authz.Decide(ctx, c, occ.P(occ.KindInstallation, occ.ActionAdminister), a.installationRef())
	return d.Allowed, err
}

// scopeRef is what holding a permission "at a scope" means: on every
// resource of its kind there, so only untargeted grants of that scope or
// broader (and no restriction there) cover it.
func (a *App) scopeRef(perm occ.Permission, scopeNS string, target *occ.Target) occ.ResourceRef {
	switch {
	case target != nil:
		return occ.ResourceRef{Kind: target.Kind, ID: target.ID, NamespaceID: scopeNS}
	case perm.Kind == occ.KindInstallation:
		return a.installationRef()
	}
	return occ.ResourceRef{Kind: perm.Kind, ID: "*", NamespaceID: scopeNS}
}

// covered reports whether c already holds every permission at the scope
// (or on the target): the no-escalation rule for roles, bindings and keys.
func (a *App) covered(ctx context.Context, c occ.Caller, perms []occ.Permission, scopeNS string, target *occ.Target) (bool, error) {
	for _, p := range perms {
		if target != nil && p.Kind != target.Kind {
			continue // inert on a binding aimed at another kind
		}
		d, err := a.authz.Decide(ctx, c, p, a.scopeRef(p, scopeNS, target))
		if err != nil {
			return false, err
		}
		if !d.Allowed {
			return false, nil
		}
	}
	return true, nil
}

// escalation turns the outcome of a no-escalation check into the answer:
// nil when it passed, its failure as it is, and, when it denied, a 403
// FORBIDDEN with the fixed message of reason after auditing the denial.
func (a *App) escalation(ctx context.Context, c occ.Caller, action, reason string, res occ.ResourceRef, ok bool, err error) error {
	if err != nil || ok {
		return err
	}
	ev := audit.Denial(action, c.PrincipalID, res, reason, nil)
	if err := audit.Append(ctx, a.st, ev); err != nil {
		return occ.Unavailable(fmt.Errorf("append denial audit: %w", err))
	}
	return occ.E(occ.CodeForbidden, occ.EscalationMessage(reason))
}

// principalGrants lists every permission a principal holds, with the scope
// and target of the binding that gives it.
func (a *App) principalGrants(ctx context.Context, principalID string) ([]scopedGrant, error) {
	bs, err := a.st.PrincipalBindings(ctx, principalID)
	if err != nil {
		return nil, occ.Unavailable(err)
	}
	var out []scopedGrant
	for _, b := range bs {
		r, err := a.st.GetRole(ctx, b.RoleID)
		if err != nil {
			return nil, occ.Unavailable(err)
		}
		out = append(out, scopedGrant{perms: r.Permissions, namespaceID: b.NamespaceID, target: b.Target})
	}
	return out, nil
}

type scopedGrant struct {
	perms       []occ.Permission
	namespaceID string
	target      *occ.Target
}

// effectiveIn reports whether g gives anything in scopeNS: every grant
// counts at installation scope (""), and in a Namespace the
// installation-wide grants and that Namespace's.
func (g scopedGrant) effectiveIn(scopeNS string) bool {
	return scopeNS == "" || g.namespaceID == "" || g.namespaceID == scopeNS
}

// governs is the rule for changing another principal's access (Kubernetes
// RBAC's escalation rule, extended from permissions to principals): c may
// bind, restrict, or lift a restriction on principal, or issue it a key
// or disable it, only if c already holds every grant of principal that
// the change touches, each at that grant's own scope and target. A change in
// a Namespace touches the principal's grants effective there (its
// installation-wide ones and the Namespace's), one at installation scope
// all of them. So a Namespace-scoped caller never governs a principal with
// installation-wide grants, such as the installation administrator.
// touched narrows one grant to the permissions the change affects (nil
// means all of them; an empty result skips the grant).
func (a *App) governs(ctx context.Context, c occ.Caller, principalID, scopeNS string, touched func(scopedGrant) []occ.Permission) (bool, error) {
	grants, err := a.principalGrants(ctx, principalID)
	if err != nil {
		return false, err
	}
	for _, g := range grants {
		if !g.effectiveIn(scopeNS) {
			continue
		}
		perms := g.perms
		if touched != nil {
			perms = touched(g)
		}
		ok, err := a.covered(ctx, c, perms, g.namespaceID, g.target)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// restricts narrows a grant to what a restriction denies of it: its
// permission, when the grant holds it on a resource the restriction covers.
func restricts(perm occ.Permission, target *occ.Target) func(scopedGrant) []occ.Permission {
	return func(g scopedGrant) []occ.Permission {
		if !slices.Contains(g.perms, perm) || (g.target != nil && target != nil && *g.target != *target) {
			return nil
		}
		return []occ.Permission{perm}
	}
}

// holdsRestricted reports whether c holds the permission a restriction at
// scopeNS (on target) denies: a caller imposes or lifts only a denial of
// what it holds itself. An installation administrator's installation-wide
// grants count too, so that a Namespace's restriction on the administrator
// never keeps it from lifting that restriction.
func (a *App) holdsRestricted(ctx context.Context, c occ.Caller, perm occ.Permission, scopeNS string, target *occ.Target) (bool, error) {
	ok, err := a.covered(ctx, c, []occ.Permission{perm}, scopeNS, target)
	if err != nil || ok || scopeNS == "" {
		return ok, err
	}
	if admin, err := a.installationAdmin(ctx, c); err != nil || !admin {
		return false, err
	}
	return a.covered(ctx, c, []occ.Permission{perm}, "", nil)
}
