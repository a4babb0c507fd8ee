package app

import (
	"context"
	"errors"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// GrantRequest is the body of a binding or restriction create.
type GrantRequest struct {
	PrincipalID string
	RoleID      string // bindings
	Permission  string // restrictions
	Target      *occ.Target
}

// subject checks the principal a grant names: it exists, and a
// Namespace-scoped one can be granted only in its own Namespace.
func (a *App) subject(ctx context.Context, id, scopeNS string) (occ.Principal, error) {
	p, err := a.st.GetPrincipal(ctx, id)
	bad := occ.Invalid("The principal does not exist or cannot be granted at this scope.",
		occ.Detail{Path: "/principalId", Code: occ.DetailInvalidValue})
	if errors.Is(err, store.ErrNotFound) {
		return p, bad
	}
	if err != nil {
		return p, occ.Unavailable(err)
	}
	if p.NamespaceID != "" && p.NamespaceID != scopeNS {
		return p, bad
	}
	return p, nil
}

// checkTarget validates an exact target: only in a Namespace, and it must
// exist there (a namespace target is that Namespace itself).
func (a *App) checkTarget(ctx context.Context, scopeNS string, t *occ.Target) error {
	if t == nil {
		return nil
	}
	bad := func(path string) error {
		return occ.Invalid("The target does not exist in this scope.", occ.Detail{Path: path, Code: occ.DetailInvalidValue})
	}
	if scopeNS == "" {
		return bad("/target")
	}
	exists, ok := a.targetLookups()[t.Kind]
	if !ok {
		return bad("/target/kind") // a kind occ does not store yet
	}
	if err := exists(ctx, scopeNS, t.ID); errors.Is(err, store.ErrNotFound) {
		return bad("/target/id")
	} else if err != nil {
		return notFoundOr(err)
	}
	return nil
}

// targetLookups says, per resource kind, how to find one resource of a
// Namespace; a Namespace-owned kind joins here when it is stored.
func (a *App) targetLookups() map[occ.Kind]func(ctx context.Context, nsID, id string) error {
	return map[occ.Kind]func(ctx context.Context, nsID, id string) error{
		occ.KindNamespace: func(ctx context.Context, nsID, id string) error {
			if id != nsID {
				return store.ErrNotFound
			}
			return nil
		},
		occ.KindSecret: func(ctx context.Context, nsID, id string) error { _, err := a.st.GetSecret(ctx, nsID, id); return err },
		occ.KindConfiguration: func(ctx context.Context, nsID, id string) error {
			_, err := a.st.GetConfiguration(ctx, nsID, id)
			return err
		},
		occ.KindPreset:        func(ctx context.Context, nsID, id string) error { _, err := a.st.GetPreset(ctx, nsID, id); return err },
		occ.KindAgent:         func(ctx context.Context, nsID, id string) error { _, err := a.st.GetAgent(ctx, nsID, id); return err },
		occ.KindAgentRevision: func(ctx context.Context, nsID, id string) error { return a.st.RevisionExists(ctx, nsID, id) },
		occ.KindServiceAccount: func(ctx context.Context, nsID, id string) error {
			_, err := a.st.GetServiceAccount(ctx, nsID, id)
			return err
		},
		occ.KindCredentialSource: func(ctx context.Context, nsID, id string) error {
			_, err := a.st.GetCredentialSource(ctx, nsID, id)
			return err
		},
	}
}

// CreateBinding grants a role to a principal at a scope, optionally on one
// exact resource. The caller must hold every permission it grants there,
// and must govern the principal there (governs: hold every grant the
// principal has in that scope).
func (a *App) CreateBinding(ctx context.Context, c occ.Caller, scopeNS string, in GrantRequest) (occ.Binding, error) {
	const action = "iam.bindings.create"
	if err := a.requireAdmin(ctx, c, scopeNS, action); err != nil {
		return occ.Binding{}, err
	}
	if _, err := a.subject(ctx, in.PrincipalID, scopeNS); err != nil {
		return occ.Binding{}, err
	}
	role, err := a.st.GetRole(ctx, in.RoleID)
	if err != nil || (role.NamespaceID != "" && role.NamespaceID != scopeNS) {
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return occ.Binding{}, occ.Unavailable(err)
		}
		return occ.Binding{}, occ.Invalid("The role does not exist in this scope.", occ.Detail{Path: "/roleId", Code: occ.DetailInvalidValue})
	}
	if err := a.checkTarget(ctx, scopeNS, in.Target); err != nil {
		return occ.Binding{}, err
	}
	if in.Target != nil && !roleFitsTarget(role, in.Target.Kind) {
		return occ.Binding{}, occ.Invalid("A role bound to one resource must hold permissions of its kind and no create.",
			occ.Detail{Path: "/roleId", Code: occ.DetailInvalidValue})
	}
	b := occ.Binding{ID: occ.NewID(occ.PrefixBinding), PrincipalID: in.PrincipalID, RoleID: role.ID, NamespaceID: scopeNS,
		Target: in.Target, CreatedBy: c.PrincipalID, CreatedAt: a.now()}
	ref := occ.ResourceRef{Kind: "binding", ID: b.ID, NamespaceID: scopeNS}
	ok, err := a.covered(ctx, c, role.Permissions, scopeNS, in.Target)
	if err := a.escalation(ctx, c, action, occ.ReasonGrantsNotCovered, ref, ok, err); err != nil {
		return occ.Binding{}, err
	}
	ok, err = a.governs(ctx, c, in.PrincipalID, scopeNS, nil)
	if err := a.escalation(ctx, c, action, occ.ReasonPrincipalNotCovered, ref, ok, err); err != nil {
		return occ.Binding{}, err
	}
	err = a.tx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertBinding(ctx, b); err != nil {
			return occ.Unavailable(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: action, ActorID: c.PrincipalID, Resource: ref,
			Details: map[string]any{"principalId": b.PrincipalID, "roleId": b.RoleID, "target": targetDetail(b.Target)}})
	})
	return b, err
}

