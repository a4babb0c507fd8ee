package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/secrets"
	"github.com/openclaw/occ/internal/store"
)

// Audit actions of Secret use cases. Their details carry the name and
// version only, never the value.
const (
	ActSecretCreate = "secrets.create"
	ActSecretRead   = "secrets.read"
	ActSecretList   = "secrets.list"
	ActSecretUpdate = "secrets.update"
	ActSecretDelete = "secrets.delete"
)

const secretNameTaken = "A Secret with this name exists in this Namespace."

func secretRef(nsID, id string) occ.ResourceRef {
	return occ.ResourceRef{Kind: occ.KindSecret, ID: id, NamespaceID: nsID}
}

// validSecretValue enforces the value rules: non-empty UTF-8 text without
// NUL, at most occ.MaxSecretValueBytes bytes. Messages never quote it.
func validSecretValue(v []byte) error {
	switch {
	case len(v) == 0:
		return occ.Invalid("The value must not be empty.", occ.Detail{Path: "/value", Code: occ.DetailInvalidValue})
	case len(v) > occ.MaxSecretValueBytes:
		return occ.Invalid(fmt.Sprintf("The value is longer than %d bytes.", occ.MaxSecretValueBytes),
			occ.Detail{Path: "/value", Code: occ.DetailTooLong})
	case !utf8.Valid(v), bytes.IndexByte(v, 0) >= 0:
		return occ.Invalid("The value must be UTF-8 text without NUL characters.", occ.Detail{Path: "/value", Code: occ.DetailInvalidValue})
	}
	return nil
}

// secretAD binds a ciphertext to its row.
func (a *App) secretAD(nsID, id string) secrets.AssociatedData {
	return secrets.AssociatedData{InstallationID: a.instID, NamespaceID: nsID, SecretID: id}
}

// seal encrypts a value for the row (nsID, id) with the primary key.
func (a *App) seal(nsID, id string, value []byte) (store.Sealed, error) {
	if a.opts.Secrets == nil {
		return store.Sealed{}, occ.Wrap(occ.CodeInternal, occ.MsgInternal, errors.New("app: no secrets keyring configured"))
	}
	ct, err := a.opts.Secrets.Encrypt(value, a.secretAD(nsID, id))
	if err != nil {
		return store.Sealed{}, occ.Wrap(occ.CodeInternal, occ.MsgInternal, fmt.Errorf("seal secret %s: %w", id, err))
	}
	keyID, err := secrets.KeyIDOf(ct)
	if err != nil {
		return store.Sealed{}, occ.Wrap(occ.CodeInternal, occ.MsgInternal, fmt.Errorf("seal secret %s: %w", id, err))
	}
	return store.Sealed{Ciphertext: ct, KeyID: keyID}, nil
}

// CreateSecret stores a new Secret in a ready Namespace. The value is
// encrypted before the transaction; only metadata is returned or audited.
func (a *App) CreateSecret(ctx context.Context, c occ.Caller, nsID, name string, value []byte) (occ.Secret, error) {
	if err := a.require(ctx, c, occ.P(occ.KindSecret, occ.ActionCreate), collectionRef(occ.KindSecret, nsID), ActSecretCreate, a.seeNamespace(nsID)); err != nil {
		return occ.Secret{}, err
	}
	if err := validName("name", name); err != nil {
		return occ.Secret{}, err
	}
	if err := validSecretValue(value); err != nil {
		return occ.Secret{}, err
	}
	now := a.now()
	s := occ.Secret{ID: occ.NewID(occ.PrefixSecret), NamespaceID: nsID, Name: name, Version: 1, CreatedBy: c.PrincipalID,
		CreatedAt: now, UpdatedAt: now}
	sealed, err := a.seal(nsID, s.ID, value)
	if err != nil {
		return occ.Secret{}, err
	}
	err = a.tx(ctx, func(tx *store.Tx) error {
		if err := a.requireReadyNamespace(ctx, tx, nsID); err != nil {
			return err
		}
		if err := tx.InsertSecret(ctx, s, sealed); err != nil {
			return nameConflict(err, secretNameTaken)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: ActSecretCreate, ActorID: c.PrincipalID, Resource: s.Ref(),
			Details: map[string]any{"name": s.Name, "version": s.Version}})
	})
	if err != nil {
		return occ.Secret{}, err
	}
	return s, nil
}

// seeSecret makes secret:read on the Secret the visibility test.
func (a *App) seeSecret(nsID, id string) *visibility {
	return seeExact(secretRef(nsID, id), func(ctx context.Context) error { _, err := a.st.GetSecret(ctx, nsID, id); return err })
}

