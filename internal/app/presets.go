package app

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

const presetSchema = 1

const (
	actPresetCreate = "presets.create"
	actPresetUpdate = "presets.update"
	actPresetDelete = "presets.delete"
	actPresetSeed   = "presets.seed"
)

func presetRef(nsID, id string) occ.ResourceRef {
	return occ.ResourceRef{Kind: occ.KindPreset, ID: id, NamespaceID: nsID}
}

func (a *App) seePreset(nsID, id string) *visibility {
	return seeExact(presetRef(nsID, id), func(ctx context.Context) error { _, err := a.st.GetPreset(ctx, nsID, id); return err })
}

// PresetPatch changes a Preset. Nullable settings are tri-state: Set false
// keeps, Set with Null clears, a value replaces; Plugins nil keeps, an empty
// map clears, a map replaces.
type PresetPatch struct {
	Name            *string
	ExecutionMode   Optional[string]
	BackendID       Optional[string]
	ConfigurationID Optional[string]
	HarnessAuth     Optional[*occ.HarnessAuth]
	Plugins         map[string]occ.PluginSelection
	PluginsSet      bool
}

// Optional is a PATCH field: absent (Set false), null (Null), or a value.
type Optional[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// validatePresetSettings checks a Preset's settings in its Namespace.
func (a *App) validatePresetSettings(ctx context.Context, nsID string, s *occ.PresetSettings) error {
	if err := validateExecutionMode(s.ExecutionMode, "/executionMode"); err != nil {
		return err
	}
	if err := a.validateBackend(s.BackendID, "/backendId"); err != nil {
		return err
	}
	if err := validateHarnessAuth(s.HarnessAuth, nsID, s.ExecutionMode, "/harnessAuth"); err != nil {
		return err
	}
	if s.Plugins == nil {
		s.Plugins = map[string]occ.PluginSelection{}
	}
	if err := validatePlugins(s.Plugins, "/plugins"); err != nil {
		return err
	}
	if s.ConfigurationID != "" {
		_, err := a.st.GetConfiguration(ctx, nsID, s.ConfigurationID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && !occ.ValidID(occ.PrefixConfiguration, s.ConfigurationID)) {
			return invalidAt("/configurationId", "The Configuration does not exist in this Namespace.")
		}
		if err != nil {
			return occ.Unavailable(err)
		}
	}
	return nil
}

func encodePreset(p occ.Preset) (store.PresetRow, error) {
	settings, err := json.Marshal(p.Settings)
	if err != nil {
		return store.PresetRow{}, err
	}
	return store.PresetRow{ID: p.ID, NamespaceID: p.NamespaceID, Name: p.Name, Source: p.Source, SchemaVersion: presetSchema,
		Settings: string(settings), Version: p.Version, CreatedBy: p.CreatedBy, CreatedAt: occ.Millis(p.CreatedAt), UpdatedAt: occ.Millis(p.UpdatedAt)}, nil
}

// decodePreset reads a stored Preset; unreadable settings are omitted and
// named, never defaulted.
func decodePreset(r store.PresetRow) occ.Preset {
	p := occ.Preset{ID: r.ID, NamespaceID: r.NamespaceID, Name: r.Name, Source: r.Source, Version: r.Version, CreatedBy: r.CreatedBy,
		CreatedAt: occ.FromMillis(r.CreatedAt), UpdatedAt: occ.FromMillis(r.UpdatedAt)}
	var s occ.PresetSettings
	if r.SchemaVersion != presetSchema || json.Unmarshal([]byte(r.Settings), &s) != nil || s.Plugins == nil {
		p.ReadError = &occ.ReadError{Code: occ.CodeSavedConfigurationUnreadable, Field: "settings"}
		return p
	}
	p.Settings = &s
	return p
}

// CreatePreset adds a Namespace Preset.
func (a *App) CreatePreset(ctx context.Context, c occ.Caller, nsID, name string, s occ.PresetSettings) (occ.Preset, error) {
	if err := a.require(ctx, c, occ.P(occ.KindPreset, occ.ActionCreate), collectionRef(occ.KindPreset, nsID), actPresetCreate, a.seeNamespace(nsID)); err != nil {
		return occ.Preset{}, err
	}
	if err := validName("name", name); err != nil {
		return occ.Preset{}, err
	}
	if err := a.validatePresetSettings(ctx, nsID, &s); err != nil {
		return occ.Preset{}, err
	}
	now := a.now()
	p := occ.Preset{ID: occ.NewID(occ.PrefixPreset), NamespaceID: nsID, Name: name, Source: occ.PresetFromNamespace, Settings: &s,
		Version: 1, CreatedBy: c.PrincipalID, CreatedAt: now, UpdatedAt: now}
	row, err := encodePreset(p)
	if err != nil {
		return occ.Preset{}, err
	}
	err = a.tx(ctx, func(tx *store.Tx) error {
		if err := a.requireLiveNamespace(ctx, tx, nsID); err != nil {
			return err
		}
		if err := tx.InsertPreset(ctx, row); err != nil {
			return nameConflict(err, "A Preset with this name exists in the Namespace.")
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: actPresetCreate, ActorID: c.PrincipalID, Resource: p.Ref(), Details: map[string]any{"name": name}})
	})
	return p, err
}

