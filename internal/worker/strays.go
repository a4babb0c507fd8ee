package worker

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/openclaw/occ/internal/audit"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/jobs"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// straySweepWorker removes what a driver holds for Agents desired stopped.
// An Agent this installation does not know is left alone: its workload
// may belong to another installation on the same engine.
type straySweepWorker struct {
	river.WorkerDefaults[jobs.StraySweepArgs]
	*deps
	lister compute.WorkloadLister
}

// Work looks at every Agent the driver holds a workload for; one that
// cannot be collected now is tried again at the next period.
func (w *straySweepWorker) Work(ctx context.Context, _ *river.Job[jobs.StraySweepArgs]) error {
	if w.lister == nil {
		return nil
	}
	refs, err := w.lister.AgentsWithWorkloads(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, ref := range refs {
		if err := w.collect(ctx, ref); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// collect stops the Agent's workloads if, under its claim, it is still
// desired stopped with no active revision. An Agent another job holds is
// left to that job (a stop pass looks at its workloads itself).
func (w *straySweepWorker) collect(ctx context.Context, ref compute.AgentRef) error {
	if stray, err := w.stray(ctx, ref); err != nil || !stray {
		return err
	}
	release, ok, err := w.tryClaim(ctx, ref.AgentID)
	if err != nil || !ok {
		return err
	}
	defer release()
	if stray, err := w.stray(ctx, ref); err != nil || !stray {
		return err
	}
	if err := w.driver.StopAgent(ctx, ref); err != nil {
		return err
	}
	w.log.Warn("removed the workload of an Agent desired stopped", "namespace", ref.NamespaceID, "agent", ref.AgentID)
	ctx, cancel := recordContext(ctx)
	defer cancel()
	return audit.Append(ctx, w.st, occ.AuditEvent{Kind: occ.AuditReconcile, Action: ActAgentCollect, Outcome: occ.OutcomeSuccess,
		ActorID: "system", Resource: occ.ResourceRef{Kind: occ.KindAgent, ID: ref.AgentID, NamespaceID: ref.NamespaceID},
		ReasonCode: occ.ReasonStrayWorkload, Details: map[string]any{}})
}

// stray reports whether the Agent is one of this installation's, active,
// desired stopped and without an active revision.
func (w *straySweepWorker) stray(ctx context.Context, ref compute.AgentRef) (bool, error) {
	row, err := w.st.GetAgent(ctx, ref.NamespaceID, ref.AgentID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return row.Status == occ.AgentActive && row.DesiredState == occ.DesiredStopped && row.ActiveRevisionID == "", nil
}

// straySweepJob is the periodic job: River's leader alone inserts it, at
// most one per period, and once when it starts leading.
func straySweepJob(every time.Duration) *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(every),
		func() (river.JobArgs, *river.InsertOpts) {
			return jobs.StraySweepArgs{}, &river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByPeriod: every}}
		}, &river.PeriodicJobOpts{ID: jobs.StraySweepArgs{}.Kind(), RunOnStart: true})
}
