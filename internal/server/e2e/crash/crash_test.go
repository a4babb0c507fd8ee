package crash_test

import (
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestCrashRestart kills occ with SIGKILL while Namespaces are being created
// and deleted, starts it again on the same data directory, and checks after
// every round that each Namespace settled (ready, or gone when its deletion
// was admitted), that the compute directories match, that the audit log has
// every admitted create, and that River holds no unfinished work.
//
// On PostgreSQL several processes may share the database, so a job left
// running by the killed process waits for River's rescuer (worker.rescueAfter,
// set short here, checked every 30 s) and its claim for worker.jobTimeout;
// that lane runs fewer rounds with a longer settle.
func TestCrashRestart(t *testing.T) {
	// Not parallel: it runs alone in this package (see TestMain).
	bin := servertest.BuildOCC(t)
	t.Run("sqlite", func(t *testing.T) { crashLoop(t, bin, "", 5) })
	t.Run("postgres", func(t *testing.T) { crashLoop(t, bin, storetest.URL(t, "postgres"), 2) })
}

// crashLoop runs rounds of burst, SIGKILL, restart and checks on one data
// directory; dbURL "" means the embedded SQLite file.
func crashLoop(t *testing.T, bin, dbURL string, rounds int) {
	w := &servertest.CrashWorld{T: t, Bin: bin, DbURL: dbURL, DataDir: gatewaytest.ReachableDir(t), LogDir: t.TempDir(),
		Created: map[string]bool{}, Deleted: map[string]bool{}, DeleteSent: map[string]bool{}}
	p := w.Start()
	for round := range rounds {
		start := time.Now()
		ops := w.Burst(p, round)
		p = w.Start()
		w.Settle(p)
		w.Check(p)
		t.Logf("round %d: %s; %s; %d created, %d deletions admitted so far; %v", round, ops, rescued(p.Logs),
			len(w.Created), len(w.Deleted), time.Since(start).Round(time.Millisecond))
	}
	p.Stop()
}

// rescued reports what the start logged about work left running by the
// killed process (SQLite only; on PostgreSQL River's rescuer does it later).
func rescued(logs string) string {
	for line := range strings.Lines(servertest.ReadTail(logs)) {
		if strings.Contains(line, "left running by a previous process") {
			if _, n, ok := strings.Cut(line, "jobs="); ok {
				return "restart made " + strings.TrimSpace(n) + " running job(s) available again"
			}
		}
	}
	return "no job was running at the kill"
}
