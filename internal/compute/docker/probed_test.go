package docker_test

import (
	"context"
	"testing"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/occ"
)

// TestDockerReadoptionSkipsTheModelProbe: a restarted occ (a new driver)
// that finds the probed gateway container still running checks it without
// a second model call; a new revision's container is probed.
func TestDockerReadoptionSkipsTheModelProbe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d1 := open(t)
	rev := newRevision()
	t.Cleanup(func() {
		_ = d1.DeleteAgent(ctx, rev.AgentRef)
		_, _ = d1.DeleteNamespace(ctx, compute.NamespaceRef{ID: rev.NamespaceID})
	})
	spec := computetest.FakeGatewayAcceptCredential(specOf(rev, 1))
	if r := awaitReadiness(t, d1, spec, func(r compute.Readiness) bool { return r.Ready }); !r.Ready {
		t.Fatalf("readiness: %+v", r)
	}
	if r, err := d1.PrepareRevision(ctx, spec); err != nil || !r.Ready {
		t.Fatalf("readiness again: %+v, %v", r, err)
	}
	if n := computetest.FakeGatewayModelProbes(t, d1, rev); n != 1 {
		t.Fatalf("model probes after the first start = %d; want 1", n)
	}

	d2 := open(t) // occ restarted; the container kept running
	if r, err := d2.PrepareRevision(ctx, spec); err != nil || !r.Ready {
		t.Fatalf("readiness after a restart: %+v, %v", r, err)
	}
	if n := computetest.FakeGatewayModelProbes(t, d2, rev); n != 1 {
		t.Fatalf("model probes after a restart = %d; want still 1 (no provider call on an occ restart)", n)
	}

	next := computetest.FakeGatewayAcceptCredential(specOf(compute.RevisionRef{AgentRef: rev.AgentRef, RevisionID: occ.NewID(occ.PrefixRevision)}, 2))
	if r := awaitReadiness(t, d2, next, func(r compute.Readiness) bool { return r.Ready }); !r.Ready {
		t.Fatalf("readiness of a new revision: %+v", r)
	}
	if n := computetest.FakeGatewayModelProbes(t, d2, next.RevisionRef); n != 1 {
		t.Fatalf("model probes of the new revision's container = %d; want 1", n)
	}
}
