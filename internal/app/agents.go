package app

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

const (
	actAgentCreate = "agents.create"
	actAgentUpdate = "agents.update"
)

func agentRef(nsID, id string) occ.ResourceRef {
	return occ.ResourceRef{Kind: occ.KindAgent, ID: id, NamespaceID: nsID}
}

func (a *App) seeAgent(nsID, id string) *visibility {
	return seeExact(agentRef(nsID, id), func(ctx context.Context) error { _, err := a.st.GetAgent(ctx, nsID, id); return err })
}

// AgentInput creates an Agent. Optional fields left unset come from the
// Preset when one is named; explicit fields (null included) win.
type AgentInput struct {
	Name                  string
	ConfigurationID       string
	ExecutionMode         string // "" = unset
	BackendID             Optional[string]
	HarnessAuth           Optional[*occ.HarnessAuth]
	Plugins               map[string]occ.PluginSelection // nil = unset
	PresetID              string
	InitialWorkspaceFiles map[string]string // nil = native initialization
	WorkspaceDefaultsID   string
}

// AgentPatch changes an Agent's draft. ConfigurationID is required (seed:
// Editable configuration); the rest is tri-state like Presets.
type AgentPatch struct {
	ConfigurationID string
	ExecutionMode   string // "" = keep
	BackendID       Optional[string]
	HarnessAuth     Optional[*occ.HarnessAuth]
	Plugins         map[string]occ.PluginSelection
	PluginsSet      bool
}

// CreateAgent saves a new Agent: active, desired stopped, no revision, no
// workload, with a new immutable service principal.
func (a *App) CreateAgent(ctx context.Context, c occ.Caller, nsID string, in AgentInput) (occ.Agent, error) {
	if err := a.require(ctx, c, occ.P(occ.KindAgent, occ.ActionCreate), collectionRef(occ.KindAgent, nsID), actAgentCreate, a.seeNamespace(nsID)); err != nil {
		return occ.Agent{}, err
	}
	if err := validName("name", in.Name); err != nil {
		return occ.Agent{}, err
	}
	s, err := a.launchSettings(ctx, c, nsID, in)
	if err != nil {
		return occ.Agent{}, err
	}
	if err := a.requireConfiguration(ctx, c, nsID, in.ConfigurationID, actAgentCreate); err != nil {
		return occ.Agent{}, err
	}
	if err := a.validateAgentSettings(ctx, c, nsID, &s, nil, actAgentCreate); err != nil {
		return occ.Agent{}, err
	}
	staged, err := a.stageFiles(in.InitialWorkspaceFiles, in.WorkspaceDefaultsID)
	if err != nil {
		return occ.Agent{}, err
	}
	now := a.now()
	g := occ.Agent{ID: occ.NewID(occ.PrefixAgent), NamespaceID: nsID, Name: in.Name, Status: occ.AgentActive, DesiredState: occ.DesiredStopped,
		ConfigurationID: in.ConfigurationID, Settings: s, Version: 1, CreatedBy: c.PrincipalID, CreatedAt: now, UpdatedAt: now,
		Unreadable: map[string]bool{}}
	sp := occ.Principal{ID: occ.NewID(occ.PrefixServicePrincipal), Kind: occ.PrincipalService, Name: "agent " + in.Name,
		NamespaceID: nsID, AgentID: g.ID, CreatedAt: now, UpdatedAt: now, Version: 1}
	g.ServicePrincipalID = sp.ID
	row, err := store.EncodeAgent(g)
	if err != nil {
		return occ.Agent{}, err
	}
	err = a.tx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertAgent(ctx, row, sp); errors.Is(err, store.ErrNotFound) {
			// The Namespace is not live: say why.
			if err := a.requireLiveNamespace(ctx, tx, nsID); err != nil {
				return err
			}
			return occ.Unavailable(errors.New("the Namespace was not live and is now"))
		} else if err != nil {
			return nameConflict(err, "An Agent with this name exists in the Namespace.")
		}
		if staged != "" {
			if err := tx.StageWorkspaceFiles(ctx, g.ID, in.WorkspaceDefaultsID, staged, occ.Millis(now)); err != nil {
				return occ.Unavailable(err)
			}
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: actAgentCreate, ActorID: c.PrincipalID, Resource: g.Ref(),
			Details: map[string]any{"name": g.Name, "configurationId": g.ConfigurationID, "servicePrincipalId": sp.ID,
				"presetId": in.PresetID, "stagedWorkspaceFileCount": len(in.InitialWorkspaceFiles)}})
	})
	return g, err
}

