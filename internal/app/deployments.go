package app

import (
	"context"
	"encoding/json"
	"time"

	"github.com/openclaw/occ/internal/occ"
)

// DeploymentStatus is what GET …/deployments/:id answers, read from
// persisted state only.
type DeploymentStatus struct {
	DeploymentID string
	NamespaceID  string
	AgentID      string
	Status       string
	Error        *DeploymentError
	Warnings     []occ.DeploymentWarning
	Progress     *Progress
}

// DeploymentError is a terminal failure with a fixed code and message.
type DeploymentError struct {
	Code    string
	Message string
	Data    map[string]any
}

// Progress is the latest attempt and the next eligible time of pending work.
type Progress struct {
	LastAttempt   *Attempt
	NextAttemptAt *time.Time
}

// Attempt is one recorded attempt's allowlisted code and fixed message,
// with the install's phase and bytes of RUNTIME_INSTALLING.
type Attempt struct {
	At      time.Time
	Code    string
	Message string
	Install *InstallProgress
}

// InstallProgress is how far a runtime install got
// (progress.lastAttempt.data).
type InstallProgress struct {
	Phase string `json:"phase"`
	Bytes int64  `json:"bytes"`
}

// GetDeployment returns a deployment's status with exact agent_revision:read
// alone (agent:operate is not needed).
func (a *App) GetDeployment(ctx context.Context, c occ.Caller, nsID, agentID, revID string) (DeploymentStatus, error) {
	if err := a.requireDeploymentRead(ctx, c, nsID, agentID, revID); err != nil {
		return DeploymentStatus{}, err
	}
	return a.deploymentStatus(ctx, nsID, agentID, revID)
}

// requireDeploymentRead is the permission of reading a deployment, once or
// as a stream: exact agent_revision:read (404 when the caller cannot see it).
func (a *App) requireDeploymentRead(ctx context.Context, c occ.Caller, nsID, agentID, revID string) error {
	see := seeExact(revisionRef(nsID, revID), func(ctx context.Context) error {
		_, err := a.st.GetDeployment(ctx, nsID, agentID, revID)
		return err
	})
	return a.require(ctx, c, occ.P(occ.KindAgentRevision, occ.ActionRead), revisionRef(nsID, revID), "deployments.read", see)
}

// deploymentStatus reads a deployment's persisted status, unauthorized.
func (a *App) deploymentStatus(ctx context.Context, nsID, agentID, revID string) (DeploymentStatus, error) {
	d, err := a.st.GetDeployment(ctx, nsID, agentID, revID)
	if err != nil {
		return DeploymentStatus{}, notFoundOr(err)
	}
	out := DeploymentStatus{DeploymentID: d.RevisionID, NamespaceID: d.NamespaceID, AgentID: d.AgentID, Status: d.Status, Warnings: []occ.DeploymentWarning{}}
	switch d.Status {
	case occ.DeploymentSucceeded:
		_ = json.Unmarshal([]byte(d.Warnings), &out.Warnings)
	case occ.DeploymentFailed:
		e := &DeploymentError{Code: d.ErrorCode, Message: occ.DeploymentMessage(d.ErrorCode)}
		if d.ErrorData != "" {
			_ = json.Unmarshal([]byte(d.ErrorData), &e.Data)
		}
		out.Error = e
	default:
		p := &Progress{}
		if d.LastAttemptCode != "" {
			code, msg := occ.AttemptProgress(d.LastAttemptCode)
			p.LastAttempt = &Attempt{At: occ.FromMillis(d.LastAttemptAt), Code: code, Message: msg}
			var in InstallProgress
			if code == occ.AttemptRuntimeInstalling && json.Unmarshal([]byte(d.LastAttemptData), &in) == nil && occ.InstallPhase(in.Phase) {
				p.LastAttempt.Install = &in
			}
		}
		if d.Status == occ.DeploymentQueued && d.NextAttemptAt != 0 {
			t := occ.FromMillis(d.NextAttemptAt)
			p.NextAttemptAt = &t
		}
		out.Progress = p
	}
	return out, nil
}
