package worker_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/worker"
)

// preparesTimed is a driver that notes when each PrepareRevision began.
type preparesTimed struct {
	compute.Driver
	mu sync.Mutex
	at []time.Time
}

func (p *preparesTimed) PrepareRevision(ctx context.Context, spec compute.RevisionSpec) (compute.Readiness, error) {
	p.mu.Lock()
	p.at = append(p.at, time.Now())
	p.mu.Unlock()
	return p.Driver.PrepareRevision(ctx, spec)
}

func (p *preparesTimed) calls() []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.at...)
}

// TestOnlyTheFirstPassAsksAgainAtOnce: a revision's first pass asks a
// starting gateway again within its first second (a fast gateway is
// published at once); every later pass asks once, the deferral between
// passes being the wait (each call reads every object of the Agent from
// its driver).
func TestOnlyTheFirstPassAsksAgainAtOnce(t *testing.T) {
	t.Parallel()
	var timed *preparesTimed
	e := newEnv(t, computetest.FakeCapabilities(), withDriver(func(f *computetest.Fake) compute.Driver {
		timed = &preparesTimed{Driver: f}
		return timed
	}))
	g := e.agent(agentSpec{harness: apiKey("sk")})
	e.fake.NotReady(g.ID, -1, occ.PendingGatewayStarting, nil)
	rev := e.deploy(e.admin, g)
	e.eventually("the first pass's attempt is recorded", func() bool {
		st := e.status(g, rev)
		return st.Progress != nil && st.Progress.LastAttempt != nil
	})
	first := len(timed.calls())
	if first < 2 {
		t.Fatalf("the first pass asked %d times; want more than once while the gateway starts", first)
	}
	e.eventually("four more passes", func() bool { return len(timed.calls()) >= first+4 })
	at := timed.calls()
	for i := first + 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < 500*time.Millisecond {
			t.Fatalf("calls %d and %d of later passes were %v apart; want one call a pass, passes deferred ≥ 1 s", i-1, i, gap)
		}
	}
	e.fake.NotReady(g.ID, 0, "", nil)
	if st := e.settled(g, rev); st.Status != occ.DeploymentSucceeded {
		t.Fatalf("deployment = %+v; want succeeded once ready", st)
	}
}

// watching is a driver that watches workloads: the test reports their
// changes.
type watching struct {
	*preparesTimed
	mu      sync.Mutex
	changed func(compute.AgentRef)
}

func (w *watching) WatchWorkloads(changed func(compute.AgentRef)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.changed = changed
	return nil
}

func (w *watching) report(a compute.AgentRef) {
	w.mu.Lock()
	changed := w.changed
	w.mu.Unlock()
	changed(a)
}

// TestAWorkloadChangeRunsTheDeferredRevision: with a driver that watches
// workloads, a revision whose gateway starts is asked once a pass and
// deferred longer (15 s once it is old), and a change of its workload runs
// it again at once.
func TestAWorkloadChangeRunsTheDeferredRevision(t *testing.T) {
	t.Parallel()
	var w *watching
	var skew atomic.Int64 // the worker's clock runs this far ahead
	e := newEnv(t, computetest.FakeCapabilities(), withDriver(func(f *computetest.Fake) compute.Driver {
		w = &watching{preparesTimed: &preparesTimed{Driver: f}}
		return w
	}), withOptions(func(o *worker.Options) {
		o.ConvergenceTimeout = time.Hour
		o.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	}))
	if w.changed == nil {
		t.Fatal("the worker did not watch the driver's workloads")
	}
	g := e.agent(agentSpec{harness: apiKey("sk")})
	e.fake.NotReady(g.ID, -1, occ.PendingGatewayStarting, nil)
	// Ten minutes old to the worker, the revision is deferred 15 s.
	skew.Store(int64(10 * time.Minute))
	rev := e.deploy(e.admin, g)
	e.eventually("a pass defers the revision by 15 s", func() bool {
		st := e.status(g, rev)
		return st.Progress != nil && st.Progress.NextAttemptAt != nil &&
			st.Progress.NextAttemptAt.Sub(time.Now().Add(time.Duration(skew.Load()))) >= 10*time.Second
	})
	// The change will wake it: its first pass did not ask again.
	if n := len(w.calls()); n != 1 {
		t.Errorf("the first pass asked %d times; want once with a driver that watches its workloads", n)
	}
	before := len(w.calls())
	w.report(compute.AgentRef{NamespaceID: e.ns, AgentID: g.ID})
	deadline := time.Now().Add(10 * time.Second)
	for len(w.calls()) == before {
		if time.Now().After(deadline) {
			t.Fatal("no pass within 10 s of the workload's change; the deferral was 15 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.fake.NotReady(g.ID, 0, "", nil)
	w.report(compute.AgentRef{NamespaceID: e.ns, AgentID: g.ID})
	if st := e.settled(g, rev); st.Status != occ.DeploymentSucceeded {
		t.Fatalf("deployment = %+v; want succeeded once ready", st)
	}
}
