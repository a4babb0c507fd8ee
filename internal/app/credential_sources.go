package app

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/openclaw/occ/internal/credgateway"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// Audit actions of credential source use cases. Details carry names, the
// type and Secret IDs, never a Secret value or config value.
const (
	ActCredentialSourceCreate   = "credential_sources.create"
	ActCredentialSourceRegister = "credential_sources.register"
	ActCredentialSourceRead     = "credential_sources.read"
	ActCredentialSourceList     = "credential_sources.list"
	ActCredentialSourceUpdate   = "credential_sources.update"
	ActCredentialSourceDelete   = "credential_sources.delete"
	ActCredentialSourceRemove   = "credential_sources.remove"
)

// Fixed messages of credential source errors.
const (
	msgNoGateway             = "No Credential Gateway is configured for this installation."
	msgSourceNameTaken       = "A credential source with this name exists in this Namespace."
	msgGatewayRejected       = "The Credential Gateway refused this credential source."
	msgSourceNotReady        = "The credential source is not ready (it is registering or being deleted)."
	msgSourceSecretUnusable  = "A Secret the credential source references cannot be read."
	msgSourceChanged         = "The credential source changed while it was being updated; try again."
	msgCredentialInConfig    = "Credentials belong in secrets, not in config."
	msgSourceSecretOtherNS   = "A referenced Secret must belong to the credential source's Namespace."
	msgSourceSecretMissing   = "A referenced Secret does not exist."
	msgSourceSecretMalformed = "A secrets entry must be a reference {kind: \"secret\", namespaceId, id}."
)

// Limits of a credential source.
const maxSourceSecrets = 16

var (
	sourceType  = regexp.MustCompile(`^[a-z][a-z0-9_.-]{0,62}$`)
	sourceField = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
	// credentialKey matches config keys whose string values would be
	// credentials: those belong in a Secret.
	credentialKey = regexp.MustCompile(`(?i)(token|secret|password|passwd|apikey|api_key|private_?key|credential)`)
)

// CredentialSourceInput creates a credential source.
type CredentialSourceInput struct {
	Name    string
	Type    string
	Config  map[string]any           // nil = {}
	Secrets map[string]occ.SecretRef // nil = {}
}

func credentialSourceRef(nsID, id string) occ.ResourceRef {
	return occ.ResourceRef{Kind: occ.KindCredentialSource, ID: id, NamespaceID: nsID}
}

// gateway is the configured Credential Gateway, or 409
// CREDENTIAL_GATEWAY_NOT_CONFIGURED: every credential source operation,
// reads included, checks it first.
func (a *App) gateway() (credgateway.Client, error) {
	if a.opts.CredentialGateway == nil {
		return nil, occ.E(occ.CodeCredentialGatewayUnset, msgNoGateway)
	}
	return a.opts.CredentialGateway, nil
}

// seeCredentialSource makes credential_source:read on the source the
// visibility test.
func (a *App) seeCredentialSource(nsID, id string) *visibility {
	return seeExact(credentialSourceRef(nsID, id), func(ctx context.Context) error { _, err := a.st.GetCredentialSource(ctx, nsID, id); return err })
}

