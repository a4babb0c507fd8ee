package worker

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/openclaw/occ/internal/audit"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/jobs"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// Audit actions of revision work.
const (
	ActRevisionActivate = "agents.lifecycle.activate"
	ActRevisionSettle   = "agents.lifecycle.deploy"
	ActRevisionAttempt  = "reconcile"
)

type revisionWorker struct {
	river.WorkerDefaults[jobs.RevisionArgs]
	*deps
}

// pass is the context of one attempt at one revision.
type pass struct {
	job *river.Job[jobs.RevisionArgs]
	dep store.DeploymentRow
	rev occ.Revision
	ag  occ.Agent
	rd  compute.Driver
	// started is when the pass began.
	started time.Time
}

// Work converges one admitted revision: re-authorize, prepare, and when
// ready publish it as the Agent's active revision.
func (w *revisionWorker) Work(ctx context.Context, job *river.Job[jobs.RevisionArgs]) (err error) {
	defer func() { err = w.settleDropped(ctx, job, err) }()
	a := job.Args
	started := w.now()
	release, err := w.claim(ctx, a.AgentID)
	if err != nil {
		return err
	}
	defer release()
	if w.wakes != nil {
		agent := compute.AgentRef{NamespaceID: a.NamespaceID, AgentID: a.AgentID}
		w.wakes.begin(agent)
		defer w.wakes.end(agent)
	}
	dep, err := w.st.GetDeployment(ctx, a.NamespaceID, a.AgentID, a.RevisionID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // the Agent and its records are gone
	}
	if err != nil {
		return err
	}
	if occ.DeploymentTerminal(dep.Status) {
		return nil // terminal results are never rewritten
	}
	p := &pass{job: job, dep: dep, rd: w.driver, started: started}
	if code, err := w.load(ctx, p); err != nil || code != "" {
		if err != nil {
			return err
		}
		return w.fail(ctx, p, code, nil)
	}
	if code := w.preconditions(ctx, p); code != "" {
		if code == occ.DeployStopped {
			_ = p.rd.RetireRevision(ctx, p.ref())
		}
		return w.fail(ctx, p, code, nil)
	}
	if w.now().After(occ.FromMillis(dep.AdmittedAt).Add(w.opts.ConvergenceTimeout)) {
		data := map[string]any{"timeoutMs": w.opts.ConvergenceTimeout.Milliseconds()}
		if dep.RuntimeFailure != "" {
			var rf map[string]any
			if json.Unmarshal([]byte(dep.RuntimeFailure), &rf) == nil {
				data["runtimeFailure"] = rf
			}
		}
		return w.fail(ctx, p, occ.DeployConvergenceDeadline, data)
	}
	if code, err := w.reauthorize(ctx, a.ActorID, p.ag, p.rev); err != nil || code != "" {
		if err != nil {
			return err
		}
		return w.fail(ctx, p, code, nil)
	}
	spec, code, err := w.buildSpec(ctx, p.ag, p.rev, p.ref())
	if err != nil {
		return err
	}
	if code != "" {
		return w.fail(ctx, p, code, nil)
	}
	w.markRunning(ctx, p)
	spec.OnProgress = func(reason string) { w.recordPhase(ctx, p, occ.AttemptOfPending(reason)) }
	// A driver that watches its workloads wakes the revision when its
	// gateway changes: no pass needs to ask again.
	ready, err := w.prepare(ctx, p.rd, spec, p.dep.LastAttemptCode == "" && w.wakes == nil)
	clearEnv(spec.Env)
	clearEnv(spec.HarnessEnv)
	if err != nil {
		return w.driverError(ctx, p, err)
	}
	if ready.Held {
		code, data := heldFailure(ready.RuntimeFailure)
		return w.fail(ctx, p, code, data)
	}
	if !ready.Ready {
		return w.pending(ctx, p, occ.AttemptOfPending(ready.PendingReason), ready.RuntimeFailure, attemptData(ready))
	}
	return w.publish(ctx, p, ready.Warnings)
}

