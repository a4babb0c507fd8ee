package app

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

func principalRef(p occ.Principal) occ.ResourceRef {
	return occ.ResourceRef{Kind: "principal", ID: p.ID, NamespaceID: p.NamespaceID}
}

// CreateHuman adds a human principal with a password. It holds no grants
// until a binding gives it some.
func (a *App) CreateHuman(ctx context.Context, c occ.Caller, email, name, password string) (occ.Principal, error) {
	const action = "iam.principals.create"
	if err := a.requireAdmin(ctx, c, "", action); err != nil {
		return occ.Principal{}, err
	}
	if err := validName("name", name); err != nil {
		return occ.Principal{}, err
	}
	leave, err := a.hashes.enter(ctx)
	if err != nil {
		return occ.Principal{}, err
	}
	hash, err := iam.HashPassword(password)
	leave()
	if err != nil {
		return occ.Principal{}, occ.Wrap(occ.CodeInternal, occ.MsgInternal, err)
	}
	now := a.now()
	p := occ.Principal{ID: occ.NewID(occ.PrefixPrincipal), Kind: occ.PrincipalHuman, Name: name, Email: strings.ToLower(email),
		PasswordHash: hash, CreatedAt: now, UpdatedAt: now, Version: 1}
	err = a.tx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertPrincipal(ctx, p); err != nil {
			return nameConflict(err, "A principal with this email already exists.")
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: action, ActorID: c.PrincipalID, Resource: principalRef(p),
			Details: map[string]any{"kind": "human", "name": name}})
	})
	return p, err
}

// GetPrincipal returns one principal of a kind.
func (a *App) GetPrincipal(ctx context.Context, c occ.Caller, kind occ.PrincipalKind, id string) (occ.Principal, error) {
	if err := a.requireAdmin(ctx, c, "", "iam.principals.read"); err != nil {
		return occ.Principal{}, err
	}
	p, err := a.st.GetPrincipal(ctx, id)
	if err != nil || p.Kind != kind {
		return occ.Principal{}, notFoundOr(orNotFound(err))
	}
	return p, nil
}

// ListPrincipals lists principals of a kind.
func (a *App) ListPrincipals(ctx context.Context, c occ.Caller, kind occ.PrincipalKind, page PageRequest) (Page[occ.Principal], error) {
	if err := a.requireAdmin(ctx, c, "", "iam.principals.list"); err != nil {
		return Page[occ.Principal]{}, err
	}
	fetch := func(ctx context.Context, after store.Cursor, limit int) ([]occ.Principal, error) {
		return a.st.ListPrincipals(ctx, kind, after, limit)
	}
	return paginate(ctx, page, fetch, func(p occ.Principal) (time.Time, string) { return p.CreatedAt, p.ID }, all[occ.Principal])
}

// SetHumanDisabled disables (ending its sessions) or enables a human. The
// caller must hold every grant of the target and cannot lock itself out.
func (a *App) SetHumanDisabled(ctx context.Context, c occ.Caller, id string, disabled bool) (occ.Principal, error) {
	action := "iam.principals.enable"
	if disabled {
		action = "iam.principals.disable"
	}
	p, err := a.GetPrincipal(ctx, c, occ.PrincipalHuman, id)
	if err != nil {
		return p, err
	}
	if disabled && p.ID == c.PrincipalID {
		return p, occ.E(occ.CodeResourceConflict, "A principal cannot disable itself.")
	}
	ok, err := a.governs(ctx, c, p.ID, "", nil)
	if err := a.escalation(ctx, c, action, occ.ReasonAccountNotCovered, principalRef(p), ok, err); err != nil {
		return p, err
	}
	now := a.now()
	err = a.tx(ctx, func(tx *store.Tx) error {
		if err := tx.SetPrincipalDisabled(ctx, p.ID, disabled, occ.Millis(now)); err != nil {
			return notFoundOr(err)
		}
		if disabled {
			if err := tx.RevokePrincipalSessions(ctx, p.ID, occ.Millis(now)); err != nil {
				return occ.Unavailable(err)
			}
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: action, ActorID: c.PrincipalID, Resource: principalRef(p)})
	})
	p.Disabled, p.UpdatedAt = disabled, now
	return p, err
}

// CreateServicePrincipal adds a service principal at installation scope or
// in a Namespace.
func (a *App) CreateServicePrincipal(ctx context.Context, c occ.Caller, name, namespaceID string) (occ.Principal, error) {
	const action = "iam.service_principals.create"
	if err := a.requireAdmin(ctx, c, "", action); err != nil {
		return occ.Principal{}, err
	}
	if err := validName("name", name); err != nil {
		return occ.Principal{}, err
	}
	if namespaceID != "" {
		if _, err := a.st.GetNamespace(ctx, namespaceID); errors.Is(err, store.ErrNotFound) {
			return occ.Principal{}, occ.Invalid("The Namespace does not exist.", occ.Detail{Path: "/namespaceId", Code: occ.DetailInvalidValue})
		} else if err != nil {
			return occ.Principal{}, occ.Unavailable(err)
		}
	}
	now := a.now()
	p := occ.Principal{ID: occ.NewID(occ.PrefixServicePrincipal), Kind: occ.PrincipalService, Name: name, NamespaceID: namespaceID,
		CreatedAt: now, UpdatedAt: now, Version: 1}
	err := a.tx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertPrincipal(ctx, p); err != nil {
			return occ.Unavailable(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: action, ActorID: c.PrincipalID, Resource: principalRef(p),
			Details: map[string]any{"kind": "service", "name": name}})
	})
	return p, err
}

// DeleteServicePrincipal removes a service principal with its keys,
// bindings and restrictions. An Agent's is managed through its Agent.
func (a *App) DeleteServicePrincipal(ctx context.Context, c occ.Caller, id string) error {
	const action = "iam.service_principals.delete"
	p, err := a.GetPrincipal(ctx, c, occ.PrincipalService, id)
	if err != nil {
		return err
	}
	if p.AgentID != "" {
		return occ.E(occ.CodeResourceConflict, "An Agent's service principal is deleted with its Agent.")
	}
	if p.ID == c.PrincipalID {
		return occ.E(occ.CodeResourceConflict, "A principal cannot delete itself.")
	}
	return a.tx(ctx, func(tx *store.Tx) error {
		if err := tx.DeletePrincipal(ctx, id); err != nil {
			return notFoundOr(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: action, ActorID: c.PrincipalID, Resource: principalRef(p)})
	})
}