// launchSettings resolves an Agent's settings from the body and, when one
// is named, a Preset: explicit fields win; unset ones come from the Preset;
// the rest take the seed's defaults (embedded, no Backend, no harness
// binding, no plugins).
func (a *App) launchSettings(ctx context.Context, c occ.Caller, nsID string, in AgentInput) (occ.AgentSettings, error) {
	s := occ.AgentSettings{ExecutionMode: occ.ExecutionEmbedded, Plugins: map[string]occ.PluginSelection{}}
	if in.PresetID != "" {
		ref := presetRef(nsID, in.PresetID)
		if err := a.require(ctx, c, occ.P(occ.KindPreset, occ.ActionRead), ref, actAgentCreate, nil); err != nil {
			return s, err
		}
		row, err := a.st.GetPreset(ctx, nsID, in.PresetID)
		if errors.Is(err, store.ErrNotFound) {
			return s, invalidAt("/presetId", "The Preset does not exist in this Namespace.")
		} else if err != nil {
			return s, occ.Unavailable(err)
		}
		p := decodePreset(row)
		if p.Settings == nil {
			return s, occ.E(occ.CodeResourceConflict, "The Preset's saved settings cannot be read.")
		}
		if p.Settings.ExecutionMode != "" {
			s.ExecutionMode = p.Settings.ExecutionMode
		}
		s.BackendID, s.HarnessAuth, s.Plugins = p.Settings.BackendID, p.Settings.HarnessAuth, p.Settings.Plugins
	}
	if in.ExecutionMode != "" {
		s.ExecutionMode = in.ExecutionMode
	}
	applyOptional(&s.BackendID, in.BackendID, "")
	applyOptional(&s.HarnessAuth, in.HarnessAuth, nil)
	if in.Plugins != nil {
		s.Plugins = in.Plugins
	}
	return s, nil
}

// requireConfiguration checks the caller's exact configuration:read and
// that the Configuration is of this Namespace and of kind agent.
func (a *App) requireConfiguration(ctx context.Context, c occ.Caller, nsID, id, action string) error {
	if err := a.require(ctx, c, occ.P(occ.KindConfiguration, occ.ActionRead), configurationRef(nsID, id), action, nil); err != nil {
		return err
	}
	row, err := a.st.GetConfiguration(ctx, nsID, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && row.Kind != occ.ConfigurationKindAgent) {
		return invalidAt("/configurationId", "The Configuration does not exist in this Namespace or is not of kind agent.")
	}
	if err != nil {
		return occ.Unavailable(err)
	}
	return nil
}

