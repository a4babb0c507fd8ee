package worker_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/occ"
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
