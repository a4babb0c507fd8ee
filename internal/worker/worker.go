// Package worker runs occ's durable work on River: it re-authorizes the actor
// recorded with each piece of work and converges the Compute Driver toward
// the persisted desired state, recording every outcome in the audit log.
package worker

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/openclaw/occ/internal/audit"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/credgateway"
	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/jobs"
	"github.com/openclaw/occ/internal/store"
)

// Options tune the worker.
type Options struct {
	MaxAttempts        int
	PollInterval       time.Duration
	ConvergenceTimeout time.Duration
	Concurrency        int
	JobTimeout         time.Duration // one pass, and a dead worker's claim lifetime; default config's worker.jobTimeout
	RescueAfter        time.Duration // a running job older than this is rescued; default JobTimeout + 1 min
	// StraySweepEvery is how often a driver that lists its workloads
	// (compute.WorkloadLister) is swept for those of Agents desired
	// stopped; default config's worker.straySweepInterval, at least 1 s
	// (River's shortest unique period).
	StraySweepEvery time.Duration
	// Secrets reads a bound Secret's value for a revision about to start;
	// nil: no Secret can be delivered (SECRET_BINDING_UNAVAILABLE).
	Secrets SecretResolver
	// NativeAdminOrigin is the browser origin of an Agent's native admin
	// UI, "" when the installation has it off; nil: always off.
	NativeAdminOrigin func(namespaceID, agentID string) string
	// CredentialGateway delivers a credential_source harness's credential
	// (credgateway.Deliverer); nil: the installation has none, and such a
	// revision fails (CREDENTIAL_SOURCE_UNAVAILABLE).
	CredentialGateway credgateway.Deliverer
	// Backends maps every installation-configured Backend ID to its type:
	// a revision naming another one fails (BACKEND_UNAVAILABLE).
	Backends map[string]string
	// BackendWorkspaces maps a chatgpt Backend ID to the ChatGPT workspace
	// its service accounts belong to, when the installation names one:
	// the harness of a chatgpt_service_account revision is held to it.
	BackendWorkspaces map[string]string
	// PluginCatalog holds every plugin ID the installation's plugin
	// catalogs list: the only plugins a revision may start with.
	PluginCatalog map[string]bool
	// WorkspaceDefaultsID is the identity of the runtime's default
	// workspace files: staged initial files prepared for other defaults
	// fail the startup (WORKSPACE_SETUP_FAILED).
	WorkspaceDefaultsID string
	// AuditRetention, when set with a Keep above 0, runs as a periodic
	// job (every AuditRetentionEvery, and when a worker starts leading)
	// inserted by River's leader only.
	AuditRetention *audit.Retention
	Logger         *slog.Logger
	// Now is the worker's clock (deadlines, deferrals); nil: time.Now.
	Now func() time.Time
}

// SecretResolver reads the value of a Namespace's Secret, and a service
// account's issued credential; the caller clears it after use.
type SecretResolver interface {
	ResolveSecret(ctx context.Context, namespaceID, secretID string) ([]byte, error)
	// ServiceAccountCredential reads the credential a Backend issued for
	// a service account (store.ErrNotFound: none).
	ServiceAccountCredential(ctx context.Context, namespaceID, serviceAccountID string) ([]byte, error)
}

// deps is what every job worker needs.
type deps struct {
	st     *store.Store
	authz  *iam.Authorizer
	driver compute.Driver
	opts   Options
	log    *slog.Logger
	now    func() time.Time
	// wakes, when the driver watches workloads, runs deferred revisions
	// again when their workload changes.
	wakes *wakes
}