// CreateCredentialSource records a source as registering, registers it with
// the gateway (bounded by the client's timeout, even if the caller goes
// away) and then marks it ready; when the gateway fails or refuses, the
// record is removed and the caller gets 503 or 409. Each referenced Secret
// must be of this Namespace and needs the caller's exact secret:operate.
func (a *App) CreateCredentialSource(ctx context.Context, c occ.Caller, nsID string, in CredentialSourceInput) (occ.CredentialSource, error) {
	gw, err := a.gateway()
	if err != nil {
		return occ.CredentialSource{}, err
	}
	if err := a.require(ctx, c, occ.P(occ.KindCredentialSource, occ.ActionCreate), collectionRef(occ.KindCredentialSource, nsID),
		ActCredentialSourceCreate, a.seeNamespace(nsID)); err != nil {
		return occ.CredentialSource{}, err
	}
	if err := validName("name", in.Name); err != nil {
		return occ.CredentialSource{}, err
	}
	if !sourceType.MatchString(in.Type) {
		return occ.CredentialSource{}, occ.Invalid("The type is not a valid source type name.", occ.Detail{Path: "/type", Code: occ.DetailInvalidFmt})
	}
	if in.Config == nil {
		in.Config = map[string]any{}
	}
	if err := checkSourceConfig("/config", in.Config); err != nil {
		return occ.CredentialSource{}, err
	}
	if in.Secrets == nil {
		in.Secrets = map[string]occ.SecretRef{}
	}
	if err := a.checkSourceSecrets(ctx, c, nsID, ActCredentialSourceCreate, in.Secrets); err != nil {
		return occ.CredentialSource{}, err
	}
	values, err := a.resolveSourceSecrets(ctx, nsID, in.Secrets)
	if err != nil {
		return occ.CredentialSource{}, err
	}
	now := a.now()
	cs := occ.CredentialSource{ID: occ.NewID(occ.PrefixCredentialSource), NamespaceID: nsID, Name: in.Name, Type: in.Type,
		Config: in.Config, Secrets: in.Secrets, State: occ.CredentialSourceRegistering, CreatedBy: c.PrincipalID,
		CreatedAt: now, UpdatedAt: now, Version: 1}
	err = a.tx(ctx, func(tx *store.Tx) error {
		if err := a.requireReadyNamespace(ctx, tx, nsID); err != nil {
			return err
		}
		if err := a.secretsStillExist(ctx, tx, nsID, cs.Secrets); err != nil {
			return err
		}
		if err := tx.InsertCredentialSource(ctx, cs); err != nil {
			return nameConflict(err, msgSourceNameTaken)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: ActCredentialSourceCreate, ActorID: c.PrincipalID, Resource: cs.Ref(),
			Details: map[string]any{"name": cs.Name, "type": cs.Type, "state": string(cs.State), "secretIds": sourceSecretIDs(cs.Secrets)}})
	})
	if err != nil {
		return occ.CredentialSource{}, err
	}

	ctx = context.WithoutCancel(ctx)
	if regErr := gw.Register(ctx, a.registration(cs, values)); regErr != nil {
		reason, answer := gatewayFailure(regErr, msgGatewayRejected)
		err := a.tx(ctx, func(tx *store.Tx) error {
			if err := tx.DeleteCredentialSource(ctx, nsID, cs.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
				return occ.Unavailable(err)
			}
			return a.record(ctx, tx, occ.AuditEvent{Action: ActCredentialSourceRegister, Outcome: occ.OutcomeFailure, ActorID: c.PrincipalID,
				Resource: cs.Ref(), ReasonCode: reason, Details: map[string]any{"name": cs.Name, "type": cs.Type, "recordRemoved": true}})
		})
		if err != nil {
			return occ.CredentialSource{}, err
		}
		return occ.CredentialSource{}, answer
	}
	var out occ.CredentialSource
	err = a.tx(ctx, func(tx *store.Tx) error {
		cs.State, cs.UpdatedAt = occ.CredentialSourceReady, a.now()
		if out, err = tx.UpdateCredentialSource(ctx, cs); errors.Is(err, store.ErrStale) {
			return occ.E(occ.CodeResourceConflict, msgSourceChanged) // deleted meanwhile: not ready
		} else if err != nil {
			return notFoundOr(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: ActCredentialSourceRegister, ActorID: c.PrincipalID, Resource: out.Ref(),
			Details: map[string]any{"name": out.Name, "type": out.Type, "state": string(out.State)}})
	})
	return out, err
}

// gatewayFailure turns a gateway client error into an audit reason code
// and the caller's error: 409 with the fixed message for a refusal, 503
// otherwise.
func gatewayFailure(err error, rejected string) (string, error) {
	if errors.Is(err, credgateway.ErrRejected) {
		return "GATEWAY_REJECTED", occ.Wrap(occ.CodeResourceConflict, rejected, err)
	}
	return "GATEWAY_UNAVAILABLE", occ.Unavailable(err)
}

