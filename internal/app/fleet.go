package app

import (
	"context"
	"errors"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// LatestDeployment returns the deployment of the Agent's newest revision,
// for a fleet view that lists many Agents: ok is false when the Agent has
// no revision or the caller may not read it (exact agent:read on the Agent
// and agent_revision:read on the revision). It decides without audit
// events, as it is asked for every listed Agent; opening the deployment
// itself goes through GetDeployment.
func (a *App) LatestDeployment(ctx context.Context, c occ.Caller, nsID, agentID string) (DeploymentStatus, bool, error) {
	if ok, err := a.allowed(ctx, c, occ.P(occ.KindAgent, occ.ActionRead), agentRef(nsID, agentID)); err != nil || !ok {
		return DeploymentStatus{}, false, err
	}
	id, err := a.st.LatestRevisionID(ctx, nsID, agentID)
	if errors.Is(err, store.ErrNotFound) {
		return DeploymentStatus{}, false, nil
	}
	if err != nil {
		return DeploymentStatus{}, false, occ.Unavailable(err)
	}
	if ok, err := a.allowed(ctx, c, occ.P(occ.KindAgentRevision, occ.ActionRead), revisionRef(nsID, id)); err != nil || !ok {
		return DeploymentStatus{}, false, err
	}
	s, err := a.deploymentStatus(ctx, nsID, agentID, id)
	if errors.Is(err, occ.ErrNotFound) {
		return DeploymentStatus{}, false, nil
	}
	return s, err == nil, err
}

// Allowed answers whether c holds perm on res, without an audit event: for
// a page deciding which buttons to offer. The action itself still goes
// through its use case, which decides again.
func (a *App) Allowed(ctx context.Context, c occ.Caller, perm occ.Permission, res occ.ResourceRef) (bool, error) {
	return a.allowed(ctx, c, perm, res)
}

func (a *App) allowed(ctx context.Context, c occ.Caller, perm occ.Permission, res occ.ResourceRef) (bool, error) {
	d, err := a.authz.Decide(ctx, c, perm, res)
	return d.Allowed, err
}
