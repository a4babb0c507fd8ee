package worker_test

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store/storetest"
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

// A driver call that outlasts the job's timeout on every attempt still
// ends the deployment failed, and a stop the same way still settles:
// the outcome is recorded past the job's expired context. (Recorded
// with it, the writes failed and River dropped the last attempt's job,
// leaving the deployment running with nothing to finish it.)
func TestOutcomesRecordedPastTheJobTimeout(t *testing.T) {
	t.Parallel()
	var faulty *computetest.Faulty
	// Long enough that a pass's reads fit in it under -race on a loaded
	// machine; each driver call below outlasts it.
	const jobTimeout = 2 * time.Second
	e := newEnv(t, computetest.FakeCapabilities(), withFaulty(&faulty),
		withOptions(func(o *worker.Options) { o.MaxAttempts, o.JobTimeout = 2, jobTimeout }))
	outlast := func() { time.Sleep(jobTimeout + 300*time.Millisecond) }

	g := e.agent(agentSpec{harness: apiKey("sk")})
	faulty.Inject(computetest.Fault{ID: g.ID, Method: computetest.MethodPrepareRevision, Times: computetest.Forever, Then: outlast})
	failedWith(t, e.settled(g, e.deploy(e.admin, g)), occ.DeployDependency)

	h := e.agent(agentSpec{harness: apiKey("sk")})
	e.settled(h, e.deploy(e.admin, h))
	faulty.Inject(computetest.Fault{ID: h.ID, Method: computetest.MethodStopAgent, Times: computetest.Forever, After: true, Then: outlast})
	if _, err := e.app.Stop(e.ctx, e.admin, e.ns, h.ID); err != nil {
		t.Fatal(err)
	}
	e.eventually("the failed stop is settled and audited", func() bool {
		return slices.Contains(e.auditReasons(worker.ActAgentStop), occ.ReasonExhausted)
	})
}

// A deployment whose job's last attempt fails before the pass records
// anything (here its work claim's commit) is failed, not left queued with
// no job behind it (River drops such a job).
func TestLastAttemptFailureSettlesTheDeployment(t *testing.T) {
	t.Parallel()
	e := newEnv(t, computetest.FakeCapabilities(), withOptions(func(o *worker.Options) { o.MaxAttempts = 1 }))
	g := e.agent(agentSpec{harness: apiKey("sk")})
	claim := e.faults.Inject(storetest.CommitFault{Match: "INSERT INTO work_claims"})
	st := e.settled(g, e.deploy(e.admin, g))
	if !e.faults.Fired(claim) {
		t.Fatal("the claim's commit never failed: the test did not reach its case")
	}
	failedWith(t, st, occ.DeployDependency)
}