// NewClient returns a River client. With a driver it works jobs; without
// one (the API-only role) it only inserts them.
func NewClient(st *store.Store, driver compute.Driver, opts Options) (*river.Client[*sql.Tx], error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	def := config.Defaults().Worker
	if opts.JobTimeout <= 0 {
		opts.JobTimeout = def.JobTimeout.D()
	}
	if opts.RescueAfter <= opts.JobTimeout {
		opts.RescueAfter = opts.JobTimeout + config.DefaultRescueMargin
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = def.PollInterval.D()
	}
	if opts.StraySweepEvery <= 0 {
		opts.StraySweepEvery = def.StraySweepInterval.D()
	}
	opts.StraySweepEvery = max(opts.StraySweepEvery, time.Second)
	riverLog := opts.Logger.With("component", "river")
	cfg := &river.Config{
		MaxAttempts: opts.MaxAttempts,
		Logger:      slog.New(levelFloor{riverLog.Handler(), slog.LevelWarn}),
		PollOnly:    st.Dialect() == store.SQLite,
	}
	var d *deps
	if driver != nil {
		d = &deps{st: st, authz: iam.NewAuthorizer(st), driver: driver, opts: opts, log: opts.Logger, now: opts.Now}
		if d.now == nil {
			d.now = time.Now
		}
		if _, ok := driver.(compute.WorkloadWatcher); ok {
			d.wakes = newWakes(d.now)
		}
		workers := river.NewWorkers()
		river.AddWorker(workers, &namespaceWorker{deps: d})
		river.AddWorker(workers, &revisionWorker{deps: d})
		river.AddWorker(workers, &agentWorker{deps: d})
		if r := opts.AuditRetention; r != nil {
			// Registered even when keeping everything, so a job queued
			// under an earlier setting finishes (doing nothing).
			river.AddWorker(workers, &auditRetentionWorker{r: r})
			if r.Keep > 0 {
				cfg.PeriodicJobs = append(cfg.PeriodicJobs, auditRetentionJob())
			}
		}
		// Registered whatever the driver, so a sweep queued under another
		// one finishes (doing nothing).
		l, _ := driver.(compute.WorkloadLister)
		river.AddWorker(workers, &straySweepWorker{deps: d, lister: l})
		if l != nil {
			cfg.PeriodicJobs = append(cfg.PeriodicJobs, straySweepJob(opts.StraySweepEvery))
		}
		cfg.Workers = workers
		cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: max(1, opts.Concurrency)}}
		cfg.FetchPollInterval = opts.PollInterval
		cfg.FetchCooldown = min(opts.PollInterval, 50*time.Millisecond)
		cfg.JobTimeout = opts.JobTimeout
		cfg.RescueStuckJobsAfter = opts.RescueAfter
		cfg.RetryPolicy = backoff{}
	}
	c, err := river.NewClient(jobs.Driver(st), cfg)
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	if d != nil && d.wakes != nil {
		d.wakes.get, d.wakes.retry = c.JobGet, c.JobRetry
		if err := driver.(compute.WorkloadWatcher).WatchWorkloads(d.wakes.changed); err != nil {
			return nil, fmt.Errorf("watch workloads: %w", err)
		}
	}
	return c, nil
}

// RescueOrphans makes jobs left running by a killed process available again.
// It is only safe where one process owns the database (the SQLite file,
// which occ locks); on PostgreSQL River's rescuer does this after RescueAfter.
func RescueOrphans(ctx context.Context, st *store.Store) (int64, error) {
	if st.Dialect() != store.SQLite {
		return 0, nil
	}
	res, err := st.DB().ExecContext(ctx, `UPDATE river_job SET state = 'available' WHERE state = 'running'`)
	if err != nil {
		return 0, fmt.Errorf("rescue orphaned jobs: %w", err)
	}
	if err := st.ClearWorkClaims(ctx); err != nil {
		return 0, fmt.Errorf("clear work claims: %w", err)
	}
	return res.RowsAffected()
}

// backoff is min(300 s, 1 s·2^(attempt-1)) with full jitter.
type backoff struct{}

// Delay returns the backoff before the next try after attempt (1-based).
func Delay(attempt int) time.Duration {
	d := 300 * time.Second
	if attempt < 10 {
		d = min(d, time.Second<<max(attempt-1, 0))
	}
	return time.Duration(rand.Float64() * float64(d))
}

// NextRetry implements river.ClientRetryPolicy.
func (backoff) NextRetry(job *rivertype.JobRow) time.Time { return time.Now().Add(Delay(job.Attempt)) }

// levelFloor drops records below a level (River is chatty at info).
type levelFloor struct {
	slog.Handler
	min slog.Level
}

func (h levelFloor) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}
