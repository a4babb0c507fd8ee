package app

import (
	"context"
	"errors"
	"time"

	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// KeyRequest asks for a new service key.
type KeyRequest struct {
	ServicePrincipalID string
	NamespaceID        string // pin; "" = none
	Name               string
	ExpiresIn          time.Duration // 0 = default (30 days)
}

func keyRef(k occ.ServiceKey) occ.ResourceRef {
	return occ.ResourceRef{Kind: "service_key", ID: k.ID, NamespaceID: k.NamespaceID}
}

// IssueServiceKey creates a key for a service principal and returns it with
// the plaintext, shown only here. The key acts as its principal, never as
// the issuer; the issuer must already hold every grant of that principal.
func (a *App) IssueServiceKey(ctx context.Context, c occ.Caller, in KeyRequest) (occ.ServiceKey, string, error) {
	const action = "auth.service_keys.create"
	if err := a.requireAdmin(ctx, c, "", action); err != nil {
		return occ.ServiceKey{}, "", err
	}
	p, err := a.st.GetPrincipal(ctx, in.ServicePrincipalID)
	badSP := occ.Invalid("The service principal does not exist or cannot hold keys.",
		occ.Detail{Path: "/servicePrincipalId", Code: occ.DetailInvalidValue})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return occ.ServiceKey{}, "", badSP
	case err != nil:
		return occ.ServiceKey{}, "", occ.Unavailable(err)
	case p.Kind != occ.PrincipalService || p.AgentID != "" || p.Disabled:
		return occ.ServiceKey{}, "", badSP
	}
	pin := in.NamespaceID
	if p.NamespaceID != "" {
		if pin != "" && pin != p.NamespaceID {
			return occ.ServiceKey{}, "", occ.Invalid("The key's Namespace must be its service principal's.",
				occ.Detail{Path: "/namespaceId", Code: occ.DetailInvalidValue})
		}
		pin = p.NamespaceID
	}
	if pin != "" {
		if _, err := a.st.GetNamespace(ctx, pin); err != nil {
			return occ.ServiceKey{}, "", occ.Invalid("The Namespace does not exist.", occ.Detail{Path: "/namespaceId", Code: occ.DetailInvalidValue})
		}
	}
	ttl := in.ExpiresIn
	if ttl <= 0 {
		ttl = a.opts.KeyDefaultTTL
	}
	plain := iam.NewServiceKey()
	now := a.now()
	k := occ.ServiceKey{ID: occ.NewID(occ.PrefixServiceKey), PrincipalID: p.ID, NamespaceID: pin, Name: in.Name,
		Lookup: iam.KeyLookup(plain), Digest: iam.Digest(plain), CreatedBy: c.PrincipalID, CreatedAt: now, ExpiresAt: now.Add(ttl)}
	ok, err := a.governs(ctx, c, p.ID, "", nil)
	if err := a.escalation(ctx, c, action, occ.ReasonServicePrincipalNotCovered, keyRef(k), ok, err); err != nil {
		return occ.ServiceKey{}, "", err
	}
	err = a.tx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertServiceKey(ctx, k); err != nil {
			return occ.Unavailable(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: action, ActorID: c.PrincipalID, Resource: keyRef(k),
			Details: map[string]any{"servicePrincipalId": p.ID, "name": k.Name, "expiresAt": occ.FormatTime(k.ExpiresAt)}})
	})
	if err != nil {
		return occ.ServiceKey{}, "", err
	}
	return k, plain, nil
}

// GetServiceKey returns a key's metadata.
func (a *App) GetServiceKey(ctx context.Context, c occ.Caller, id string) (occ.ServiceKey, error) {
	if err := a.requireAdmin(ctx, c, "", "auth.service_keys.read"); err != nil {
		return occ.ServiceKey{}, err
	}
	k, err := a.st.GetServiceKey(ctx, id)
	return k, notFoundOr(err)
}

// ListServiceKeys lists keys' metadata.
func (a *App) ListServiceKeys(ctx context.Context, c occ.Caller, page PageRequest) (Page[occ.ServiceKey], error) {
	if err := a.requireAdmin(ctx, c, "", "auth.service_keys.list"); err != nil {
		return Page[occ.ServiceKey]{}, err
	}
	return paginate(ctx, page, a.st.ListServiceKeys, func(k occ.ServiceKey) (time.Time, string) { return k.CreatedAt, k.ID }, all[occ.ServiceKey])
}

// RevokeServiceKey revokes a key at once; repeating is harmless.
func (a *App) RevokeServiceKey(ctx context.Context, c occ.Caller, id string) error {
	k, err := a.GetServiceKey(ctx, c, id)
	if err != nil {
		return err
	}
	return a.tx(ctx, func(tx *store.Tx) error {
		if err := tx.RevokeServiceKey(ctx, id, occ.Millis(a.now())); err != nil {
			return notFoundOr(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: "auth.service_keys.revoke", ActorID: c.PrincipalID, Resource: keyRef(k)})
	})
}