// validateAgentSettings checks the settings' structure and topology, and
// the caller's grants on every credential reference: exact secret:operate
// on a bound Secret, service_account:read on a bound account (and on the
// one replaced or cleared), credential_source:operate on a bound source.
func (a *App) validateAgentSettings(ctx context.Context, c occ.Caller, nsID string, s *occ.AgentSettings, prev *occ.HarnessAuth, action string) error {
	if err := validateExecutionMode(s.ExecutionMode, "/executionMode"); err != nil {
		return err
	}
	if err := a.validateBackend(s.BackendID, "/backendId"); err != nil {
		return err
	}
	if err := validateHarnessAuth(s.HarnessAuth, nsID, s.ExecutionMode, "/harnessAuth"); err != nil {
		return err
	}
	if h := s.HarnessAuth; h != nil && h.Method == occ.HarnessRuntime && !slices.Contains(a.opts.Compute.HarnessAuthMethods, occ.HarnessRuntime) {
		// Runtime authentication names no source to validate later: it is
		// refused as soon as the driver cannot honour it (Kubernetes and
		// Docker reject it, seed).
		return invalidAt("/harnessAuth/method", "Runtime authentication is only for embedded OpenClaw on a compute driver that takes host credentials (ssh).")
	}
	if err := validatePlugins(s.Plugins, "/plugins"); err != nil {
		return err
	}
	if err := a.checkHarnessRefs(ctx, c, nsID, s, action); err != nil {
		return err
	}
	if prev != nil && prev.Method == occ.HarnessChatGPTServiceAccount && !sameHarness(prev, s.HarnessAuth) {
		ref := occ.ResourceRef{Kind: occ.KindServiceAccount, ID: prev.ServiceAccountID, NamespaceID: nsID}
		if err := a.require(ctx, c, occ.P(occ.KindServiceAccount, occ.ActionRead), ref, action, nil); err != nil {
			return err
		}
	}
	return nil
}

func sameHarness(a, b *occ.HarnessAuth) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// checkHarnessRefs authorizes and resolves the resource a harness binding
// names.
func (a *App) checkHarnessRefs(ctx context.Context, c occ.Caller, nsID string, s *occ.AgentSettings, action string) error {
	h := s.HarnessAuth
	if h == nil {
		return nil
	}
	var perm occ.Permission
	var id, at string
	switch h.Method {
	case occ.HarnessAPIKey, occ.HarnessCodexPAT:
		perm, id, at = occ.P(occ.KindSecret, occ.ActionOperate), h.Source.ID, "/harnessAuth/source/id"
	case occ.HarnessChatGPTServiceAccount:
		perm, id, at = occ.P(occ.KindServiceAccount, occ.ActionRead), h.ServiceAccountID, "/harnessAuth/serviceAccountId"
	case occ.HarnessCredentialSource:
		perm, id, at = occ.P(occ.KindCredentialSource, occ.ActionOperate), h.SourceID, "/harnessAuth/sourceId"
	default:
		return nil
	}
	ref := occ.ResourceRef{Kind: perm.Kind, ID: id, NamespaceID: nsID}
	if err := a.require(ctx, c, perm, ref, action, nil); err != nil {
		return err
	}
	lookup, ok := a.targetLookups()[perm.Kind]
	if !ok {
		return invalidAt(at, "The referenced resource does not exist in this Namespace.")
	}
	if err := lookup(ctx, nsID, id); errors.Is(err, store.ErrNotFound) {
		return invalidAt(at, "The referenced resource does not exist in this Namespace.")
	} else if err != nil {
		return notFoundOr(err)
	}
	if h.Method == occ.HarnessChatGPTServiceAccount {
		return a.checkAccountBackend(ctx, nsID, id, s.BackendID)
	}
	return nil
}

// GetAgent returns one Agent.
func (a *App) GetAgent(ctx context.Context, c occ.Caller, nsID, id string) (occ.Agent, error) {
	if err := a.require(ctx, c, occ.P(occ.KindAgent, occ.ActionRead), agentRef(nsID, id), "agents.read", a.seeAgent(nsID, id)); err != nil {
		return occ.Agent{}, err
	}
	row, err := a.st.GetAgent(ctx, nsID, id)
	if err != nil {
		return occ.Agent{}, notFoundOr(err)
	}
	return store.DecodeAgent(row), nil
}