// settleDropped fails the deployment when its job's last attempt ended in
// an error that River drops the job on (an error before the pass recorded
// any outcome, such as a read that ran past the job's timeout): a
// deployment is never left queued or running with no job behind it.
func (w *revisionWorker) settleDropped(ctx context.Context, job *river.Job[jobs.RevisionArgs], err error) error {
	if !failed(err) || job.Attempt < job.MaxAttempts {
		return err
	}
	ctx, stop := recordContext(ctx)
	defer stop()
	a := job.Args
	dep, gerr := w.st.GetDeployment(ctx, a.NamespaceID, a.AgentID, a.RevisionID)
	if gerr != nil || occ.DeploymentTerminal(dep.Status) {
		return err
	}
	w.log.Warn("revision reconcile failed on its last attempt", "revision", a.RevisionID, "attempt", job.Attempt, "error", err)
	p := &pass{job: job, dep: dep, rev: occ.Revision{ID: a.RevisionID}}
	if row, aerr := w.st.GetAgent(ctx, a.NamespaceID, a.AgentID); aerr == nil {
		p.ag, p.rd = store.DecodeAgent(row), w.driver // retire the candidate unless it serves
	}
	return w.fail(ctx, p, occ.DeployDependency, nil)
}

func (p *pass) ref() compute.RevisionRef {
	return compute.RevisionRef{AgentRef: compute.AgentRef{NamespaceID: p.job.Args.NamespaceID, AgentID: p.job.Args.AgentID},
		RevisionID: p.job.Args.RevisionID}
}

// quickReady is how long a revision's first pass keeps asking a
// just-started gateway for readiness before it defers: a fast gateway is
// published in this pass instead of after the first deferral.
const quickReady = time.Second

