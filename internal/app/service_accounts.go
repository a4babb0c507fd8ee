package app

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/openclaw/occ/internal/backends"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/secrets"
	"github.com/openclaw/occ/internal/store"
)

// Audit actions of service account use cases. Details carry names, the
// Backend ID and the credential kind, never a credential.
const (
	ActServiceAccountCreate = "service_accounts.create"
	ActServiceAccountRead   = "service_accounts.read"
	ActServiceAccountList   = "service_accounts.list"
	ActServiceAccountDelete = "service_accounts.delete"
	ActServiceAccountIssue  = "service_accounts.credentials.issue"
)

// Fixed messages of service account conflicts.
const (
	serviceAccountNameTaken = "A service account with this name exists in this Namespace."
	msgCredentialIssued     = "A credential was already issued for this service account."
	msgBackendRejected      = "The Backend refused to issue a credential for this service account."
	msgBackendCannotIssue   = "The service account's Backend does not issue credentials."
	msgBackendNotConfigured = "The service account's Backend is no longer configured."
	msgBackendUnknown       = "The backendId names no Backend of this installation."
)

func serviceAccountRef(nsID, id string) occ.ResourceRef {
	return occ.ResourceRef{Kind: occ.KindServiceAccount, ID: id, NamespaceID: nsID}
}

// seeServiceAccount makes service_account:read on the account the
// visibility test.
func (a *App) seeServiceAccount(nsID, id string) *visibility {
	return seeExact(serviceAccountRef(nsID, id), func(ctx context.Context) error { _, err := a.st.GetServiceAccount(ctx, nsID, id); return err })
}

// CreateServiceAccount adds an account, without a credential, tied to a
// configured Backend, in a ready Namespace.
func (a *App) CreateServiceAccount(ctx context.Context, c occ.Caller, nsID, name, backendID string) (occ.ServiceAccount, error) {
	if err := a.require(ctx, c, occ.P(occ.KindServiceAccount, occ.ActionCreate), collectionRef(occ.KindServiceAccount, nsID),
		ActServiceAccountCreate, a.seeNamespace(nsID)); err != nil {
		return occ.ServiceAccount{}, err
	}
	if err := validName("name", name); err != nil {
		return occ.ServiceAccount{}, err
	}
	if _, ok := a.backend(backendID); !ok {
		return occ.ServiceAccount{}, occ.Invalid(msgBackendUnknown, occ.Detail{Path: "/backendId", Code: occ.DetailInvalidValue})
	}
	now := a.now()
	sa := occ.ServiceAccount{ID: occ.NewID(occ.PrefixServiceAccount), NamespaceID: nsID, Name: name, BackendID: backendID,
		CreatedBy: c.PrincipalID, CreatedAt: now, UpdatedAt: now, Version: 1}
	err := a.tx(ctx, func(tx *store.Tx) error {
		if err := a.requireReadyNamespace(ctx, tx, nsID); err != nil {
			return err
		}
		if err := tx.InsertServiceAccount(ctx, sa); err != nil {
			return nameConflict(err, serviceAccountNameTaken)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: ActServiceAccountCreate, ActorID: c.PrincipalID, Resource: sa.Ref(),
			Details: map[string]any{"name": sa.Name, "backendId": sa.BackendID}})
	})
	if err != nil {
		return occ.ServiceAccount{}, err
	}
	return sa, nil
}

// GetServiceAccount returns an account's public fields.
func (a *App) GetServiceAccount(ctx context.Context, c occ.Caller, nsID, id string) (occ.ServiceAccount, error) {
	if err := a.require(ctx, c, occ.P(occ.KindServiceAccount, occ.ActionRead), serviceAccountRef(nsID, id), ActServiceAccountRead,
		a.seeServiceAccount(nsID, id)); err != nil {
		return occ.ServiceAccount{}, err
	}
	sa, err := a.st.GetServiceAccount(ctx, nsID, id)
	return sa, notFoundOr(err)
}

// ListServiceAccounts returns one page of a Namespace's accounts the caller
// may read.
func (a *App) ListServiceAccounts(ctx context.Context, c occ.Caller, nsID string, page PageRequest) (Page[occ.ServiceAccount], error) {
	if err := a.requireNamespaceRead(ctx, c, nsID, ActServiceAccountList); err != nil {
		return Page[occ.ServiceAccount]{}, err
	}
	return readable(ctx, a, c, occ.KindServiceAccount, page,
		func(ctx context.Context, after store.Cursor, limit int) ([]occ.ServiceAccount, error) {
			return a.st.ListServiceAccounts(ctx, nsID, after, limit)
		},
		func(s occ.ServiceAccount) (time.Time, string) { return s.CreatedAt, s.ID }, occ.ServiceAccount.Ref, same[occ.ServiceAccount])
}

// DeleteServiceAccount removes an account that nothing references, with its
// stored credential and the bindings and restrictions aimed at it.
func (a *App) DeleteServiceAccount(ctx context.Context, c occ.Caller, nsID, id string, ifMatch IfMatch) error {
	if err := a.require(ctx, c, occ.P(occ.KindServiceAccount, occ.ActionDelete), serviceAccountRef(nsID, id), ActServiceAccountDelete,
		a.seeServiceAccount(nsID, id)); err != nil {
		return err
	}
	return a.tx(ctx, func(tx *store.Tx) error {
		sa, err := tx.GetServiceAccount(ctx, nsID, id)
		if err != nil {
			return notFoundOr(err)
		}
		if err := ifMatch.check(sa.Version); err != nil {
			return err
		}
		if err := serviceAccountBlockers(ctx, tx, sa); err != nil {
			return err
		}
		if err := tx.DeleteServiceAccount(ctx, nsID, id); err != nil {
			return notFoundOr(err)
		}
		removed, err := tx.DeleteTargetPolicy(ctx, occ.KindServiceAccount, id)
		if err != nil {
			return occ.Unavailable(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: ActServiceAccountDelete, ActorID: c.PrincipalID, Resource: sa.Ref(),
			Details: map[string]any{"name": sa.Name, "backendId": sa.BackendID, "credentialIssued": sa.Credential != nil,
				"removedPolicyIds": removed}})
	})
}