// ListAgents lists the Agents the caller may read exactly.
func (a *App) ListAgents(ctx context.Context, c occ.Caller, nsID string, page PageRequest) (Page[occ.Agent], error) {
	if err := a.requireNamespaceRead(ctx, c, nsID, "agents.list"); err != nil {
		return Page[occ.Agent]{}, err
	}
	return readable(ctx, a, c, occ.KindAgent, page,
		func(ctx context.Context, after store.Cursor, limit int) ([]store.AgentRow, error) {
			return a.st.ListAgents(ctx, nsID, after, limit)
		},
		func(r store.AgentRow) (time.Time, string) { return rowPos(r.CreatedAt, r.ID) },
		func(r store.AgentRow) occ.ResourceRef { return agentRef(nsID, r.ID) }, store.DecodeAgent)
}

// UpdateAgent changes the draft: the Configuration reference (always
// given), and tri-state settings. It queues no work and changes no revision.
// A concurrent change re-applies the patch to the new draft (optimistic).
func (a *App) UpdateAgent(ctx context.Context, c occ.Caller, nsID, id string, p AgentPatch, ifMatch IfMatch) (occ.Agent, error) {
	if err := a.require(ctx, c, occ.P(occ.KindAgent, occ.ActionUpdate), agentRef(nsID, id), actAgentUpdate, a.seeAgent(nsID, id)); err != nil {
		return occ.Agent{}, err
	}
	return retried(ctx, a, id, func() (occ.Agent, error) { return a.patchAgent(ctx, c, nsID, id, p, ifMatch) })
}

// patchAgent is one attempt of UpdateAgent, on the stored Agent as it is
// now.
func (a *App) patchAgent(ctx context.Context, c occ.Caller, nsID, id string, p AgentPatch, ifMatch IfMatch) (occ.Agent, error) {
	row, err := a.st.GetAgent(ctx, nsID, id)
	if err != nil {
		return occ.Agent{}, notFoundOr(err)
	}
	cur := store.DecodeAgent(row)
	if cur.Status == occ.AgentDeleting {
		return occ.Agent{}, occ.E(occ.CodeAgentDeleting, "The Agent is being deleted.")
	}
	if cur.ReadError != nil {
		return occ.Agent{}, occ.E(occ.CodeResourceConflict, "The Agent's saved settings cannot be read, so they cannot be patched.")
	}
	if err := ifMatch.check(cur.Version); err != nil {
		return occ.Agent{}, err
	}
	if err := a.requireConfiguration(ctx, c, nsID, p.ConfigurationID, actAgentUpdate); err != nil {
		return occ.Agent{}, err
	}
	next := cur
	s := cur.Settings
	if p.ExecutionMode != "" {
		s.ExecutionMode = p.ExecutionMode
	}
	applyOptional(&s.BackendID, p.BackendID, "")
	applyOptional(&s.HarnessAuth, p.HarnessAuth, nil)
	if p.PluginsSet {
		s.Plugins = p.Plugins
	}
	var prev *occ.HarnessAuth
	if p.HarnessAuth.Set {
		prev = cur.Settings.HarnessAuth
	}
	check := s
	if !p.HarnessAuth.Set {
		// An unchanged binding is not re-authorized; its topology still is.
		if err := validateHarnessAuth(s.HarnessAuth, nsID, s.ExecutionMode, "/harnessAuth"); err != nil {
			return occ.Agent{}, err
		}
		check.HarnessAuth = nil
	}
	if err := a.validateAgentSettings(ctx, c, nsID, &check, prev, actAgentUpdate); err != nil {
		return occ.Agent{}, err
	}
	if p.HarnessAuth.Set {
		s.HarnessAuth = check.HarnessAuth
	}
	next.ConfigurationID, next.Settings, next.UpdatedAt = p.ConfigurationID, s, a.now()
	out, err := store.EncodeAgent(next)
	if err != nil {
		return occ.Agent{}, err
	}
	err = a.st.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.UpdateAgent(ctx, out); err != nil {
			return notFoundOr(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: actAgentUpdate, ActorID: c.PrincipalID, Resource: next.Ref(),
			Details: map[string]any{"configurationId": next.ConfigurationID}})
	})
	next.Version++
	return next, err
}