// prepare calls PrepareRevision and, in a revision's first pass (first;
// only for a driver that does not watch its workloads), while the
// revision is starting asks again for up to quickReady (it is
// idempotent): after 50 ms, then twice as long each time. Later passes
// ask once: the deferral between them is the wait, and each call reads
// every object of the Agent from its driver (asking again in every pass
// made a Kubernetes Agent's passes cost six calls each instead of one).
func (w *revisionWorker) prepare(ctx context.Context, rd compute.Driver, spec compute.RevisionSpec, first bool) (compute.Readiness, error) {
	deadline := w.now().Add(quickReady)
	wait := 50 * time.Millisecond
	for {
		r, err := rd.PrepareRevision(ctx, spec)
		if err != nil || r.Ready || r.Held || !first || w.now().After(deadline) {
			return r, err
		}
		select {
		case <-ctx.Done():
			return r, nil
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// attemptData is the progress.lastAttempt.data of a not-ready revision:
// the runtime install's phase and bytes on disk while it installs.
func attemptData(r compute.Readiness) map[string]any {
	if r.PendingReason != occ.PendingRuntimeInstalling || r.Install == nil {
		return nil
	}
	return map[string]any{"phase": r.Install.Phase, "bytes": r.Install.Bytes}
}

// recordPhase shows what the driver does while this pass waits on it (the
// startup model probe): the deployment stays running with code as its
// last attempt. Nothing is audited: a phase is not an attempt's outcome.
func (w *revisionWorker) recordPhase(ctx context.Context, p *pass, code string) {
	if p.dep.LastAttemptCode == code && p.dep.Status == occ.DeploymentRunning {
		return
	}
	now := w.now()
	p.dep.LastAttemptCode, p.dep.LastAttemptData, p.dep.LastAttemptAt, p.dep.UpdatedAt = code, "", occ.Millis(now), occ.Millis(now)
	if err := w.st.UpdateDeployment(ctx, p.dep); err != nil && !errors.Is(err, store.ErrStale) {
		w.log.Warn("record deployment phase", "revision", p.rev.ID, "phase", code, "error", err)
	}
}

// markRunning shows the deployment as running while this pass works.
func (w *revisionWorker) markRunning(ctx context.Context, p *pass) {
	p.dep.Status, p.dep.NextAttemptAt, p.dep.Attempts, p.dep.UpdatedAt = occ.DeploymentRunning, 0, p.job.Attempt, occ.Millis(w.now())
	if err := w.st.UpdateDeployment(ctx, p.dep); err != nil {
		w.log.Warn("mark deployment running", "revision", p.rev.ID, "error", err)
	}
}

// pending records a not-ready attempt and snoozes without spending an
// attempt, for deferral.
func (w *revisionWorker) pending(ctx context.Context, p *pass, code string, rf *compute.RuntimeFailure, data map[string]any) error {
	delay := w.deferral(p, code)
	if err := w.recordAttempt(ctx, p, code, rf, data, delay); err != nil {
		return err
	}
	return river.JobSnooze(delay)
}

// deferral is how long a not-ready revision waits for its next pass: 1 s
// at first, growing with the revision's age to 5 s. A revision that waits
// on a workload its driver watches (wakes, watchedReason) is run again by
// the workload's next change, so its deferral grows faster, with the time
// since that change (or its age), to watchedDeferralCap; when the
// workload changed during this pass, which may not have seen it, there is
// none.
func (w *revisionWorker) deferral(p *pass, code string) time.Duration {
	now := w.now()
	since := now.Sub(occ.FromMillis(p.dep.AdmittedAt))
	if w.wakes == nil || !watchedReason(code) {
		return min(5*time.Second, max(time.Second, since/20))
	}
	changed := w.wakes.deferringJob(p.ref().AgentRef, p.job.ID)
	if changed.After(p.started) {
		return 0
	}
	if !changed.IsZero() {
		since = min(since, now.Sub(changed))
	}
	return min(watchedDeferralCap, max(time.Second, since/4))
}

// recordAttempt writes the attempt's evidence (its code, and data such as
// an install's phase) on the deployment and, when the code changed, a
// reconcile audit event.
func (w *revisionWorker) recordAttempt(ctx context.Context, p *pass, code string, rf *compute.RuntimeFailure, data map[string]any, next time.Duration) error {
	ctx, cancel := recordContext(ctx)
	defer cancel()
	now := w.now()
	changed := p.dep.LastAttemptCode != code
	if changed || p.dep.LastAttemptAt == 0 {
		p.dep.LastAttemptAt = occ.Millis(now)
	}
	p.dep.LastAttemptCode, p.dep.Status, p.dep.NextAttemptAt, p.dep.UpdatedAt = code, occ.DeploymentQueued, occ.Millis(now.Add(next)), occ.Millis(now)
	if rf != nil {
		b, _ := json.Marshal(runtimeFailureData(rf, false))
		p.dep.RuntimeFailure = string(b)
	}
	p.dep.LastAttemptData = ""
	if data != nil {
		b, _ := json.Marshal(data)
		p.dep.LastAttemptData = string(b)
	}
	return w.st.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.UpdateDeployment(ctx, p.dep); err != nil && !errors.Is(err, store.ErrStale) {
			return err
		}
		if !changed {
			return nil
		}
		return audit.Append(ctx, tx, occ.AuditEvent{Kind: occ.AuditReconcile, Action: ActRevisionAttempt, Outcome: occ.OutcomeSuccess,
			ActorID: p.job.Args.ActorID, Resource: p.rev.Ref(), ReasonCode: code, Details: map[string]any{"attemptCount": p.job.Attempt}})
	})
}

// driverError classifies a failed driver call: permanent fails now; the
// driver's dependency unavailable (compute.ErrUnavailable) waits with
// backoff without spending an attempt, until the convergence deadline ends
// it; any other retryable error retries with backoff until the attempts
// run out.
func (w *revisionWorker) driverError(ctx context.Context, p *pass, err error) error {
	if code := compute.PermanentCode(err); code != "" {
		// The API shows only the code; the driver's text (an engine's
		// own message) stays here.
		w.log.Warn("revision reconcile failed permanently", "revision", p.job.Args.RevisionID, "code", code, "error", err)
		return w.fail(ctx, p, code, compute.PermanentData(err))
	}
	if errors.Is(err, compute.ErrUnavailable) {
		if p.dep.LastAttemptCode != occ.AttemptDependency { // once per outage, not every pass
			w.log.Warn("compute dependency unavailable; will retry", "revision", p.job.Args.RevisionID, "error", err)
		}
		return w.pending(ctx, p, occ.AttemptDependency, nil, nil)
	}
	if p.job.Attempt >= p.job.MaxAttempts {
		return w.fail(ctx, p, occ.DeployDependency, nil)
	}
	if rerr := w.recordAttempt(ctx, p, occ.AttemptDependency, nil, nil, Delay(p.job.Attempt)); rerr != nil {
		return rerr
	}
	w.log.Warn("revision reconcile failed; will retry", "revision", p.job.Args.RevisionID, "attempt", p.job.Attempt, "error", err)
	return err
}

// fail settles the deployment as failed with a fixed code (terminal).
func (w *revisionWorker) fail(ctx context.Context, p *pass, code string, data map[string]any) error {
	ctx, cancel := recordContext(ctx)
	defer cancel()
	now := w.now()
	p.dep.Status, p.dep.ErrorCode, p.dep.FinishedAt, p.dep.UpdatedAt, p.dep.NextAttemptAt = occ.DeploymentFailed, code, occ.Millis(now), occ.Millis(now), 0
	if data != nil {
		b, _ := json.Marshal(data)
		p.dep.ErrorData = string(b)
	}
	err := w.st.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.UpdateDeployment(ctx, p.dep); errors.Is(err, store.ErrStale) {
			return nil
		} else if err != nil {
			return err
		}
		return audit.Append(ctx, tx, occ.AuditEvent{Kind: occ.AuditReconcile, Action: ActRevisionSettle, Outcome: occ.OutcomeFailure,
			ActorID: p.job.Args.ActorID, Resource: occ.ResourceRef{Kind: occ.KindAgentRevision, ID: p.job.Args.RevisionID, NamespaceID: p.job.Args.NamespaceID},
			ReasonCode: code, Details: map[string]any{"attemptCount": p.job.Attempt, "final": true}})
	})
	if err != nil {
		return err
	}
	// A failed candidate never serves: stop its gateway unless it is the
	// one serving (the driver never touches a gateway another revision owns).
	if p.rd != nil && p.ag.ActiveRevisionID != p.rev.ID {
		if err := p.rd.RetireRevision(ctx, p.ref()); err != nil {
			w.log.Warn("retire failed candidate", "revision", p.rev.ID, "error", err)
		}
	}
	return river.JobCancel(errors.New(code))
}