// GetSecret returns a Secret's metadata.
func (a *App) GetSecret(ctx context.Context, c occ.Caller, nsID, id string) (occ.Secret, error) {
	if err := a.require(ctx, c, occ.P(occ.KindSecret, occ.ActionRead), secretRef(nsID, id), ActSecretRead, a.seeSecret(nsID, id)); err != nil {
		return occ.Secret{}, err
	}
	s, err := a.st.GetSecret(ctx, nsID, id)
	return s, notFoundOr(err)
}

// ListSecrets returns one page of a Namespace's Secrets the caller may read
// (metadata only; no value is decrypted, so an undecryptable row lists
// like any other).
func (a *App) ListSecrets(ctx context.Context, c occ.Caller, nsID string, page PageRequest) (Page[occ.Secret], error) {
	if err := a.requireNamespaceRead(ctx, c, nsID, ActSecretList); err != nil {
		return Page[occ.Secret]{}, err
	}
	return readable(ctx, a, c, occ.KindSecret, page,
		func(ctx context.Context, after store.Cursor, limit int) ([]occ.Secret, error) {
			return a.st.ListSecrets(ctx, nsID, after, limit)
		},
		func(s occ.Secret) (time.Time, string) { return s.CreatedAt, s.ID }, occ.Secret.Ref, same[occ.Secret])
}

// UpdateSecret replaces a Secret's value (stored, not delivered: running
// gateways keep what they have until redeployed) and bumps its version.
func (a *App) UpdateSecret(ctx context.Context, c occ.Caller, nsID, id string, value []byte, ifMatch IfMatch) (occ.Secret, error) {
	if err := a.require(ctx, c, occ.P(occ.KindSecret, occ.ActionUpdate), secretRef(nsID, id), ActSecretUpdate, a.seeSecret(nsID, id)); err != nil {
		return occ.Secret{}, err
	}
	if err := validSecretValue(value); err != nil {
		return occ.Secret{}, err
	}
	// The associated data does not depend on the version, so the value is
	// sealed before the transaction.
	sealed, err := a.seal(nsID, id, value)
	if err != nil {
		return occ.Secret{}, err
	}
	var out occ.Secret
	err = a.txFor(ctx, id, func(tx *store.Tx) error {
		s, err := tx.GetSecret(ctx, nsID, id)
		if err != nil {
			return notFoundOr(err)
		}
		if err := ifMatch.check(s.Version); err != nil {
			return err
		}
		s.UpdatedAt = a.now()
		if out, err = tx.UpdateSecretValue(ctx, s, sealed); err != nil {
			return notFoundOr(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: ActSecretUpdate, ActorID: c.PrincipalID, Resource: out.Ref(),
			Details: map[string]any{"name": out.Name, "version": out.Version}})
	})
	return out, err
}

// DeleteSecret removes a Secret that nothing binds.
func (a *App) DeleteSecret(ctx context.Context, c occ.Caller, nsID, id string, ifMatch IfMatch) error {
	if err := a.require(ctx, c, occ.P(occ.KindSecret, occ.ActionDelete), secretRef(nsID, id), ActSecretDelete, a.seeSecret(nsID, id)); err != nil {
		return err
	}
	return a.tx(ctx, func(tx *store.Tx) error {
		s, err := tx.GetSecret(ctx, nsID, id)
		if err != nil {
			return notFoundOr(err)
		}
		if err := ifMatch.check(s.Version); err != nil {
			return err
		}
		if err := secretBlockers(ctx, tx, s); err != nil {
			return err
		}
		if err := tx.DeleteSecret(ctx, nsID, id); err != nil {
			return notFoundOr(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: ActSecretDelete, ActorID: c.PrincipalID, Resource: s.Ref(),
			Details: map[string]any{"name": s.Name, "version": s.Version}})
	})
}

// secretBlockers answers 409 RESOURCE_CONFLICT while anything binds the
// Secret, naming the kinds (not the resources: the caller may not be
// allowed to see them). Today that is a Configuration's secretBindings
// (store.SecretBinders); the issues that add Agents, drafts, revisions,
// pending deployments, provisioning and credential sources extend the
// store query, and this function stays the one check.
func secretBlockers(ctx context.Context, tx *store.Tx, s occ.Secret) error {
	binders, err := tx.SecretBinders(ctx, s.NamespaceID, s.ID)
	if err != nil {
		return occ.Unavailable(err)
	}
	if len(binders) == 0 {
		return nil
	}
	var kinds []string
	for _, b := range binders {
		if !slices.Contains(kinds, b.Kind) {
			kinds = append(kinds, b.Kind)
		}
	}
	return occ.E(occ.CodeResourceConflict, "The Secret is still bound by: "+strings.Join(kinds, ", ")+".")
}

// ErrSecretUnreadable is returned by ResolveSecret when a stored value
// cannot be decrypted (a key missing from the keyset, or a ciphertext that
// does not belong to the row).
var ErrSecretUnreadable = errors.New("app: the stored Secret value cannot be decrypted")

