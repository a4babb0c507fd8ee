package app

import (
	"context"
	"fmt"

	"github.com/openclaw/occ/internal/audit"
	"github.com/openclaw/occ/internal/occ"
)

// requireAdmin gates IAM management: installation:administer at
// installation scope (scopeNS ""), namespace:administer on the Namespace
// otherwise.
func (a *App) requireAdmin(ctx context.Context, c occ.Caller, scopeNS, action string) error {
	if scopeNS == "" {
		return a.require(ctx, c, occ.P(occ.KindInstallation, occ.ActionAdminister), a.installationRef(), action, nil)
	}
	if err := a.require(ctx, c, occ.P(occ.KindNamespace, occ.ActionAdminister), namespaceRef(scopeNS), action, a.seeNamespace(scopeNS)); err != nil {
		return err
	}
	_, err := a.st.GetNamespace(ctx, scopeNS)
	return notFoundOr(err)
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

// denyEscalation audits and refuses an attempt to grant more than the
// caller holds.
func (a *App) denyEscalation(ctx context.Context, c occ.Caller, action, reason string, res occ.ResourceRef) error {
	ev := audit.Denial(action, c.PrincipalID, res, reason, nil)
	if err := audit.Append(ctx, a.st, ev); err != nil {
		return occ.Unavailable(fmt.Errorf("append denial audit: %w", err))
	}
	return occ.E(occ.CodeForbidden, "The caller would grant permissions it does not hold itself.")
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

// coversPrincipal reports whether c holds every grant of another principal
// (for keys issued to it and for disabling it).
func (a *App) coversPrincipal(ctx context.Context, c occ.Caller, principalID string) (bool, error) {
	grants, err := a.principalGrants(ctx, principalID)
	if err != nil {
		return false, err
	}
	for _, g := range grants {
		ok, err := a.covered(ctx, c, g.perms, g.namespaceID, g.target)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}