// serviceAccountBlockers answers 409 RESOURCE_CONFLICT while anything
// references the account. Nothing does yet: the Agents issue adds Agent
// harnessAuth bindings, drafts, active revisions and pending work here, and
// this function stays the one check.
func serviceAccountBlockers(ctx context.Context, tx *store.Tx, sa occ.ServiceAccount) error {
	return referencedBy(ctx, tx, sa.NamespaceID, sa.ID, "service account")
}

// serviceAccountAD binds a credential ciphertext to its account's row.
func (a *App) serviceAccountAD(nsID, id string) secrets.AssociatedData {
	return secrets.AssociatedData{InstallationID: a.instID, NamespaceID: nsID, SecretID: id}
}

// IssueServiceAccountCredential asks the account's Backend for a credential
// and keeps it only encrypted (the keyring of Secrets, associated data
// binding installation, Namespace and account ID). An account holds one
// credential: a second issue is 409. An unreachable or failing Backend is
// 503 and a refusal 409; in both cases nothing is kept. The call to the
// Backend outlives a caller who goes away, so a credential the Backend
// issued is not lost half way.
func (a *App) IssueServiceAccountCredential(ctx context.Context, c occ.Caller, nsID, id string) (occ.ServiceAccount, error) {
	if err := a.require(ctx, c, occ.P(occ.KindServiceAccount, occ.ActionUpdate), serviceAccountRef(nsID, id), ActServiceAccountIssue,
		a.seeServiceAccount(nsID, id)); err != nil {
		return occ.ServiceAccount{}, err
	}
	sa, err := a.st.GetServiceAccount(ctx, nsID, id)
	if err != nil {
		return occ.ServiceAccount{}, notFoundOr(err)
	}
	if sa.Credential != nil {
		return occ.ServiceAccount{}, occ.E(occ.CodeResourceConflict, msgCredentialIssued)
	}
	b, ok := a.backend(sa.BackendID)
	if !ok {
		return occ.ServiceAccount{}, occ.E(occ.CodeResourceConflict, msgBackendNotConfigured)
	}
	if a.opts.Secrets == nil {
		return occ.ServiceAccount{}, occ.Wrap(occ.CodeInternal, occ.MsgInternal, errors.New("app: no secrets keyring configured"))
	}
	ctx = context.WithoutCancel(ctx)
	cred, err := a.backendClient().IssueCredential(ctx, backends.Backend{ID: b.ID, Type: b.Type, URL: b.URL}, backends.IssueRequest{InstallationID: a.instID,
		NamespaceID: nsID, ServiceAccountID: id, Name: sa.Name})
	switch {
	case errors.Is(err, backends.ErrRejected):
		return occ.ServiceAccount{}, occ.Wrap(occ.CodeResourceConflict, msgBackendRejected, err)
	case errors.Is(err, backends.ErrUnsupported):
		return occ.ServiceAccount{}, occ.Wrap(occ.CodeResourceConflict, msgBackendCannotIssue, err)
	case err != nil:
		return occ.ServiceAccount{}, occ.Unavailable(err)
	}
	ct, err := a.opts.Secrets.Encrypt([]byte(cred.Value), a.serviceAccountAD(nsID, id))
	if err != nil {
		return occ.ServiceAccount{}, occ.Wrap(occ.CodeInternal, occ.MsgInternal, fmt.Errorf("seal credential of %s: %w", id, err))
	}
	now := a.now()
	issued := occ.IssuedCredential{Kind: cred.Kind, IssuedAt: now, ExpiresAt: cred.ExpiresAt}
	var out occ.ServiceAccount
	err = a.tx(ctx, func(tx *store.Tx) error {
		out, err = tx.SetServiceAccountCredential(ctx, nsID, id, issued, base64.StdEncoding.EncodeToString(ct), occ.Millis(now))
		switch {
		case errors.Is(err, store.ErrConflict):
			return occ.E(occ.CodeResourceConflict, msgCredentialIssued)
		case err != nil:
			return notFoundOr(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: ActServiceAccountIssue, ActorID: c.PrincipalID, Resource: out.Ref(),
			Details: map[string]any{"name": out.Name, "backendId": out.BackendID, "credentialKind": issued.Kind}})
	})
	return out, err
}

// ServiceAccountCredential decrypts an account's credential for delivery to
// a runtime. It does not authorize (the caller rechecks grants); the value
// must never be logged, audited or returned. An account without a
// credential is store.ErrNotFound.
func (a *App) ServiceAccountCredential(ctx context.Context, nsID, id string) ([]byte, error) {
	if a.opts.Secrets == nil {
		return nil, errors.New("app: no secrets keyring configured")
	}
	text, err := a.st.ServiceAccountCiphertext(ctx, nsID, id)
	if err != nil {
		return nil, err
	}
	ct, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("service account %s: stored ciphertext is not base64", id)
	}
	v, err := a.opts.Secrets.Decrypt(ct, a.serviceAccountAD(nsID, id))
	if err != nil {
		return nil, fmt.Errorf("service account %s: %w", id, err)
	}
	return v, nil
}

// backendClient is the configured client, or the HTTP one.
func (a *App) backendClient() backends.Client {
	if a.opts.BackendClient != nil {
		return a.opts.BackendClient
	}
	return backends.NewHTTP()
}