func roleFitsTarget(r occ.Role, k occ.Kind) bool {
	fits := false
	for _, p := range r.Permissions {
		if p.Action == occ.ActionCreate {
			return false
		}
		fits = fits || p.Kind == k
	}
	return fits
}

func targetDetail(t *occ.Target) any {
	if t == nil {
		return nil
	}
	return map[string]any{"kind": string(t.Kind), "id": t.ID}
}

// GetBinding returns one binding of the scope.
func (a *App) GetBinding(ctx context.Context, c occ.Caller, scopeNS, id string) (occ.Binding, error) {
	if err := a.requireAdmin(ctx, c, scopeNS, "iam.bindings.read"); err != nil {
		return occ.Binding{}, err
	}
	b, err := a.st.GetBinding(ctx, id)
	if err != nil || b.NamespaceID != scopeNS {
		return occ.Binding{}, notFoundOr(orNotFound(err))
	}
	return b, nil
}

// orNotFound turns a nil error into store.ErrNotFound (a row of another scope).
func orNotFound(err error) error {
	if err == nil {
		return store.ErrNotFound
	}
	return err
}

// ListBindings lists the bindings of one scope.
func (a *App) ListBindings(ctx context.Context, c occ.Caller, scopeNS string, page PageRequest) (Page[occ.Binding], error) {
	if err := a.requireAdmin(ctx, c, scopeNS, "iam.bindings.list"); err != nil {
		return Page[occ.Binding]{}, err
	}
	fetch := func(ctx context.Context, after store.Cursor, limit int) ([]occ.Binding, error) {
		return a.st.ListBindings(ctx, scopeNS, after, limit)
	}
	return paginate(ctx, page, fetch, func(b occ.Binding) (time.Time, string) { return b.CreatedAt, b.ID }, all[occ.Binding])
}

// DeleteBinding removes one binding (removing a grant is never escalation).
func (a *App) DeleteBinding(ctx context.Context, c occ.Caller, scopeNS, id string) error {
	b, err := a.GetBinding(ctx, c, scopeNS, id)
	if err != nil {
		return err
	}
	return a.tx(ctx, func(tx *store.Tx) error {
		if err := tx.DeleteBinding(ctx, id); err != nil {
			return notFoundOr(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: "iam.bindings.delete", ActorID: c.PrincipalID,
			Resource: occ.ResourceRef{Kind: "binding", ID: id, NamespaceID: scopeNS},
			Details:  map[string]any{"principalId": b.PrincipalID, "roleId": b.RoleID}})
	})
}

