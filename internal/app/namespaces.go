package app

import (
	"context"
	"errors"
	"fmt"

	"time"

	"github.com/openclaw/occ/internal/jobs"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// Audit actions of Namespace use cases.
const (
	ActNamespaceCreate = "namespaces.create"
	ActNamespaceRead   = "namespaces.read"
	ActNamespaceRename = "namespaces.update"
	ActNamespaceDelete = "namespaces.delete"
)

// CreateNamespace adds a Namespace in provisioning and queues its preparation.
func (a *App) CreateNamespace(ctx context.Context, c occ.Caller, name string) (occ.Namespace, error) {
	if err := a.require(ctx, c, occ.P(occ.KindNamespace, occ.ActionCreate), a.installationRef(), ActNamespaceCreate, nil); err != nil {
		return occ.Namespace{}, err
	}
	if err := validName("name", name); err != nil {
		return occ.Namespace{}, err
	}
	now := a.now()
	ns := occ.Namespace{ID: occ.NewID(occ.PrefixNamespace), Name: name, Status: occ.NamespaceProvisioning,
		CreatedAt: now, UpdatedAt: now, Version: 1}
	err := a.tx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertNamespace(ctx, ns); err != nil {
			return nameConflict(err, "A Namespace with this name exists (a deleted Namespace's name is free once its deletion finishes).")
		}
		if err := a.jobs.Enqueue(ctx, tx, jobs.NamespaceArgs{NamespaceID: ns.ID, Target: jobs.TargetReady, ActorID: c.PrincipalID}); err != nil {
			return occ.Unavailable(err)
		}
		if err := a.seedPresets(ctx, tx, ns.ID, c.PrincipalID); err != nil {
			return err
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: ActNamespaceCreate, ActorID: c.PrincipalID, Resource: ns.Ref(),
			Details: map[string]any{"name": ns.Name}})
	})
	return ns, err
}

// nameConflict maps a uniqueness violation to 409 with a fixed message.
func nameConflict(err error, msg string) error {
	if errors.Is(err, store.ErrConflict) {
		return occ.E(occ.CodeResourceConflict, msg)
	}
	return err
}

// GetNamespace returns a Namespace the caller may read.
func (a *App) GetNamespace(ctx context.Context, c occ.Caller, id string) (occ.Namespace, error) {
	if err := a.require(ctx, c, occ.P(occ.KindNamespace, occ.ActionRead), namespaceRef(id), ActNamespaceRead, a.seeNamespace(id)); err != nil {
		return occ.Namespace{}, err
	}
	ns, err := a.st.GetNamespace(ctx, id)
	return ns, notFoundOr(err)
}

// ListNamespaces returns the Namespaces the caller may read, one page.
func (a *App) ListNamespaces(ctx context.Context, c occ.Caller, page PageRequest) (Page[occ.Namespace], error) {
	return readable(ctx, a, c, occ.KindNamespace, page, a.st.ListNamespaces,
		func(n occ.Namespace) (time.Time, string) { return n.CreatedAt, n.ID }, occ.Namespace.Ref, same[occ.Namespace])
}

// RenameNamespace changes a Namespace's name.
func (a *App) RenameNamespace(ctx context.Context, c occ.Caller, id, name string, ifMatch IfMatch) (occ.Namespace, error) {
	if err := a.require(ctx, c, occ.P(occ.KindNamespace, occ.ActionUpdate), namespaceRef(id), ActNamespaceRename, a.seeNamespace(id)); err != nil {
		return occ.Namespace{}, err
	}
	if err := validName("name", name); err != nil {
		return occ.Namespace{}, err
	}
	var out occ.Namespace
	err := a.txFor(ctx, id, func(tx *store.Tx) error {
		ns, err := tx.GetNamespace(ctx, id)
		if err != nil {
			return notFoundOr(err)
		}
		if err := ifMatch.check(ns.Version); err != nil {
			return err
		}
		if ns.Status == occ.NamespaceDeleting {
			return occ.E(occ.CodeResourceConflict, "The Namespace is being deleted.")
		}
		old := ns.Name
		ns.Name, ns.UpdatedAt = name, a.now()
		if out, err = tx.UpdateNamespace(ctx, ns); err != nil {
			return nameConflict(err, "A Namespace with this name exists (a deleted Namespace's name is free once its deletion finishes).")
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: ActNamespaceRename, ActorID: c.PrincipalID, Resource: ns.Ref(),
			Details: map[string]any{"previousName": old, "name": name}})
	})
	return out, err
}

