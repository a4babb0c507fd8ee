package worker_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/worker"
)

// lockedBuffer is a log destination the worker's goroutines share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A stop whose driver call fails is retried, and the failure is in occ's
// log (River itself reports it below the level occ lets through).
func TestFailedStopIsLoggedAndRetried(t *testing.T) {
	t.Parallel()
	var faulty *computetest.Faulty
	logs := &lockedBuffer{}
	e := newEnv(t, computetest.FakeCapabilities(), withFaulty(&faulty),
		withOptions(func(o *worker.Options) { o.Logger = slog.New(slog.NewTextHandler(logs, nil)) }))
	g := e.agent(agentSpec{harness: apiKey("sk")})
	e.settled(g, e.deploy(e.admin, g))
	faulty.FailTimes(g.ID, 1)
	if _, err := e.app.Stop(e.ctx, e.admin, e.ns, g.ID); err != nil {
		t.Fatal(err)
	}
	e.eventually("the Agent stops after a retry", func() bool {
		got, err := e.app.GetAgent(e.ctx, e.admin, e.ns, g.ID)
		return err == nil && got.ActiveRevisionID == ""
	})
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "job failed; it will be retried") {
			line = l
		}
	}
	for _, want := range []string{"level=WARN", "kind=agent_reconcile", "attempt=1", g.ID, "error="} {
		if !strings.Contains(line, want) {
			t.Fatalf("the failed stop's log line %q lacks %q; the log:\n%s", line, want, logs.String())
		}
	}
}
