package app

import (
	"context"

	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/occ"
)

// installationRef is the installation as a resource.
func (a *App) installationRef() occ.ResourceRef {
	return occ.ResourceRef{Kind: occ.KindInstallation, ID: a.instID}
}

// namespaceRef is a Namespace as a resource.
func namespaceRef(id string) occ.ResourceRef {
	return occ.ResourceRef{Kind: occ.KindNamespace, ID: id, NamespaceID: id}
}

// collectionRef is the target of a create in a Namespace: the child kind with
// the Namespace's ID, so only untargeted grants can allow it.
func collectionRef(kind occ.Kind, namespaceID string) occ.ResourceRef {
	return occ.ResourceRef{Kind: kind, ID: namespaceID, NamespaceID: namespaceID}
}

// require allows c or returns the error the caller should see. A caller who
// may not even see the resource (visible: the read permission on it, or on
// its Namespace for a collection) gets NOT_FOUND, so existence stays
// private; one who may see it gets FORBIDDEN. Every denial is audited.
func (a *App) require(ctx context.Context, c occ.Caller, perm occ.Permission, res occ.ResourceRef, action string, visible *visibility) error {
	d, err := a.authz.Authorize(ctx, iam.Check{Caller: c, Permission: perm, Resource: res, Action: action})
	if err != nil {
		return err
	}
	if d.Allowed {
		return nil
	}
	if visible == nil {
		return occ.ErrForbidden
	}
	if visible.perm == perm && visible.res == res {
		return occ.ErrNotFound
	}
	v, err := a.authz.Decide(ctx, c, visible.perm, visible.res)
	if err != nil {
		return err
	}
	if !v.Allowed {
		return occ.ErrNotFound
	}
	if visible.exists != nil {
		if err := visible.exists(ctx); err != nil {
			return notFoundOr(err)
		}
	}
	return occ.ErrForbidden
}

// visibility says which permission makes a resource visible, and how to
// check it exists (so a visible-but-missing resource is still 404).
type visibility struct {
	perm   occ.Permission
	res    occ.ResourceRef
	exists func(context.Context) error
}

// seeNamespace makes the Namespace itself the visibility test.
func (a *App) seeNamespace(nsID string) *visibility {
	return &visibility{perm: occ.P(occ.KindNamespace, occ.ActionRead), res: namespaceRef(nsID),
		exists: func(ctx context.Context) error { _, err := a.st.GetNamespace(ctx, nsID); return err }}
}

// seeExact makes <kind>:read on the resource itself the visibility test, for
// operations on one Namespace-owned resource; exists loads it (so a caller
// who may read a missing resource still gets 404, not 403).
func seeExact(res occ.ResourceRef, exists func(context.Context) error) *visibility {
	return &visibility{perm: occ.P(res.Kind, occ.ActionRead), res: res, exists: exists}
}

// requireNamespaceRead gates a list inside a Namespace: the caller must see
// the Namespace (404 otherwise), and the Namespace must exist.
func (a *App) requireNamespaceRead(ctx context.Context, c occ.Caller, nsID, action string) error {
	if err := a.require(ctx, c, occ.P(occ.KindNamespace, occ.ActionRead), namespaceRef(nsID), action, a.seeNamespace(nsID)); err != nil {
		return err
	}
	_, err := a.st.GetNamespace(ctx, nsID)
	return notFoundOr(err)
}

// requireReadyNamespace answers 409 NAMESPACE_NOT_READY unless the Namespace
// is ready (and 404 when it is gone).
func (a *App) requireReadyNamespace(ctx context.Context, q interface {
	GetNamespace(context.Context, string) (occ.Namespace, error)
}, nsID string) error {
	ns, err := q.GetNamespace(ctx, nsID)
	if err != nil {
		return notFoundOr(err)
	}
	if ns.Status != occ.NamespaceReady {
		return occ.E(occ.CodeNamespaceNotReady, "The Namespace is not ready.")
	}
	return nil
}
