package computetest

import (
	"context"
	"testing"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// readinessObligations: what PrepareRevision reports while a gateway
// starts, when its model credential is rejected, and in every declared
// execution mode.
var readinessObligations = []obligation{
	{"EveryDeclaredExecutionModeBecomesReady", func(t *testing.T, s *subject) {
		for _, mode := range s.caps.ExecutionModes {
			ag := s.agent(t)
			s.ready(t, s.specIn(ag, 1, mode))
			s.workload(t, ag)
			s.deleteAgent(t, ag)
		}
	}},
	{"StartingThenReady", func(t *testing.T, s *subject) {
		ag := s.agent(t)
		spec := s.o.SlowStart(s.spec(ag, 1))
		r, err := s.d.PrepareRevision(context.Background(), spec)
		if err != nil || r.Ready || r.Held || r.PendingReason != occ.PendingGatewayStarting || r.RuntimeFailure != nil {
			t.Fatalf("first PrepareRevision of a slow start = %+v, %v; want pending %s without a failure", r, err, occ.PendingGatewayStarting)
		}
		w := s.workload(t, ag)
		s.ready(t, spec)
		if got := s.workload(t, ag); got != w {
			t.Fatalf("the workload was replaced while starting: %s, then %s", w, got)
		}
	}},
	{"RejectedCredentialIsHeld", func(t *testing.T, s *subject) {
		ag := s.agent(t)
		spec := s.o.RejectCredential(s.spec(ag, 1))
		r, err := s.await(s.d, spec, "held", func(r compute.Readiness) bool { return r.Held })
		if err != nil {
			t.Fatal(err)
		}
		heldAuthentication(t, r)
		// Held stays held: nothing but a new revision changes it.
		r, err = s.d.PrepareRevision(context.Background(), spec)
		if err != nil || !r.Held {
			t.Fatalf("PrepareRevision of a held revision again = %+v, %v; want held", r, err)
		}
		heldAuthentication(t, r)
		s.deleteAgent(t, ag)
	}},
}

// heldAuthentication fails unless r is the held failure of a rejected
// model credential.
func heldAuthentication(t *testing.T, r compute.Readiness) {
	t.Helper()
	rf := r.RuntimeFailure
	if r.Ready || !r.Held || rf == nil || rf.Component != compute.HeldComponent || rf.Check != compute.HeldCheckModelCredential ||
		rf.Code != compute.HeldAuthenticationFailed || rf.CheckedAt.IsZero() || rf.Cause != nil {
		t.Fatalf("readiness = %+v, failure %+v; want held %s/%s %s with a time and no cause", r, rf,
			compute.HeldComponent, compute.HeldCheckModelCredential, compute.HeldAuthenticationFailed)
	}
}