// GetPreset returns one Preset.
func (a *App) GetPreset(ctx context.Context, c occ.Caller, nsID, id string) (occ.Preset, error) {
	if err := a.require(ctx, c, occ.P(occ.KindPreset, occ.ActionRead), presetRef(nsID, id), "presets.read", a.seePreset(nsID, id)); err != nil {
		return occ.Preset{}, err
	}
	row, err := a.st.GetPreset(ctx, nsID, id)
	if err != nil {
		return occ.Preset{}, notFoundOr(err)
	}
	return decodePreset(row), nil
}

// ListPresets lists the Presets the caller may read.
func (a *App) ListPresets(ctx context.Context, c occ.Caller, nsID string, page PageRequest) (Page[occ.Preset], error) {
	if err := a.requireNamespaceRead(ctx, c, nsID, "presets.list"); err != nil {
		return Page[occ.Preset]{}, err
	}
	return readable(ctx, a, c, occ.KindPreset, page,
		func(ctx context.Context, after store.Cursor, limit int) ([]store.PresetRow, error) {
			return a.st.ListPresets(ctx, nsID, after, limit)
		},
		func(r store.PresetRow) (time.Time, string) { return rowPos(r.CreatedAt, r.ID) },
		func(r store.PresetRow) occ.ResourceRef { return presetRef(nsID, r.ID) }, decodePreset)
}

// UpdatePreset applies a PATCH. Editing a Preset never changes an Agent
// made from it. A concurrent change re-applies the patch to the new Preset
// (optimistic).
func (a *App) UpdatePreset(ctx context.Context, c occ.Caller, nsID, id string, p PresetPatch, ifMatch IfMatch) (occ.Preset, error) {
	if err := a.require(ctx, c, occ.P(occ.KindPreset, occ.ActionUpdate), presetRef(nsID, id), actPresetUpdate, a.seePreset(nsID, id)); err != nil {
		return occ.Preset{}, err
	}
	if p.Name != nil {
		if err := validName("name", *p.Name); err != nil {
			return occ.Preset{}, err
		}
	}
	return retried(ctx, a, id, func() (occ.Preset, error) { return a.patchPreset(ctx, c, nsID, id, p, ifMatch) })
}

// patchPreset is one attempt of UpdatePreset, on the stored Preset as it
// is now.
func (a *App) patchPreset(ctx context.Context, c occ.Caller, nsID, id string, p PresetPatch, ifMatch IfMatch) (occ.Preset, error) {
	row, err := a.st.GetPreset(ctx, nsID, id)
	if err != nil {
		return occ.Preset{}, notFoundOr(err)
	}
	cur := decodePreset(row)
	if cur.ReadError != nil {
		return occ.Preset{}, occ.E(occ.CodeResourceConflict, "The saved Preset cannot be read, so it cannot be patched; delete and recreate it.")
	}
	if err := ifMatch.check(cur.Version); err != nil {
		return occ.Preset{}, err
	}
	next, s := cur, *cur.Settings
	if p.Name != nil {
		next.Name = *p.Name
	}
	applyOptional(&s.ExecutionMode, p.ExecutionMode, "")
	applyOptional(&s.BackendID, p.BackendID, "")
	applyOptional(&s.ConfigurationID, p.ConfigurationID, "")
	applyOptional(&s.HarnessAuth, p.HarnessAuth, nil)
	if p.PluginsSet {
		s.Plugins = p.Plugins
	}
	if err := a.validatePresetSettings(ctx, nsID, &s); err != nil {
		return occ.Preset{}, err
	}
	next.Settings, next.UpdatedAt = &s, a.now()
	out, err := encodePreset(next)
	if err != nil {
		return occ.Preset{}, err
	}
	err = a.st.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.UpdatePreset(ctx, out); err != nil {
			return nameConflict(notFoundOr(err), "A Preset with this name exists in the Namespace.")
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: actPresetUpdate, ActorID: c.PrincipalID, Resource: next.Ref(), Details: map[string]any{"name": next.Name}})
	})
	next.Version++
	return next, err
}

