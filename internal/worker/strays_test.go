package worker_test

import (
	"slices"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/worker"
)

// A workload that appears for an Agent after its stop (an engine that
// finished a create whose caller had given up) is removed by the next
// sweep, with its audit event; the workload of an Agent desired running,
// and one of an Agent this installation does not know (another
// installation's on the same engine, say), are left alone.
func TestStrayWorkloadOfAStoppedAgentIsRemoved(t *testing.T) {
	t.Parallel()
	e := newEnv(t, computetest.FakeCapabilities(), withOptions(func(o *worker.Options) { o.StraySweepEvery = time.Second }))
	stopped, running := e.agent(agentSpec{harness: apiKey("sk")}), e.agent(agentSpec{harness: apiKey("sk")})
	rev := e.deploy(e.admin, stopped)
	e.settled(stopped, rev)
	e.settled(running, e.deploy(e.admin, running))
	e.stopped(stopped)
	stranger := compute.RevisionRef{AgentRef: compute.AgentRef{NamespaceID: e.ns, AgentID: occ.NewID(occ.PrefixAgent)}, RevisionID: occ.NewID(occ.PrefixRevision)}
	e.fake.Stray(stranger)
	e.fake.Stray(compute.RevisionRef{AgentRef: compute.AgentRef{NamespaceID: e.ns, AgentID: stopped.ID}, RevisionID: rev.ID})
	e.eventually("the stray workload is removed, and its removal audited", func() bool {
		_, runs := e.fake.Running(stopped.ID)
		return !runs && len(e.auditReasons(worker.ActAgentCollect)) > 0
	})
	if got := e.auditReasons(worker.ActAgentCollect); !slices.Equal(got, []string{occ.ReasonStrayWorkload}) {
		t.Fatalf("%s audit reasons = %v; want one %s", worker.ActAgentCollect, got, occ.ReasonStrayWorkload)
	}
	time.Sleep(2500 * time.Millisecond) // two more sweeps
	for _, id := range []string{running.ID, stranger.AgentID} {
		if _, runs := e.fake.Running(id); !runs {
			t.Fatalf("the sweep stopped the workload of %s, which it must leave alone", id)
		}
	}
	if got := e.auditReasons(worker.ActAgentCollect); len(got) != 1 {
		t.Fatalf("%s audit reasons = %v after more sweeps; want still one", worker.ActAgentCollect, got)
	}
}
