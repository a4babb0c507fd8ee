package worker

import (
	"context"
	"errors"

	"github.com/riverqueue/river"

	"github.com/openclaw/occ/internal/audit"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/jobs"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// Audit actions of Agent lifecycle work.
const (
	ActAgentStop   = "agents.lifecycle.stop"
	ActAgentDelete = "agents.lifecycle.delete"
	// ActAgentCollect removes the stray workload of an Agent desired
	// stopped (strays.go).
	ActAgentCollect = "agents.lifecycle.collect"
)

type agentWorker struct {
	river.WorkerDefaults[jobs.AgentArgs]
	*deps
}

// Work converges an Agent toward stopped or deleted.
func (w *agentWorker) Work(ctx context.Context, job *river.Job[jobs.AgentArgs]) (err error) {
	defer func() { w.logRetry(job.JobRow, err) }()
	release, err := w.claim(ctx, job.Args.AgentID)
	if err != nil {
		return err
	}
	defer release()
	rd := w.driver
	ref := compute.AgentRef{NamespaceID: job.Args.NamespaceID, AgentID: job.Args.AgentID}
	switch job.Args.Target {
	case jobs.TargetStopped:
		return w.stop(ctx, job, rd, ref)
	case jobs.TargetDeleted:
		return w.teardown(ctx, job, rd, ref)
	case jobs.TargetRunning:
		return w.resume(ctx, job, rd, ref)
	}
	return river.JobCancel(errors.New("unknown agent target"))
}

// stop removes execution and routing, then clears activeRevisionId if the
// Agent is still desired stopped; history, credentials and state remain.
func (w *agentWorker) stop(ctx context.Context, job *river.Job[jobs.AgentArgs], rd compute.Driver, ref compute.AgentRef) error {
	row, err := w.st.GetAgent(ctx, ref.NamespaceID, ref.AgentID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	g := store.DecodeAgent(row)
	if g.DesiredState != occ.DesiredStopped {
		return nil // a later deployment superseded this stop
	}
	d, err := w.authz.Decide(ctx, occ.Caller{PrincipalID: job.Args.ActorID, Method: occ.AuthWorker}, occ.P(occ.KindAgent, occ.ActionOperate), g.Ref())
	if err != nil {
		return err
	}
	if !d.Allowed {
		return w.settleAgent(ctx, job, g.Ref(), ActAgentStop, occ.OutcomeFailure, occ.ReasonAuthorizationDenied)
	}
	if err := rd.StopAgent(ctx, ref); err != nil {
		if code := compute.PermanentCode(err); code != "" || job.Attempt >= job.MaxAttempts {
			return w.settleAgent(ctx, job, g.Ref(), ActAgentStop, occ.OutcomeFailure, firstNonEmpty(code, occ.ReasonExhausted))
		}
		return err
	}
	ctx, cancel := recordContext(ctx) // the driver is done: record it even past the job's timeout
	defer cancel()
	err = w.st.InTx(ctx, func(tx *store.Tx) error {
		row, err := tx.GetAgent(ctx, ref.NamespaceID, ref.AgentID)
		if err != nil {
			return err
		}
		if row.DesiredState != occ.DesiredStopped || row.ActiveRevisionID == "" {
			return nil
		}
		row.ActiveRevisionID, row.UpdatedAt = "", occ.Millis(w.now())
		return tx.UpdateAgent(ctx, row)
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return w.settleAgent(ctx, job, g.Ref(), ActAgentStop, occ.OutcomeSuccess, occ.ReasonAgentStopped)
}

// teardown retires everything the driver runs for the Agent, removes its
// workspace and credentials, then deletes the Agent, its revisions, its
// service principal with keys, and the grants aimed at it, in one
// transaction; the name is free again.
func (w *agentWorker) teardown(ctx context.Context, job *river.Job[jobs.AgentArgs], rd compute.Driver, ref compute.AgentRef) error {
	row, err := w.st.GetAgent(ctx, ref.NamespaceID, ref.AgentID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && row.Status != occ.AgentDeleting) {
		return nil
	}
	if err != nil {
		return err
	}
	td, err := w.st.GetTeardown(ctx, ref.AgentID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && td.State != occ.TeardownQueued) {
		return nil
	}
	if err != nil {
		return err
	}
	td.Attempts = job.Attempt
	g := store.DecodeAgent(row)
	d, err := w.authz.Decide(ctx, occ.Caller{PrincipalID: td.ActorID, Method: occ.AuthWorker}, occ.P(occ.KindAgent, occ.ActionDelete), g.Ref())
	if err != nil {
		return err
	}
	if !d.Allowed {
		return w.failTeardown(ctx, td, ActAgentDelete, occ.ReasonAuthorizationDenied)
	}
	if err := rd.DeleteAgent(ctx, ref); err != nil {
		if code := compute.PermanentCode(err); code != "" {
			return w.failTeardown(ctx, td, ActAgentDelete, code)
		}
		if job.Attempt >= job.MaxAttempts {
			return w.failTeardown(ctx, td, ActAgentDelete, occ.ReasonExhausted)
		}
		return err
	}
	ctx, cancel := recordContext(ctx) // the driver is done: record it even past the job's timeout
	defer cancel()
	return w.st.InTx(ctx, func(tx *store.Tx) error {
		removed, err := tx.DeleteAgentRecords(ctx, ref.NamespaceID, ref.AgentID, g.ServicePrincipalID)
		if err != nil {
			return err
		}
		if err := tx.DeleteTeardown(ctx, ref.AgentID); err != nil {
			return err
		}
		return audit.Append(ctx, tx, occ.AuditEvent{Kind: occ.AuditReconcile, Action: ActAgentDelete, Outcome: occ.OutcomeSuccess,
			ActorID: td.ActorID, Resource: g.Ref(), ReasonCode: occ.ReasonAgentDeleted,
			Details: map[string]any{"attemptCount": job.Attempt, "servicePrincipalId": g.ServicePrincipalID, "removedPolicyIds": removed}})
	})
}

// settleAgent audits the end of a stop and ends the job.
func (w *agentWorker) settleAgent(ctx context.Context, job *river.Job[jobs.AgentArgs], res occ.ResourceRef, action string, outcome occ.AuditOutcome, code string) error {
	ctx, cancel := recordContext(ctx)
	defer cancel()
	if err := audit.Append(ctx, w.st, occ.AuditEvent{Kind: occ.AuditReconcile, Action: action, Outcome: outcome, ActorID: job.Args.ActorID,
		Resource: res, ReasonCode: code, Details: map[string]any{"attemptCount": job.Attempt}}); err != nil {
		return err
	}
	if outcome != occ.OutcomeSuccess {
		return river.JobCancel(errors.New(code))
	}
	return nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// resume runs again the active revision of an Agent desired running, after
// an occ restart: the driver re-adopts a gateway that survived and starts
// one that did not (never a second one). Deployment results are not touched.
func (w *agentWorker) resume(ctx context.Context, job *river.Job[jobs.AgentArgs], rd compute.Driver, ref compute.AgentRef) error {
	row, err := w.st.GetAgent(ctx, ref.NamespaceID, ref.AgentID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	g := store.DecodeAgent(row)
	if g.Status != occ.AgentActive || g.DesiredState != occ.DesiredRunning || g.ActiveRevisionID == "" {
		return nil
	}
	rrow, err := w.st.GetRevision(ctx, ref.NamespaceID, ref.AgentID, g.ActiveRevisionID)
	if err != nil {
		return err
	}
	rev := store.DecodeRevision(rrow)
	if !rev.Complete() {
		return river.JobCancel(errors.New("active revision unreadable"))
	}
	revRef := compute.RevisionRef{AgentRef: ref, RevisionID: rev.ID}
	spec, code, err := w.buildSpec(ctx, g, rev, revRef)
	if err != nil {
		return err
	}
	if code != "" {
		return river.JobCancel(errors.New(code))
	}
	spec.InitialFiles = nil // applied by the first deployment already
	_, err = rd.PrepareRevision(ctx, spec)
	clearEnv(spec.Env)
	clearEnv(spec.HarnessEnv)
	if err != nil {
		if compute.PermanentCode(err) != "" || job.Attempt >= job.MaxAttempts {
			return river.JobCancel(err)
		}
		return err
	}
	return rd.ActivateRevision(ctx, revRef)
}