// DeleteNamespace starts (or retries, or takes over) a Namespace's teardown.
func (a *App) DeleteNamespace(ctx context.Context, c occ.Caller, id string, ifMatch IfMatch) (occ.Namespace, error) {
	perm := occ.P(occ.KindNamespace, occ.ActionDelete)
	if err := a.require(ctx, c, perm, namespaceRef(id), ActNamespaceDelete, a.seeNamespace(id)); err != nil {
		return occ.Namespace{}, err
	}
	var out occ.Namespace
	var refused error
	err := a.tx(ctx, func(tx *store.Tx) error {
		ns, err := tx.GetNamespace(ctx, id)
		if err != nil {
			return notFoundOr(err)
		}
		if err := ifMatch.check(ns.Version); err != nil {
			return err
		}
		if ns.Status == occ.NamespaceDeleting {
			out = ns
			refused, err = a.teardownRetry(ctx, tx, c, ns.Ref(), perm, ActNamespaceDelete, func(actor string) error {
				return a.jobs.Enqueue(ctx, tx, jobs.NamespaceArgs{NamespaceID: ns.ID, Target: jobs.TargetDeleted, ActorID: actor})
			})
			return err
		}
		if err := namespaceBlockers(ctx, tx, id); err != nil {
			return err
		}
		now := a.now()
		ns.Status, ns.UpdatedAt = occ.NamespaceDeleting, now
		if out, err = tx.UpdateNamespace(ctx, ns); err != nil {
			return notFoundOr(err)
		}
		td := occ.Teardown{ResourceID: id, ResourceKind: occ.KindNamespace, NamespaceID: id, ActorID: c.PrincipalID,
			State: occ.TeardownQueued, CreatedAt: now, UpdatedAt: now}
		if err := tx.UpsertTeardown(ctx, td); err != nil {
			return occ.Unavailable(err)
		}
		if err := a.jobs.Enqueue(ctx, tx, jobs.NamespaceArgs{NamespaceID: id, Target: jobs.TargetDeleted, ActorID: c.PrincipalID}); err != nil {
			return occ.Unavailable(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: ActNamespaceDelete, ActorID: c.PrincipalID, Resource: ns.Ref()})
	})
	if err == nil && refused != nil {
		return occ.Namespace{}, refused
	}
	return out, err
}

// namespaceBlockers answers NAMESPACE_NOT_EMPTY while the Namespace owns
// resources, naming kinds and IDs within 256 characters.
func namespaceBlockers(ctx context.Context, tx *store.Tx, id string) error {
	owned, err := tx.NamespaceOwned(ctx, id)
	if err != nil {
		return occ.Unavailable(err)
	}
	if len(owned) == 0 {
		return nil
	}
	return occ.E(occ.CodeNamespaceNotEmpty, blockerMessage(owned))
}

// blockerMessage lists owned resources by kind, one ID per kind in turn,
// then "and N more", within the 256-character message cap.
func blockerMessage(owned []store.Owned) string {
	return "The Namespace still owns resources: " + blockerList(owned) + "."
}

// blockerList names resources "kind id, kind id … and N more" within the
// message cap.
func blockerList(owned []store.Owned) string {
	msg := ""
	shown := 0
	for i, o := range owned {
		part := fmt.Sprintf("%s %s", o.Kind, o.ID)
		if i > 0 {
			part = ", " + part
		}
		if len(msg)+len(part)+80 > 256 {
			break
		}
		msg += part
		shown++
	}
	if rest := len(owned) - shown; rest > 0 {
		msg += fmt.Sprintf(" and %d more", rest)
	}
	return msg
}