// registration is what the gateway receives for cs.
func (a *App) registration(cs occ.CredentialSource, values map[string]string) credgateway.Registration {
	r := credgateway.Registration{InstallationID: a.instID, NamespaceID: cs.NamespaceID, ID: cs.ID, Name: cs.Name, Type: cs.Type,
		Config: cs.Config, Secrets: map[string]credgateway.SecretValue{}}
	for f, ref := range cs.Secrets {
		r.Secrets[f] = credgateway.SecretValue{NamespaceID: ref.NamespaceID, ID: ref.ID, Value: values[f]}
	}
	return r
}

// checkSourceConfig refuses string values under credential-looking keys,
// anywhere in the config document.
func checkSourceConfig(at string, v any) error {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := at + "/" + pointerEscape(k)
			if _, isString := e.(string); isString && credentialKey.MatchString(k) {
				return occ.Invalid(msgCredentialInConfig, occ.Detail{Path: p, Code: occ.DetailInvalidValue})
			}
			if err := checkSourceConfig(p, e); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := checkSourceConfig(at+"/"+strconv.Itoa(i), e); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkSourceSecrets validates the secrets map and requires the caller's
// exact secret:operate on each referenced Secret, which must exist in the
// source's Namespace.
func (a *App) checkSourceSecrets(ctx context.Context, c occ.Caller, nsID, action string, refs map[string]occ.SecretRef) error {
	if len(refs) > maxSourceSecrets {
		return occ.Invalid("A credential source references at most 16 Secrets.", occ.Detail{Path: "/secrets", Code: occ.DetailInvalidValue})
	}
	fields := make([]string, 0, len(refs))
	for f := range refs {
		fields = append(fields, f)
	}
	slices.Sort(fields)
	for _, f := range fields {
		ref, at := refs[f], "/secrets/"+pointerEscape(f)
		switch {
		case !sourceField.MatchString(f):
			return occ.Invalid("A secrets field name must match ^[A-Za-z_][A-Za-z0-9_]{0,63}$.", occ.Detail{Path: at, Code: occ.DetailInvalidFmt})
		case ref.Kind != "secret" || !occ.ValidID(occ.PrefixSecret, ref.ID):
			return occ.Invalid(msgSourceSecretMalformed, occ.Detail{Path: at, Code: occ.DetailInvalidValue})
		case ref.NamespaceID != nsID:
			return occ.Invalid(msgSourceSecretOtherNS, occ.Detail{Path: at + "/namespaceId", Code: occ.DetailInvalidValue})
		}
		if err := a.require(ctx, c, occ.P(occ.KindSecret, occ.ActionOperate), secretRef(nsID, ref.ID), action, nil); err != nil {
			return err
		}
		if _, err := a.st.GetSecret(ctx, nsID, ref.ID); errors.Is(err, store.ErrNotFound) {
			return occ.Invalid(msgSourceSecretMissing, occ.Detail{Path: at + "/id", Code: occ.DetailInvalidValue})
		} else if err != nil {
			return occ.Unavailable(err)
		}
	}
	return nil
}

// secretsStillExist repeats the existence check inside the transaction
// that stores the references.
func (a *App) secretsStillExist(ctx context.Context, tx *store.Tx, nsID string, refs map[string]occ.SecretRef) error {
	for f, ref := range refs {
		if _, err := tx.GetSecret(ctx, nsID, ref.ID); errors.Is(err, store.ErrNotFound) {
			return occ.Invalid(msgSourceSecretMissing, occ.Detail{Path: "/secrets/" + pointerEscape(f) + "/id", Code: occ.DetailInvalidValue})
		} else if err != nil {
			return occ.Unavailable(err)
		}
	}
	return nil
}

// resolveSourceSecrets decrypts the referenced values for the gateway; they
// stay in memory for the one request.
func (a *App) resolveSourceSecrets(ctx context.Context, nsID string, refs map[string]occ.SecretRef) (map[string]string, error) {
	out := make(map[string]string, len(refs))
	for f, ref := range refs {
		v, err := a.ResolveSecret(ctx, nsID, ref.ID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, occ.Invalid(msgSourceSecretMissing, occ.Detail{Path: "/secrets/" + pointerEscape(f) + "/id", Code: occ.DetailInvalidValue})
		case errors.Is(err, ErrSecretUnreadable):
			return nil, occ.Wrap(occ.CodeResourceConflict, msgSourceSecretUnusable, err)
		case err != nil:
			return nil, occ.Unavailable(err)
		}
		out[f] = string(v)
	}
	return out, nil
}

func sourceSecretIDs(refs map[string]occ.SecretRef) []string {
	ids := make([]string, 0, len(refs))
	for _, r := range refs {
		if !slices.Contains(ids, r.ID) {
			ids = append(ids, r.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// GetCredentialSource returns a credential source.
func (a *App) GetCredentialSource(ctx context.Context, c occ.Caller, nsID, id string) (occ.CredentialSource, error) {
	if _, err := a.gateway(); err != nil {
		return occ.CredentialSource{}, err
	}
	if err := a.require(ctx, c, occ.P(occ.KindCredentialSource, occ.ActionRead), credentialSourceRef(nsID, id), ActCredentialSourceRead,
		a.seeCredentialSource(nsID, id)); err != nil {
		return occ.CredentialSource{}, err
	}
	cs, err := a.st.GetCredentialSource(ctx, nsID, id)
	return cs, notFoundOr(err)
}

// ListCredentialSources returns one page of a Namespace's credential
// sources the caller may read.
func (a *App) ListCredentialSources(ctx context.Context, c occ.Caller, nsID string, page PageRequest) (Page[occ.CredentialSource], error) {
	if _, err := a.gateway(); err != nil {
		return Page[occ.CredentialSource]{}, err
	}
	if err := a.requireNamespaceRead(ctx, c, nsID, ActCredentialSourceList); err != nil {
		return Page[occ.CredentialSource]{}, err
	}
	return readable(ctx, a, c, occ.KindCredentialSource, page,
		func(ctx context.Context, after store.Cursor, limit int) ([]occ.CredentialSource, error) {
			return a.st.ListCredentialSources(ctx, nsID, after, limit)
		},
		func(s occ.CredentialSource) (time.Time, string) { return s.CreatedAt, s.ID }, occ.CredentialSource.Ref, same[occ.CredentialSource])
}

// UpdateCredentialSource replaces a ready source's Secret references
// (secrets nil keeps them, an empty map clears them): the gateway receives
// the new values first, then the record changes. Every Secret of the result
// needs the caller's exact secret:operate. When a concurrent change wins,
// the update runs again on the new record (optimistic), registering again,
// so the gateway ends with the values of the record's last writer.
func (a *App) UpdateCredentialSource(ctx context.Context, c occ.Caller, nsID, id string, secrets map[string]occ.SecretRef, ifMatch IfMatch) (occ.CredentialSource, error) {
	gw, err := a.gateway()
	if err != nil {
		return occ.CredentialSource{}, err
	}
	if err := a.require(ctx, c, occ.P(occ.KindCredentialSource, occ.ActionUpdate), credentialSourceRef(nsID, id), ActCredentialSourceUpdate,
		a.seeCredentialSource(nsID, id)); err != nil {
		return occ.CredentialSource{}, err
	}
	return retried(ctx, a, id, func() (occ.CredentialSource, error) {
		return a.replaceSourceSecrets(ctx, c, gw, nsID, id, secrets, ifMatch)
	})
}

// replaceSourceSecrets is one attempt of UpdateCredentialSource, on the
// stored record as it is now.
func (a *App) replaceSourceSecrets(ctx context.Context, c occ.Caller, gw credgateway.Client, nsID, id string, secrets map[string]occ.SecretRef,
	ifMatch IfMatch) (occ.CredentialSource, error) {
	cs, err := a.st.GetCredentialSource(ctx, nsID, id)
	if err != nil {
		return occ.CredentialSource{}, notFoundOr(err)
	}
	if err := ifMatch.check(cs.Version); err != nil {
		return occ.CredentialSource{}, err
	}
	if secrets == nil {
		return cs, nil
	}
	if cs.State != occ.CredentialSourceReady {
		return occ.CredentialSource{}, occ.E(occ.CodeResourceConflict, msgSourceNotReady)
	}
	if err := a.checkSourceSecrets(ctx, c, nsID, ActCredentialSourceUpdate, secrets); err != nil {
		return occ.CredentialSource{}, err
	}
	values, err := a.resolveSourceSecrets(ctx, nsID, secrets)
	if err != nil {
		return occ.CredentialSource{}, err
	}
	next := cs
	next.Secrets = secrets
	ctx = context.WithoutCancel(ctx)
	if err := gw.Register(ctx, a.registration(next, values)); err != nil {
		_, answer := gatewayFailure(err, msgGatewayRejected)
		return occ.CredentialSource{}, answer
	}
	var out occ.CredentialSource
	err = a.st.InTx(ctx, func(tx *store.Tx) error {
		if err := a.secretsStillExist(ctx, tx, nsID, secrets); err != nil {
			return err
		}
		next.UpdatedAt = a.now()
		if out, err = tx.UpdateCredentialSource(ctx, next); err != nil {
			return notFoundOr(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: ActCredentialSourceUpdate, ActorID: c.PrincipalID, Resource: out.Ref(),
			Details: map[string]any{"name": out.Name, "previousSecretIds": sourceSecretIDs(cs.Secrets), "secretIds": sourceSecretIDs(out.Secrets)}})
	})
	return out, err
}

// DeleteCredentialSource marks a source deleting, removes it from the
// gateway and then deletes the record with the bindings and restrictions
// aimed at it. A gateway failure answers 503 (or
// 409 for a refusal) and keeps the record deleting; repeating DELETE
// retries the removal.
func (a *App) DeleteCredentialSource(ctx context.Context, c occ.Caller, nsID, id string, ifMatch IfMatch) error {
	gw, err := a.gateway()
	if err != nil {
		return err
	}
	if err := a.require(ctx, c, occ.P(occ.KindCredentialSource, occ.ActionDelete), credentialSourceRef(nsID, id), ActCredentialSourceDelete,
		a.seeCredentialSource(nsID, id)); err != nil {
		return err
	}
	var cs occ.CredentialSource
	err = a.tx(ctx, func(tx *store.Tx) error {
		if cs, err = tx.GetCredentialSource(ctx, nsID, id); err != nil {
			return notFoundOr(err)
		}
		if err := ifMatch.check(cs.Version); err != nil {
			return err
		}
		if err := credentialSourceBlockers(ctx, tx, cs); err != nil {
			return err
		}
		if cs.State == occ.CredentialSourceDeleting {
			return nil // a retry: the removal is what is left
		}
		cs.State, cs.UpdatedAt = occ.CredentialSourceDeleting, a.now()
		if cs, err = tx.UpdateCredentialSource(ctx, cs); err != nil {
			return notFoundOr(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: ActCredentialSourceDelete, ActorID: c.PrincipalID, Resource: cs.Ref(),
			Details: map[string]any{"name": cs.Name, "type": cs.Type, "state": string(cs.State)}})
	})
	if err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	if err := gw.Remove(ctx, nsID, id); err != nil {
		_, answer := gatewayFailure(err, "The Credential Gateway refused to remove this credential source.")
		return answer
	}
	return a.tx(ctx, func(tx *store.Tx) error {
		if err := tx.DeleteCredentialSource(ctx, nsID, id); err != nil {
			return notFoundOr(err)
		}
		removed, err := tx.DeleteTargetPolicy(ctx, occ.KindCredentialSource, id)
		if err != nil {
			return occ.Unavailable(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: ActCredentialSourceRemove, ActorID: c.PrincipalID, Resource: cs.Ref(),
			Details: map[string]any{"name": cs.Name, "type": cs.Type, "removedPolicyIds": removed}})
	})
}

// credentialSourceBlockers answers 409 RESOURCE_CONFLICT while anything
// references the source. Nothing does yet: the Agents issue adds Agent
// harnessAuth bindings, revisions, pending work and withdrawals here, and
// this function stays the one check. (credential_source:operate, which
// governs using a source, is checked by those Agent flows; nothing checks
// it yet.)
func credentialSourceBlockers(ctx context.Context, tx *store.Tx, cs occ.CredentialSource) error {
	return referencedBy(ctx, tx, cs.NamespaceID, cs.ID, "credential source")
}
