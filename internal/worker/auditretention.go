package worker

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/openclaw/occ/internal/audit"
	"github.com/openclaw/occ/internal/jobs"
)

// AuditRetentionEvery is how often the retention job runs (and once when
// a worker becomes River's leader). One pass works until nothing expired
// is left or worker.jobTimeout ends it; the next pass goes on from there.
const AuditRetentionEvery = 15 * time.Minute

// auditRetentionWorker runs one retention pass.
type auditRetentionWorker struct {
	river.WorkerDefaults[jobs.AuditRetentionArgs]
	r *audit.Retention
}

// Work exports and deletes expired audit events; a failure is retried
// with backoff and again at the next period, and deletes nothing unexported.
func (w *auditRetentionWorker) Work(ctx context.Context, _ *river.Job[jobs.AuditRetentionArgs]) error {
	_, err := w.r.Sweep(ctx)
	return err
}

// auditRetentionJob is the periodic job: River's leader alone inserts it
// (so replicas on one PostgreSQL never run two), at most one per period.
func auditRetentionJob() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(AuditRetentionEvery),
		func() (river.JobArgs, *river.InsertOpts) {
			return jobs.AuditRetentionArgs{}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByPeriod: AuditRetentionEvery}}
		}, &river.PeriodicJobOpts{ID: jobs.AuditRetentionArgs{}.Kind(), RunOnStart: true})
}
