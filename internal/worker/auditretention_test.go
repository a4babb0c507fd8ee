package worker_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/audit"
	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// TestAuditRetentionRunsAsPeriodicJob: a worker configured with a
// retention runs it when it starts leading: an event older than the
// retention is exported to the directory and deleted, a recent one kept.
func TestAuditRetentionRunsAsPeriodicJob(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit-export")
	old := occ.AuditEvent{ID: occ.NewID(occ.PrefixAudit), OccurredAt: time.Now().Add(-500 * 24 * time.Hour), Kind: occ.AuditMutation,
		Action: "namespaces.create", Outcome: occ.OutcomeSuccess, ActorID: "usr_x", Resource: occ.ResourceRef{Kind: occ.KindNamespace, ID: "ns_x"},
		Details: map[string]any{}}
	e := newEnv(t, computetest.FakeCapabilities(), func(e *env) {
		if err := e.st.InsertAuditEvent(e.ctx, old); err != nil {
			t.Fatal(err)
		}
		e.opts.AuditRetention = &audit.Retention{Store: e.st, Keep: 400 * 24 * time.Hour, Dir: dir}
	})
	e.eventually("the expired event exported and deleted", func() bool {
		evs, err := e.st.AuditEventsInOrder(e.ctx, store.AuditRange{Limit: 1})
		files, _ := filepath.Glob(filepath.Join(dir, "audit-*.jsonl.gz"))
		return err == nil && len(evs) == 1 && evs[0].ID != old.ID && len(files) == 1
	})
}