// ResolveSecret decrypts a Secret's value for delivery to a runtime. It
// does not authorize: the worker rechecks grants before calling it. The
// value stays in memory; callers must never log, audit or return it. A
// missing Secret is store.ErrNotFound; an undecryptable one wraps
// ErrSecretUnreadable (and secrets.ErrDecrypt).
func (a *App) ResolveSecret(ctx context.Context, nsID, id string) ([]byte, error) {
	if a.opts.Secrets == nil {
		return nil, errors.New("app: no secrets keyring configured")
	}
	_, sealed, err := a.st.GetSealedSecret(ctx, nsID, id)
	if errors.Is(err, store.ErrCiphertextEncoding) {
		return nil, fmt.Errorf("secret %s: %w: %w", id, ErrSecretUnreadable, err)
	}
	if err != nil {
		return nil, err
	}
	v, err := a.opts.Secrets.Decrypt(sealed.Ciphertext, a.secretAD(nsID, id))
	if err != nil {
		return nil, fmt.Errorf("secret %s: %w: %w", id, ErrSecretUnreadable, err)
	}
	return v, nil
}

// ResealReport is the outcome of ResealSecrets.
type ResealReport struct {
	PrimaryKeyID uint32   // the key every readable Secret now uses
	Resealed     int      // ciphertexts replaced
	Unreadable   []string // IDs of Secrets that could not be decrypted (left as they were)
	Remaining    int      // readable Secrets still under an older key (written concurrently by a process that had not seen the new key)
}

// ActSecretsReseal is the audit action of a key rotation's re-encryption.
const ActSecretsReseal = "secrets.keyset.reseal"

// resealActor is the audit actor of operator commands run outside the API.
const resealActor = "cli:occ secrets rotate-key"

// resealBatch is how many rows one read of the work list returns.
const resealBatch = 100

// resealPasses bounds the passes over the table: a pass picks up rows
// written under an older key while the previous pass ran.
const resealPasses = 5

// ResealSecrets re-encrypts every Secret whose ciphertext a key other than
// the keyring's primary made, one row per statement, without changing its
// version or update time: readers keep working throughout because the old
// keys stay in the keyset. A row updated meanwhile is skipped (its writer
// sealed it anew) and re-examined by the next pass. Rows that cannot be
// decrypted are left untouched and reported. One audit event records the
// totals.
func (a *App) ResealSecrets(ctx context.Context) (ResealReport, error) {
	kr := a.opts.Secrets
	if kr == nil {
		return ResealReport{}, errors.New("app: no secrets keyring configured")
	}
	var rep ResealReport
	unreadable := map[string]bool{}
	for pass := 0; pass < resealPasses; pass++ {
		if err := kr.Refresh(); err != nil {
			return rep, err
		}
		primary := kr.Primary()
		rep.PrimaryKeyID = primary
		after := ""
		for {
			rows, err := a.st.SealedSecretsNotUnder(ctx, primary, after, resealBatch)
			if err != nil {
				return rep, fmt.Errorf("list Secrets to re-encrypt: %w", err)
			}
			for _, r := range rows {
				after = r.ID
				if unreadable[r.ID] {
					continue
				}
				v, err := kr.Decrypt(r.Ciphertext, a.secretAD(r.NamespaceID, r.ID))
				if err != nil {
					unreadable[r.ID] = true
					rep.Unreadable = append(rep.Unreadable, r.ID)
					continue
				}
				sealed, err := a.seal(r.NamespaceID, r.ID, v)
				clear(v)
				if err != nil {
					return rep, err
				}
				switch err := a.st.ResealSecret(ctx, r, sealed); {
				case errors.Is(err, store.ErrStale):
					// Changed or deleted meanwhile; the next pass looks again.
				case err != nil:
					return rep, fmt.Errorf("re-encrypt Secret %s: %w", r.ID, err)
				default:
					rep.Resealed++
				}
			}
			if len(rows) < resealBatch {
				break
			}
		}
		n, err := a.st.CountSecretsNotUnder(ctx, primary)
		if err != nil {
			return rep, fmt.Errorf("count Secrets to re-encrypt: %w", err)
		}
		rep.Remaining = n - len(unreadable)
		if rep.Remaining <= 0 {
			rep.Remaining = 0
			break
		}
	}
	err := a.tx(ctx, func(tx *store.Tx) error {
		outcome := occ.OutcomeSuccess
		if len(rep.Unreadable) > 0 || rep.Remaining > 0 {
			outcome = occ.OutcomeFailure
		}
		return a.record(ctx, tx, occ.AuditEvent{Kind: occ.AuditReconcile, Action: ActSecretsReseal, ActorID: resealActor, Outcome: outcome,
			Resource: a.installationRef(), Details: map[string]any{"primaryKeyId": rep.PrimaryKeyID,
				"resealedCount": rep.Resealed, "unreadableIds": rep.Unreadable, "remainingCount": rep.Remaining}})
	})
	return rep, err
}
