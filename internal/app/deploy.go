package app

import (
	"context"
	"errors"
	"fmt"
	"github.com/openclaw/occ/internal/audit"

	"github.com/openclaw/occ/internal/jobs"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

const (
	actAgentDeploy = "agents.deploy"
	actAgentStop   = "agents.stop"
	actAgentDelete = "agents.delete"
)

// loadAgentFor loads an Agent a use case acts on: it must exist, not be
// deleting, and have readable settings.
func (a *App) loadAgentFor(ctx context.Context, q interface {
	GetAgent(context.Context, string, string) (store.AgentRow, error)
}, nsID, id string) (occ.Agent, error) {
	return liveAgent(q.GetAgent(ctx, nsID, id))
}

// lockAgent is loadAgentFor in a transaction that writes the Agent, whose
// row stays locked until tx ends (store.Tx.LockAgent): deploys, stops and
// deletes of one Agent through different replicas take turns instead of
// failing each other's version compare.
func (a *App) lockAgent(ctx context.Context, tx *store.Tx, nsID, id string) (occ.Agent, error) {
	return liveAgent(tx.LockAgent(ctx, nsID, id))
}

// liveAgent decodes a read Agent row: a missing one is 404, one being
// deleted 409 AGENT_DELETING.
func liveAgent(row store.AgentRow, err error) (occ.Agent, error) {
	if err != nil {
		return occ.Agent{}, notFoundOr(err)
	}
	g := store.DecodeAgent(row)
	if g.Status == occ.AgentDeleting {
		return g, occ.E(occ.CodeAgentDeleting, "The Agent is being deleted.")
	}
	return g, nil
}

// Deploy admits an immutable revision of the Agent's saved draft and queues
// its work: 202 means admitted, not ready. Every bound Secret needs exact
// secret:operate for the caller and for the Agent's service principal.
func (a *App) Deploy(ctx context.Context, c occ.Caller, nsID, id string) (occ.Revision, error) {
	if err := a.require(ctx, c, occ.P(occ.KindAgent, occ.ActionDeploy), agentRef(nsID, id), actAgentDeploy, a.seeAgent(nsID, id)); err != nil {
		return occ.Revision{}, err
	}
	g, err := a.loadAgentFor(ctx, a.st, nsID, id)
	if err != nil {
		return occ.Revision{}, err
	}
	if err := a.requireReadyNamespace(ctx, a.st, nsID); err != nil {
		return occ.Revision{}, err
	}
	if g.ReadError != nil {
		return occ.Revision{}, occ.E(occ.CodeResourceConflict, "The Agent's saved settings cannot be read, so it cannot be deployed.")
	}
	if g.Settings.HarnessAuth == nil {
		return occ.Revision{}, occ.E(occ.CodeResourceConflict, "The Agent needs a harness authentication binding before it can be deployed.")
	}
	if err := a.requireConfiguration(ctx, c, nsID, g.ConfigurationID, actAgentDeploy); err != nil {
		return occ.Revision{}, err
	}
	row, err := a.st.GetConfiguration(ctx, nsID, g.ConfigurationID)
	if err != nil {
		return occ.Revision{}, notFoundOr(err)
	}
	cfg := decodeConfiguration(row)
	if cfg.ReadError != nil {
		return occ.Revision{}, occ.E(occ.CodeResourceConflict, "The Agent's Configuration cannot be read, so it cannot be deployed.")
	}
	// A Configuration stored before a key was refused is refused here.
	if err := refuseOccKeys(cfg.Values); err != nil {
		return occ.Revision{}, err
	}
	// The draft's settings are re-validated and the caller's grants on
	// every reference re-checked, as at create.
	s := g.Settings
	if err := a.validateAgentSettings(ctx, c, nsID, &s, nil, actAgentDeploy); err != nil {
		return occ.Revision{}, err
	}
	if err := a.requireComputeSupport(s, len(cfg.SecretBindings) > 0); err != nil {
		return occ.Revision{}, err
	}
	if err := a.requireDeployGrants(ctx, c, g, occ.DeployGrants(nsID, id, cfg.ID, s.HarnessAuth, cfg.SecretBindings)); err != nil {
		return occ.Revision{}, err
	}
	now := a.now()
	rev := occ.Revision{ID: occ.NewID(occ.PrefixRevision), AgentID: g.ID, NamespaceID: nsID, CreatedBy: c.PrincipalID, CreatedAt: now,
		Snapshot: &occ.RevisionSnapshot{
			Configuration: occ.ConfigurationSnapshot{ID: cfg.ID, Kind: cfg.Kind, Generation: cfg.Generation, Document: cfg.Values},
			ExecutionMode: s.ExecutionMode, BackendID: s.BackendID, HarnessAuth: s.HarnessAuth, Plugins: s.Plugins,
			ComputeDriver: a.opts.ComputeDriver, ServicePrincipalID: g.ServicePrincipalID, SecretBindings: cfg.SecretBindings}}
	err = a.txFor(ctx, id, func(tx *store.Tx) error {
		cur, err := a.lockAgent(ctx, tx, nsID, id)
		if err != nil {
			return err
		}
		if err := a.requireReadyNamespace(ctx, tx, nsID); err != nil {
			return err
		}
		if rev.Number, err = tx.NextRevisionNumber(ctx, id); err != nil {
			return occ.Unavailable(err)
		}
		vrow, err := store.EncodeRevision(rev)
		if err != nil {
			return err
		}
		if err := tx.InsertRevision(ctx, vrow); errors.Is(err, store.ErrConflict) {
			return store.ErrStale // a concurrent deploy took the number: run again
		} else if err != nil {
			return occ.Unavailable(err)
		}
		if err := tx.InsertDeployment(ctx, store.DeploymentRow{RevisionID: rev.ID, AgentID: id, NamespaceID: nsID, ActorID: c.PrincipalID,
			Status: occ.DeploymentQueued, Warnings: "[]", AdmittedAt: occ.Millis(now), NextAttemptAt: occ.Millis(now), UpdatedAt: occ.Millis(now)}); err != nil {
			return occ.Unavailable(err)
		}
		cur.DesiredState, cur.UpdatedAt = occ.DesiredRunning, now
		arow, err := store.EncodeAgent(cur)
		if err != nil {
			return err
		}
		if err := tx.UpdateAgent(ctx, arow); err != nil {
			return occ.Unavailable(err)
		}
		if err := a.jobs.Enqueue(ctx, tx, jobs.RevisionArgs{NamespaceID: nsID, AgentID: id, RevisionID: rev.ID, ActorID: c.PrincipalID}); err != nil {
			return occ.Unavailable(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: actAgentDeploy, ActorID: c.PrincipalID, Resource: rev.Ref(),
			Details: map[string]any{"agentId": id, "number": rev.Number, "configurationId": cfg.ID, "configurationGeneration": cfg.Generation}})
	})
	return rev, err
}

// requireComputeSupport refuses, before anything is admitted, an execution
// mode, harness authentication method or Configuration Secret bindings
// (secretBindings) the installation's compute driver cannot run: 400 naming
// the setting, with the deployment error code the worker would give (the
// same Capabilities.Refusal decides both). Plugins and initial files are
// checked when the revision starts (seed).
func (a *App) requireComputeSupport(s occ.AgentSettings, secretBindings bool) error {
	needs := occ.RevisionNeeds{ExecutionMode: s.ExecutionMode, SecretBindings: secretBindings}
	if s.HarnessAuth != nil {
		needs.HarnessAuthMethod = s.HarnessAuth.Method
	}
	if r := a.opts.Compute.Refusal(a.opts.ComputeDriver, needs); r != nil {
		return occ.Invalid(r.Message, occ.Detail{Path: r.Path, Code: r.Code})
	}
	return nil
}

// requireDeployGrants checks the deploy permission set (occ.DeployGrants,
// which the worker checks again at dispatch). The caller's own denials are
// generic 403s; a grant only the Agent's service principal misses is a
// 403 naming the principal, the permission and the resource.
func (a *App) requireDeployGrants(ctx context.Context, c occ.Caller, g occ.Agent, grants []occ.DeployGrant) error {
	for _, gr := range grants {
		if !gr.AgentPrincipal {
			if err := a.require(ctx, c, gr.Permission, gr.Resource, actAgentDeploy, nil); err != nil {
				return err
			}
			continue
		}
		d, err := a.authz.Decide(ctx, occ.Caller{PrincipalID: g.ServicePrincipalID}, gr.Permission, gr.Resource)
		if err != nil {
			return err
		}
		if d.Allowed {
			continue
		}
		// The Agent may have been deleted (its principal with it) since it
		// was read: then that is the answer, not a denial of a principal
		// that no longer exists.
		if _, err := a.loadAgentFor(ctx, a.st, g.NamespaceID, g.ID); err != nil {
			return err
		}
		ev := audit.Denial(actAgentDeploy, c.PrincipalID, g.Ref(), "AGENT_PRINCIPAL_NOT_AUTHORIZED",
			map[string]any{"servicePrincipalId": g.ServicePrincipalID, "permission": gr.Permission.String(), "secretId": gr.Resource.ID})
		if err := a.recordAlone(ctx, ev); err != nil {
			return err
		}
		return occ.E(occ.CodeForbidden, fmt.Sprintf("The Agent's service principal %s may not %s on Secret %s. "+
			"Grant it with `occ agents grant-secrets %s -n %s`, or bind a role with %s to %s.",
			g.ServicePrincipalID, gr.Permission, gr.Resource.ID, g.Name, g.NamespaceID, gr.Permission, g.ServicePrincipalID))
	}
	return nil
}

// Stop sets the Agent's desired state to stopped and queues the worker,
// which removes execution and routing; repeating is safe.
func (a *App) Stop(ctx context.Context, c occ.Caller, nsID, id string) (occ.Agent, error) {
	if err := a.require(ctx, c, occ.P(occ.KindAgent, occ.ActionOperate), agentRef(nsID, id), actAgentStop, a.seeAgent(nsID, id)); err != nil {
		return occ.Agent{}, err
	}
	var out occ.Agent
	err := a.txFor(ctx, id, func(tx *store.Tx) error {
		g, err := a.lockAgent(ctx, tx, nsID, id)
		if err != nil {
			return err
		}
		g.DesiredState, g.UpdatedAt = occ.DesiredStopped, a.now()
		row, err := store.EncodeAgent(g)
		if err != nil {
			return err
		}
		if err := tx.UpdateAgent(ctx, row); err != nil {
			return occ.Unavailable(err)
		}
		g.Version++
		out = g
		if err := a.jobs.Enqueue(ctx, tx, jobs.AgentArgs{NamespaceID: nsID, AgentID: id, Target: jobs.TargetStopped, ActorID: c.PrincipalID}); err != nil {
			return occ.Unavailable(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: actAgentStop, ActorID: c.PrincipalID, Resource: g.Ref()})
	})
	return out, err
}

// DeleteAgent marks the Agent deleting (desired stopped) and queues its
// teardown; reads keep working. Repeating while work is queued or running
// changes nothing; after a failure the initiator refills the budget, and
// another permitted caller takes over once the initiator lost delete.
func (a *App) DeleteAgent(ctx context.Context, c occ.Caller, nsID, id string) (occ.Agent, error) {
	perm := occ.P(occ.KindAgent, occ.ActionDelete)
	if err := a.require(ctx, c, perm, agentRef(nsID, id), actAgentDelete, a.seeAgent(nsID, id)); err != nil {
		return occ.Agent{}, err
	}
	var out occ.Agent
	var refused error
	err := a.txFor(ctx, id, func(tx *store.Tx) error {
		row, err := tx.LockAgent(ctx, nsID, id)
		if err != nil {
			return notFoundOr(err)
		}
		g := store.DecodeAgent(row)
		enqueue := func(actor string) error {
			return a.jobs.Enqueue(ctx, tx, jobs.AgentArgs{NamespaceID: nsID, AgentID: id, Target: jobs.TargetDeleted, ActorID: actor})
		}
		if g.Status == occ.AgentDeleting {
			out = g
			refused, err = a.teardownRetry(ctx, tx, c, g.Ref(), perm, actAgentDelete, enqueue)
			return err
		}
		now := a.now()
		row.Status, row.DesiredState, row.UpdatedAt = occ.AgentDeleting, occ.DesiredStopped, occ.Millis(now)
		if err := tx.UpdateAgent(ctx, row); err != nil {
			return occ.Unavailable(err)
		}
		g.Status, g.DesiredState, g.UpdatedAt, g.Version = occ.AgentDeleting, occ.DesiredStopped, now, g.Version+1
		out = g
		td := occ.Teardown{ResourceID: id, ResourceKind: occ.KindAgent, NamespaceID: nsID, ActorID: c.PrincipalID,
			State: occ.TeardownQueued, CreatedAt: now, UpdatedAt: now}
		if err := tx.UpsertTeardown(ctx, td); err != nil {
			return occ.Unavailable(err)
		}
		if err := enqueue(c.PrincipalID); err != nil {
			return occ.Unavailable(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: actAgentDelete, ActorID: c.PrincipalID, Resource: g.Ref()})
	})
	if err == nil && refused != nil {
		return occ.Agent{}, refused
	}
	return out, err
}

// recordAlone appends an event outside any transaction (a denial).
func (a *App) recordAlone(ctx context.Context, ev occ.AuditEvent) error {
	if err := a.st.InTx(ctx, func(tx *store.Tx) error { return a.record(ctx, tx, ev) }); err != nil {
		var oe *occ.Error
		if errors.As(err, &oe) {
			return oe
		}
		return occ.Unavailable(err)
	}
	return nil
}

// ResumeRunningAgents queues, at start, the resumption of every Agent
// desired running with an active revision.
func (a *App) ResumeRunningAgents(ctx context.Context) (int, error) {
	rows, err := a.st.RunningAgents(ctx)
	if err != nil {
		return 0, err
	}
	err = a.tx(ctx, func(tx *store.Tx) error {
		for _, r := range rows {
			if err := a.jobs.Enqueue(ctx, tx, jobs.AgentArgs{NamespaceID: r.NamespaceID, AgentID: r.ID, Target: jobs.TargetRunning, ActorID: "system"}); err != nil {
				return err
			}
		}
		return nil
	})
	return len(rows), err
}
