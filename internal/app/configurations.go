package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// configurationSchema is the version of the stored document encoding; a
// row written by a newer occ reads as unreadable rather than guessed at.
const configurationSchema = 1

// Limits of secretBindings.
const (
	maxBindings       = 64
	maxBindingNameLen = 253
)

var bindingName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reservedEnv are destinations occ or the runtime owns.
var (
	reservedEnv       = map[string]bool{"PATH": true, "HOME": true, "USER": true, "SHELL": true, "PWD": true, "TMPDIR": true, "HOSTNAME": true}
	reservedEnvPrefix = []string{"OPENCLAW_", "CODEX_", "OPENAI_", "ANTHROPIC_", "OCC_", "KUBERNETES_", "NODE_", "LD_", "NPM_"}
	proxyEnv          = map[string]bool{"HTTP_PROXY": true, "HTTPS_PROXY": true, "NO_PROXY": true, "ALL_PROXY": true}
)

func reservedDestination(name string) bool {
	if reservedEnv[name] || proxyEnv[strings.ToUpper(name)] {
		return true
	}
	for _, p := range reservedEnvPrefix {
		if strings.HasPrefix(strings.ToUpper(name), p) {
			return true
		}
	}
	return false
}

// ConfigurationInput creates a Configuration.
type ConfigurationInput struct {
	Name           string
	Kind           string
	Values         map[string]any
	SecretBindings map[string]occ.SecretBinding
}

// ConfigurationPatch changes a Configuration: Values is a JSON Merge Patch
// of the document; SecretBindings nil keeps them, an empty map clears them.
type ConfigurationPatch struct {
	Name           *string
	Values         map[string]any
	SecretBindings *map[string]occ.SecretBinding
}

const (
	actConfigurationCreate = "configurations.create"
	actConfigurationUpdate = "configurations.update"
	actConfigurationDelete = "configurations.delete"
)

func configurationRef(nsID, id string) occ.ResourceRef {
	return occ.ResourceRef{Kind: occ.KindConfiguration, ID: id, NamespaceID: nsID}
}

func (a *App) seeConfiguration(nsID, id string) *visibility {
	return seeExact(configurationRef(nsID, id), func(ctx context.Context) error {
		_, err := a.st.GetConfiguration(ctx, nsID, id)
		return err
	})
}

// checkBindings validates secretBindings and requires the caller's exact
// secret:operate on every bound Secret, which must be of this Namespace.
func (a *App) checkBindings(ctx context.Context, c occ.Caller, nsID, action string, bs map[string]occ.SecretBinding) error {
	if len(bs) > maxBindings {
		return occ.Invalid("A Configuration binds at most 64 Secrets.", occ.Detail{Path: "/secretBindings", Code: occ.DetailInvalidValue})
	}
	names := make([]string, 0, len(bs))
	for n := range bs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b := bs[n]
		at := "/secretBindings/" + pointerEscape(n)
		switch {
		case len(n) > maxBindingNameLen || !bindingName.MatchString(n) || reservedDestination(n):
			return occ.Invalid("A binding's environment variable name is invalid or reserved.", occ.Detail{Path: at, Code: occ.DetailInvalidValue})
		case b.Source.Kind != "secret" || !occ.ValidID(occ.PrefixSecret, b.Source.ID):
			return occ.Invalid("A binding must name a Secret.", occ.Detail{Path: at + "/source", Code: occ.DetailInvalidValue})
		case b.Source.NamespaceID != nsID:
			return occ.Invalid("A bound Secret must belong to the Configuration's Namespace.", occ.Detail{Path: at + "/source/namespaceId", Code: occ.DetailInvalidValue})
		case b.Delivery != "" && b.Delivery != "env":
			return occ.Invalid("Secrets are delivered as environment variables.", occ.Detail{Path: at + "/delivery", Code: occ.DetailInvalidValue})
		}
		ref := occ.ResourceRef{Kind: occ.KindSecret, ID: b.Source.ID, NamespaceID: nsID}
		if err := a.require(ctx, c, occ.P(occ.KindSecret, occ.ActionOperate), ref, action, nil); err != nil {
			return err
		}
		if err := a.secretExists(ctx, nsID, b.Source.ID); errors.Is(err, store.ErrNotFound) {
			return occ.Invalid("A bound Secret does not exist.", occ.Detail{Path: at + "/source/id", Code: occ.DetailInvalidValue})
		} else if err != nil {
			return occ.Unavailable(err)
		}
	}
	return nil
}