// publish makes a ready revision active: compare-and-set the Agent's
// pointer, activate, retire the predecessor, then complete.
func (w *revisionWorker) publish(ctx context.Context, p *pass, warnings []compute.Warning) error {
	prev := p.ag.ActiveRevisionID
	stopped, superseded := false, false
	err := w.st.InTx(ctx, func(tx *store.Tx) error {
		if newer, err := tx.NewerRevisionExists(ctx, p.ag.ID, p.rev.Number); err != nil {
			return err
		} else if newer {
			superseded = true // a newer deployment was admitted meanwhile
			return nil
		}
		row, err := tx.GetAgent(ctx, p.ag.NamespaceID, p.ag.ID)
		if err != nil {
			return err
		}
		cur := store.DecodeAgent(row)
		if cur.Status == occ.AgentDeleting || cur.DesiredState != occ.DesiredRunning {
			stopped = true
			return nil
		}
		if cur.ActiveRevisionID != prev {
			return errActiveMoved
		}
		row.ActiveRevisionID, row.UpdatedAt = p.rev.ID, occ.Millis(w.now())
		return tx.UpdateAgent(ctx, row)
	})
	switch {
	case errors.Is(err, errActiveMoved):
		return w.pending(ctx, p, occ.AttemptActiveMoved, nil, nil)
	case err != nil:
		return err
	case stopped:
		_ = p.rd.RetireRevision(ctx, p.ref())
		return w.fail(ctx, p, occ.DeployStopped, nil)
	case superseded:
		return w.fail(ctx, p, occ.DeploySuperseded, nil)
	}
	if err := p.rd.ActivateRevision(ctx, p.ref()); err != nil {
		return w.driverError(ctx, p, err)
	}
	if prev != "" && prev != p.rev.ID {
		prevRef := p.ref()
		prevRef.RevisionID = prev
		if err := p.rd.RetireRevision(ctx, prevRef); err != nil {
			w.log.Warn("retire predecessor", "revision", prev, "error", err)
		}
	}
	return w.complete(ctx, p, prev, warnings)
}

var errActiveMoved = errors.New("active revision changed")

// complete settles a published revision as succeeded, drops staged files,
// and audits the activation.
func (w *revisionWorker) complete(ctx context.Context, p *pass, prev string, warnings []compute.Warning) error {
	ctx, cancel := recordContext(ctx)
	defer cancel()
	ws := make([]occ.DeploymentWarning, 0, len(warnings))
	admitted := p.rev.Snapshot.Plugins
	for _, x := range warnings {
		if _, ok := admitted[x.PluginID]; ok && occ.DeploymentWarningCode(x.Code) {
			ws = append(ws, occ.DeploymentWarning{Code: x.Code, PluginID: x.PluginID})
		}
	}
	b, _ := json.Marshal(ws)
	now := w.now()
	p.dep.Status, p.dep.Warnings, p.dep.FinishedAt, p.dep.UpdatedAt, p.dep.NextAttemptAt = occ.DeploymentSucceeded, string(b), occ.Millis(now), occ.Millis(now), 0
	return w.st.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.UpdateDeployment(ctx, p.dep); errors.Is(err, store.ErrStale) {
			return nil
		} else if err != nil {
			return err
		}
		if err := tx.DropStagedWorkspaceFiles(ctx, p.ag.ID); err != nil {
			return err
		}
		return audit.Append(ctx, tx, occ.AuditEvent{Kind: occ.AuditReconcile, Action: ActRevisionActivate, Outcome: occ.OutcomeSuccess,
			ActorID: p.job.Args.ActorID, Resource: p.rev.Ref(), ReasonCode: occ.ReasonRevisionActivated,
			Details: map[string]any{"agentId": p.ag.ID, "previousRevisionId": prev, "attemptCount": p.job.Attempt, "warningCount": len(ws)}})
	})
}
