// Package jobs defines the durable work occ queues on River and how it is
// inserted: always inside the transaction of the state change that needs it.
package jobs

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/openclaw/occ/internal/store"
)

// Namespace targets.
const (
	TargetReady   = "ready"
	TargetDeleted = "deleted"
)

// NamespaceArgs asks the worker to converge a Namespace to a target.
type NamespaceArgs struct {
	NamespaceID string `json:"namespaceId"`
	Target      string `json:"target"`
	ActorID     string `json:"actorId"` // who asked; re-authorized before effects
}

// Kind names the job for River.
func (NamespaceArgs) Kind() string { return "namespace_reconcile" }

// Driver returns the River driver for the store's database.
func Driver(st *store.Store) riverdriver.Driver[*sql.Tx] {
	if st.Dialect() == store.SQLite {
		return riversqlite.New(st.DB())
	}
	return riverdatabasesql.New(st.DB())
}

// Migrate applies River's own migrations.
func Migrate(st *store.Store) func(context.Context) error {
	return func(ctx context.Context) error {
		m, err := rivermigrate.New(Driver(st), nil)
		if err != nil {
			return fmt.Errorf("river migrator: %w", err)
		}
		if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			return fmt.Errorf("apply river migrations: %w", err)
		}
		return nil
	}
}

// Enqueuer inserts work inside a store transaction.
type Enqueuer struct {
	client *river.Client[*sql.Tx]
}

// NewEnqueuer wraps a River client (insert-only or working).
func NewEnqueuer(c *river.Client[*sql.Tx]) *Enqueuer { return &Enqueuer{client: c} }

// Enqueue inserts one job in tx; it runs only if tx commits.
func (e *Enqueuer) Enqueue(ctx context.Context, tx *store.Tx, args river.JobArgs) error {
	if _, err := e.client.InsertTx(ctx, tx.SQL(), args, nil); err != nil {
		return fmt.Errorf("enqueue %s: %w", args.Kind(), err)
	}
	return nil
}

// RevisionArgs asks the worker to converge one admitted revision.
type RevisionArgs struct {
	NamespaceID string `json:"namespaceId"`
	AgentID     string `json:"agentId"`
	RevisionID  string `json:"revisionId"`
	ActorID     string `json:"actorId"`
}

// Kind names the job for River.
func (RevisionArgs) Kind() string { return "revision_reconcile" }

// AgentArgs asks the worker to converge an Agent toward stopped or deleted.
type AgentArgs struct {
	NamespaceID string `json:"namespaceId"`
	AgentID     string `json:"agentId"`
	Target      string `json:"target"` // stopped | deleted
	ActorID     string `json:"actorId"`
}

// Kind names the job for River.
func (AgentArgs) Kind() string { return "agent_reconcile" }

// Agent targets.
const (
	TargetStopped = "stopped"
	TargetRunning = "running" // resume the active revision after a restart
)

// AuditRetentionArgs asks the worker to export and delete expired audit
// events (a periodic job the leader inserts).
type AuditRetentionArgs struct{}

// Kind names the job for River.
func (AuditRetentionArgs) Kind() string { return "audit_retention" }

// StraySweepArgs asks the worker to remove the workloads of Agents desired
// stopped (a periodic job the leader inserts).
type StraySweepArgs struct{}

// Kind names the job for River.
func (StraySweepArgs) Kind() string { return "stray_sweep" }