func applyOptional[T any](dst *T, o Optional[T], zero T) {
	switch {
	case !o.Set:
	case o.Null:
		*dst = zero
	default:
		*dst = o.Value
	}
}

// DeletePreset removes a Preset (Agents made from it keep their settings).
func (a *App) DeletePreset(ctx context.Context, c occ.Caller, nsID, id string, ifMatch IfMatch) error {
	if err := a.require(ctx, c, occ.P(occ.KindPreset, occ.ActionDelete), presetRef(nsID, id), actPresetDelete, a.seePreset(nsID, id)); err != nil {
		return err
	}
	return a.tx(ctx, func(tx *store.Tx) error {
		row, err := tx.GetPreset(ctx, nsID, id)
		if err != nil {
			return notFoundOr(err)
		}
		if err := ifMatch.check(row.Version); err != nil {
			return err
		}
		if err := tx.DeletePreset(ctx, nsID, id); err != nil {
			return notFoundOr(err)
		}
		removed, err := tx.DeleteTargetPolicy(ctx, occ.KindPreset, id)
		if err != nil {
			return occ.Unavailable(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: actPresetDelete, ActorID: c.PrincipalID, Resource: presetRef(nsID, id),
			Details: map[string]any{"name": row.Name, "removedPolicyIds": removed}})
	})
}

// seedPresets copies the installation-wide Presets into a Namespace inside
// tx, skipping names it already has.
func (a *App) seedPresets(ctx context.Context, tx *store.Tx, nsID, actor string) error {
	for _, t := range a.opts.Presets {
		s := occ.PresetSettings{ExecutionMode: t.ExecutionMode, BackendID: t.BackendID, Plugins: map[string]occ.PluginSelection{}}
		for id, policy := range t.Plugins {
			s.Plugins[id] = occ.PluginSelection{ApprovalPolicy: policy}
		}
		now := a.now()
		p := occ.Preset{ID: occ.NewID(occ.PrefixPreset), NamespaceID: nsID, Name: t.Name, Source: occ.PresetFromInstallation, Settings: &s,
			Version: 1, CreatedBy: actor, CreatedAt: now, UpdatedAt: now}
		row, err := encodePreset(p)
		if err != nil {
			return err
		}
		if added, err := tx.InsertPresetIfAbsent(ctx, row); err != nil {
			return occ.Unavailable(err)
		} else if !added {
			continue // the Namespace has a Preset of that name: left alone
		}
		if err := a.record(ctx, tx, occ.AuditEvent{Action: actPresetSeed, ActorID: actor, Resource: p.Ref(), Details: map[string]any{"name": t.Name}}); err != nil {
			return err
		}
	}
	return nil
}

// SeedInstallationPresets adds missing installation-wide Presets to every
// live Namespace, at start. Existing names are left alone.
func (a *App) SeedInstallationPresets(ctx context.Context) error {
	if len(a.opts.Presets) == 0 {
		return nil
	}
	after := store.Cursor{}
	for {
		nss, err := a.st.ListNamespaces(ctx, after, 100)
		if err != nil {
			return err
		}
		for _, ns := range nss {
			if ns.Status == occ.NamespaceDeleting {
				continue
			}
			if err := a.tx(ctx, func(tx *store.Tx) error { return a.seedPresets(ctx, tx, ns.ID, "system") }); err != nil {
				return err
			}
		}
		if len(nss) < 100 {
			return nil
		}
		after = store.After(nss[len(nss)-1].CreatedAt, nss[len(nss)-1].ID)
	}
}