// CreateRestriction denies one permission to a principal at a scope or on
// one exact resource, overriding every grant. The caller must hold the
// permission there itself (holdsRestricted) and govern the principal: hold
// every grant of it the restriction would deny (governs), so a Namespace
// administrator can never restrict a principal with installation-wide
// grants of that permission, such as the installation administrator.
func (a *App) CreateRestriction(ctx context.Context, c occ.Caller, scopeNS string, in GrantRequest) (occ.Restriction, error) {
	const action = "iam.restrictions.create"
	if err := a.requireAdmin(ctx, c, scopeNS, action); err != nil {
		return occ.Restriction{}, err
	}
	if _, err := a.subject(ctx, in.PrincipalID, scopeNS); err != nil {
		return occ.Restriction{}, err
	}
	p, err := occ.ParsePermission(in.Permission)
	if err != nil || !occ.Routable[p] {
		return occ.Restriction{}, occ.Invalid("The permission is unknown.", occ.Detail{Path: "/permission", Code: occ.DetailInvalidValue})
	}
	if err := a.checkTarget(ctx, scopeNS, in.Target); err != nil {
		return occ.Restriction{}, err
	}
	x := occ.Restriction{ID: occ.NewID(occ.PrefixRestriction), PrincipalID: in.PrincipalID, Permission: p, NamespaceID: scopeNS,
		Target: in.Target, CreatedBy: c.PrincipalID, CreatedAt: a.now()}
	ref := occ.ResourceRef{Kind: "restriction", ID: x.ID, NamespaceID: scopeNS}
	if err := a.mayRestrict(ctx, c, action, ref, x); err != nil {
		return occ.Restriction{}, err
	}
	err = a.tx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertRestriction(ctx, x); err != nil {
			return occ.Unavailable(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: action, ActorID: c.PrincipalID, Resource: ref,
			Details: map[string]any{"principalId": x.PrincipalID, "permission": p.String(), "target": targetDetail(x.Target)}})
	})
	return x, err
}

// GetRestriction returns one restriction of the scope.
func (a *App) GetRestriction(ctx context.Context, c occ.Caller, scopeNS, id string) (occ.Restriction, error) {
	if err := a.requireAdmin(ctx, c, scopeNS, "iam.restrictions.read"); err != nil {
		return occ.Restriction{}, err
	}
	x, err := a.st.GetRestriction(ctx, id)
	if err != nil || x.NamespaceID != scopeNS {
		return occ.Restriction{}, notFoundOr(orNotFound(err))
	}
	return x, nil
}

// ListRestrictions lists the restrictions of one scope.
func (a *App) ListRestrictions(ctx context.Context, c occ.Caller, scopeNS string, page PageRequest) (Page[occ.Restriction], error) {
	if err := a.requireAdmin(ctx, c, scopeNS, "iam.restrictions.list"); err != nil {
		return Page[occ.Restriction]{}, err
	}
	fetch := func(ctx context.Context, after store.Cursor, limit int) ([]occ.Restriction, error) {
		return a.st.ListRestrictions(ctx, scopeNS, after, limit)
	}
	return paginate(ctx, page, fetch, func(x occ.Restriction) (time.Time, string) { return x.CreatedAt, x.ID }, all[occ.Restriction])
}

// DeleteRestriction lifts one restriction, under the rule that creates one
// (mayRestrict): the caller must hold the permission it lifts, at its scope,
// and govern the principal it names.
func (a *App) DeleteRestriction(ctx context.Context, c occ.Caller, scopeNS, id string) error {
	const action = "iam.restrictions.delete"
	x, err := a.GetRestriction(ctx, c, scopeNS, id)
	if err != nil {
		return err
	}
	ref := occ.ResourceRef{Kind: "restriction", ID: id, NamespaceID: scopeNS}
	if err := a.mayRestrict(ctx, c, action, ref, x); err != nil {
		return err
	}
	return a.tx(ctx, func(tx *store.Tx) error {
		if err := tx.DeleteRestriction(ctx, id); err != nil {
			return notFoundOr(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: action, ActorID: c.PrincipalID, Resource: ref,
			Details: map[string]any{"principalId": x.PrincipalID, "permission": x.Permission.String()}})
	})
}

// mayRestrict is the no-escalation rule for imposing or lifting restriction
// x: the caller holds its permission at its scope and governs its principal
// there; a refusal is an audited 403.
func (a *App) mayRestrict(ctx context.Context, c occ.Caller, action string, ref occ.ResourceRef, x occ.Restriction) error {
	ok, err := a.holdsRestricted(ctx, c, x.Permission, x.NamespaceID, x.Target)
	if err := a.escalation(ctx, c, action, occ.ReasonGrantsNotCovered, ref, ok, err); err != nil {
		return err
	}
	ok, err = a.governs(ctx, c, x.PrincipalID, x.NamespaceID, restricts(x.Permission, x.Target))
	return a.escalation(ctx, c, action, occ.ReasonPrincipalNotCovered, ref, ok, err)
}