// refuseOccKeys answers 400 naming, under /values, the first key of a
// configuration document that occ owns or forbids (gateway.RefusedKey: the
// one table of them), with the table's fixed message and never the value.
// Create checks the new document, update the result of the merge patch,
// deploy the snapshot it would take.
func refuseOccKeys(doc map[string]any) error {
	r := gateway.RefusedKey(doc)
	if r == nil {
		return nil
	}
	return occ.Invalid(r.Message(), occ.Detail{Path: "/values" + r.Pointer, Code: occ.DetailInvalidValue})
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func normalizeBindings(bs map[string]occ.SecretBinding) map[string]occ.SecretBinding {
	out := make(map[string]occ.SecretBinding, len(bs))
	for n, b := range bs {
		if b.Delivery == "" {
			b.Delivery = "env"
		}
		out[n] = b
	}
	return out
}

// encodeConfiguration turns a Configuration into its stored row.
func encodeConfiguration(c occ.Configuration) (store.ConfigurationRow, error) {
	values, err := json.Marshal(c.Values)
	if err != nil {
		return store.ConfigurationRow{}, occ.Invalid("The configuration document is not valid JSON.", occ.Detail{Path: "/values", Code: occ.DetailInvalidValue})
	}
	bindings, err := json.Marshal(c.SecretBindings)
	if err != nil {
		return store.ConfigurationRow{}, err
	}
	return store.ConfigurationRow{ID: c.ID, NamespaceID: c.NamespaceID, Name: c.Name, Kind: c.Kind, SchemaVersion: configurationSchema,
		Values: string(values), SecretBindings: string(bindings), Generation: c.Generation, Version: c.Version,
		CreatedBy: c.CreatedBy, CreatedAt: occ.Millis(c.CreatedAt), UpdatedAt: occ.Millis(c.UpdatedAt)}, nil
}

// decodeConfiguration reads a stored row. Settings that cannot be decoded
// (corrupt bytes, a newer schema) are omitted, never defaulted, and named
// in ReadError; the readable metadata stays.
func decodeConfiguration(r store.ConfigurationRow) occ.Configuration {
	c := occ.Configuration{ID: r.ID, NamespaceID: r.NamespaceID, Name: r.Name, Kind: r.Kind, Generation: r.Generation,
		Version: r.Version, CreatedBy: r.CreatedBy, CreatedAt: occ.FromMillis(r.CreatedAt), UpdatedAt: occ.FromMillis(r.UpdatedAt)}
	unreadable := func(field string) {
		if c.ReadError == nil {
			c.ReadError = &occ.ReadError{Code: occ.CodeSavedConfigurationUnreadable, Field: field}
		}
	}
	if r.SchemaVersion != configurationSchema {
		unreadable("values")
		return c
	}
	var values map[string]any
	if err := json.Unmarshal([]byte(r.Values), &values); err != nil || values == nil {
		unreadable("values")
	} else {
		c.Values = values
	}
	var bindings map[string]occ.SecretBinding
	if err := json.Unmarshal([]byte(r.SecretBindings), &bindings); err != nil || bindings == nil {
		unreadable("secretBindings")
	} else {
		c.SecretBindings = bindings
	}
	return c
}

// CreateConfiguration adds a Configuration (generation 1).
func (a *App) CreateConfiguration(ctx context.Context, c occ.Caller, nsID string, in ConfigurationInput) (occ.Configuration, error) {
	if err := a.require(ctx, c, occ.P(occ.KindConfiguration, occ.ActionCreate), collectionRef(occ.KindConfiguration, nsID),
		actConfigurationCreate, a.seeNamespace(nsID)); err != nil {
		return occ.Configuration{}, err
	}
	if err := validName("name", in.Name); err != nil {
		return occ.Configuration{}, err
	}
	if in.Values == nil {
		in.Values = map[string]any{}
	}
	if err := refuseOccKeys(in.Values); err != nil {
		return occ.Configuration{}, err
	}
	in.SecretBindings = normalizeBindings(in.SecretBindings)
	if err := a.checkBindings(ctx, c, nsID, actConfigurationCreate, in.SecretBindings); err != nil {
		return occ.Configuration{}, err
	}
	now := a.now()
	cfg := occ.Configuration{ID: occ.NewID(occ.PrefixConfiguration), NamespaceID: nsID, Name: in.Name, Kind: occ.ConfigurationKindAgent,
		Values: in.Values, SecretBindings: in.SecretBindings, Generation: 1, Version: 1, CreatedBy: c.PrincipalID, CreatedAt: now, UpdatedAt: now}
	row, err := encodeConfiguration(cfg)
	if err != nil {
		return occ.Configuration{}, err
	}
	err = a.tx(ctx, func(tx *store.Tx) error {
		if err := a.requireLiveNamespace(ctx, tx, nsID); err != nil {
			return err
		}
		if err := tx.InsertConfiguration(ctx, row); err != nil {
			return nameConflict(err, "A Configuration with this name exists in the Namespace.")
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: actConfigurationCreate, ActorID: c.PrincipalID, Resource: cfg.Ref(),
			Details: map[string]any{"name": cfg.Name, "generation": cfg.Generation, "boundSecretIds": boundIDs(cfg.SecretBindings)}})
	})
	return cfg, err
}

// requireLiveNamespace refuses new resources in a failed or deleting
// Namespace (a provisioning one is fine).
func (a *App) requireLiveNamespace(ctx context.Context, tx *store.Tx, nsID string) error {
	ns, err := tx.GetNamespace(ctx, nsID)
	if err != nil {
		return notFoundOr(err)
	}
	if ns.Status == occ.NamespaceDeleting || ns.Status == occ.NamespaceFailed {
		return occ.E(occ.CodeNamespaceNotReady, fmt.Sprintf("The Namespace is %s.", ns.Status))
	}
	return nil
}

func boundIDs(bs map[string]occ.SecretBinding) []string {
	ids := make([]string, 0, len(bs))
	for _, b := range bs {
		ids = append(ids, b.Source.ID)
	}
	sort.Strings(ids)
	return ids
}

// GetConfiguration returns one Configuration, readable metadata included
// even when its saved settings cannot be decoded.
func (a *App) GetConfiguration(ctx context.Context, c occ.Caller, nsID, id string) (occ.Configuration, error) {
	if err := a.require(ctx, c, occ.P(occ.KindConfiguration, occ.ActionRead), configurationRef(nsID, id), "configurations.read", a.seeConfiguration(nsID, id)); err != nil {
		return occ.Configuration{}, err
	}
	row, err := a.st.GetConfiguration(ctx, nsID, id)
	if err != nil {
		return occ.Configuration{}, notFoundOr(err)
	}
	return decodeConfiguration(row), nil
}

// ListConfigurations lists the Configurations the caller may read.
func (a *App) ListConfigurations(ctx context.Context, c occ.Caller, nsID string, page PageRequest) (Page[occ.Configuration], error) {
	if err := a.requireNamespaceRead(ctx, c, nsID, "configurations.list"); err != nil {
		return Page[occ.Configuration]{}, err
	}
	return readable(ctx, a, c, occ.KindConfiguration, page,
		func(ctx context.Context, after store.Cursor, limit int) ([]store.ConfigurationRow, error) {
			return a.st.ListConfigurations(ctx, nsID, after, limit)
		},
		func(r store.ConfigurationRow) (time.Time, string) { return rowPos(r.CreatedAt, r.ID) },
		func(r store.ConfigurationRow) occ.ResourceRef { return configurationRef(nsID, r.ID) }, decodeConfiguration)
}

// UpdateConfiguration applies a PATCH: a JSON Merge Patch of the document,
// optional name and bindings; each PATCH increments generation. It changes
// no Agent and no revision. A concurrent change re-applies the patch to the
// new document (optimistic).
func (a *App) UpdateConfiguration(ctx context.Context, c occ.Caller, nsID, id string, p ConfigurationPatch, ifMatch IfMatch) (occ.Configuration, error) {
	if err := a.require(ctx, c, occ.P(occ.KindConfiguration, occ.ActionUpdate), configurationRef(nsID, id), actConfigurationUpdate, a.seeConfiguration(nsID, id)); err != nil {
		return occ.Configuration{}, err
	}
	if p.Name != nil {
		if err := validName("name", *p.Name); err != nil {
			return occ.Configuration{}, err
		}
	}
	return retried(ctx, a, id, func() (occ.Configuration, error) { return a.patchConfiguration(ctx, c, nsID, id, p, ifMatch) })
}

// patchConfiguration is one attempt of UpdateConfiguration, on the stored
// Configuration as it is now.
func (a *App) patchConfiguration(ctx context.Context, c occ.Caller, nsID, id string, p ConfigurationPatch, ifMatch IfMatch) (occ.Configuration, error) {
	row, err := a.st.GetConfiguration(ctx, nsID, id)
	if err != nil {
		return occ.Configuration{}, notFoundOr(err)
	}
	cur := decodeConfiguration(row)
	if cur.ReadError != nil {
		return occ.Configuration{}, occ.E(occ.CodeResourceConflict, "The saved configuration cannot be read, so it cannot be patched; delete and recreate it.")
	}
	if err := ifMatch.check(cur.Version); err != nil {
		return occ.Configuration{}, err
	}
	next := cur
	if p.Name != nil {
		next.Name = *p.Name
	}
	if p.Values != nil {
		next.Values = mergePatch(cur.Values, p.Values).(map[string]any)
	}
	if err := refuseOccKeys(next.Values); err != nil {
		return occ.Configuration{}, err
	}
	if p.SecretBindings != nil {
		next.SecretBindings = normalizeBindings(*p.SecretBindings)
	}
	// Every Secret bound by the result, retained ones included, needs the caller's operate.
	if err := a.checkBindings(ctx, c, nsID, actConfigurationUpdate, next.SecretBindings); err != nil {
		return occ.Configuration{}, err
	}
	next.Generation++
	next.UpdatedAt = a.now()
	out, err := encodeConfiguration(next)
	if err != nil {
		return occ.Configuration{}, err
	}
	err = a.st.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.UpdateConfiguration(ctx, out); err != nil {
			return nameConflict(notFoundOr(err), "A Configuration with this name exists in the Namespace.")
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: actConfigurationUpdate, ActorID: c.PrincipalID, Resource: next.Ref(),
			Details: map[string]any{"name": next.Name, "generation": next.Generation, "boundSecretIds": boundIDs(next.SecretBindings)}})
	})
	next.Version++
	return next, err
}

// DeleteConfiguration removes a Configuration no Agent references.
func (a *App) DeleteConfiguration(ctx context.Context, c occ.Caller, nsID, id string, ifMatch IfMatch) error {
	if err := a.require(ctx, c, occ.P(occ.KindConfiguration, occ.ActionDelete), configurationRef(nsID, id), actConfigurationDelete, a.seeConfiguration(nsID, id)); err != nil {
		return err
	}
	return a.tx(ctx, func(tx *store.Tx) error {
		row, err := tx.GetConfiguration(ctx, nsID, id)
		if err != nil {
			return notFoundOr(err)
		}
		if err := ifMatch.check(row.Version); err != nil {
			return err
		}
		if err := configurationBlockers(ctx, tx, nsID, id); err != nil {
			return err
		}
		if err := tx.DeleteConfiguration(ctx, nsID, id); err != nil {
			return notFoundOr(err)
		}
		removed, err := tx.DeleteTargetPolicy(ctx, occ.KindConfiguration, id)
		if err != nil {
			return occ.Unavailable(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: actConfigurationDelete, ActorID: c.PrincipalID, Resource: configurationRef(nsID, id),
			Details: map[string]any{"name": row.Name, "removedPolicyIds": removed}})
	})
}

// configurationBlockers answers 409 while an Agent's draft references the
// Configuration.
func configurationBlockers(ctx context.Context, tx *store.Tx, nsID, id string) error {
	users, err := tx.AgentsUsingConfiguration(ctx, nsID, id)
	if err != nil {
		return occ.Unavailable(err)
	}
	if len(users) > 0 {
		return occ.E(occ.CodeResourceConflict, "An Agent references this Configuration: "+blockerList(users)+".")
	}
	return nil
}
