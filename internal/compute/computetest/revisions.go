package computetest

import (
	"context"
	"testing"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// revisionObligations: the life of an Agent's revisions. Every call the
// contract says is idempotent is made twice.
var revisionObligations = []obligation{
	{"PrepareBecomesReadyAndIsIdempotent", func(t *testing.T, s *subject) {
		ag := s.agent(t)
		rev := s.spec(ag, 1)
		if r := s.ready(t, rev); r.Held || r.PendingReason != "" || r.RuntimeFailure != nil || len(r.Warnings) != 0 {
			t.Fatalf("a ready revision without plugins = %+v; want nothing but ready", r)
		}
		w1 := s.workload(t, ag)
		r, err := s.d.PrepareRevision(context.Background(), rev)
		if err != nil || !r.Ready {
			t.Fatalf("second PrepareRevision = %+v, %v; want ready", r, err)
		}
		if w2 := s.workload(t, ag); w2 != w1 {
			t.Fatalf("second PrepareRevision replaced the workload: %s, then %s", w1, w2)
		}
		for i := 0; i < 2; i++ {
			activate(t, s.d, rev.RevisionRef)
		}
		if w3 := s.workload(t, ag); w3 != w1 {
			t.Fatalf("ActivateRevision replaced the workload: %s, then %s", w1, w3)
		}
		ep := s.endpointOn(t, s.d, ag)
		if ep.URL == "" || ep.Token == "" || ep.Password != "" || ep.RevisionID != rev.RevisionID || ep.NativeAdminOrigin != "" || ep.ProxyIdentity != "" {
			t.Fatalf("GatewayEndpoint of a token-mode revision = %+v; want a URL, a token and revision %s", ep, rev.RevisionID)
		}
		s.deleteAgent(t, ag)
	}},
	{"SecondRevisionReplacesFirst", func(t *testing.T, s *subject) {
		ctx := context.Background()
		ag := s.agent(t)
		rev1, rev2 := s.spec(ag, 1), s.spec(ag, 2)
		s.ready(t, rev1)
		activate(t, s.d, rev1.RevisionRef)
		w1 := s.workload(t, ag)
		s.ready(t, rev2)
		w2 := s.workload(t, ag)
		if w1 == w2 {
			t.Fatalf("the second revision runs in the first one's workload %s", w1)
		}
		if ep := s.endpointOn(t, s.d, ag); ep.RevisionID != rev2.RevisionID {
			t.Fatalf("endpoint of revision %s; want %s", ep.RevisionID, rev2.RevisionID)
		}
		if err := s.d.ActivateRevision(ctx, rev1.RevisionRef); err == nil {
			t.Fatal("ActivateRevision of the replaced revision succeeded")
		}
		activate(t, s.d, rev2.RevisionRef)
		for i := 0; i < 2; i++ {
			if err := s.d.RetireRevision(ctx, rev1.RevisionRef); err != nil {
				t.Fatalf("RetireRevision of the superseded revision #%d: %v", i+1, err)
			}
		}
		if w := s.workload(t, ag); w != w2 {
			t.Fatalf("retiring the superseded revision touched the new workload: %s, then %s", w2, w)
		}
		s.endpointOn(t, s.d, ag)
		if r, err := s.d.PrepareRevision(ctx, rev2); err != nil || !r.Ready {
			t.Fatalf("PrepareRevision of the serving revision = %+v, %v; want ready", r, err)
		}
		if err := s.d.RetireRevision(ctx, compute.RevisionRef{AgentRef: ag, RevisionID: occ.NewID(occ.PrefixRevision)}); err != nil {
			t.Fatalf("RetireRevision of an unknown revision: %v", err)
		}
		if w := s.workload(t, ag); w != w2 {
			t.Fatalf("retiring an unknown revision touched the workload: %s, then %s", w2, w)
		}
		// Retiring the revision that runs stops it.
		if err := s.d.RetireRevision(ctx, rev2.RevisionRef); err != nil {
			t.Fatal(err)
		}
		s.noWorkload(t, ag, "its revision was retired")
		noEndpointOn(t, s.d, ag, "its revision was retired")
		s.deleteAgent(t, ag)
	}},
	{"StopIsIdempotentKeepsTheAgentAndPrepareStartsAgain", func(t *testing.T, s *subject) {
		ag, rev := s.serving(t)
		for i := 0; i < 2; i++ {
			stop(t, s.d, ag)
		}
		s.noWorkload(t, ag, "StopAgent")
		noEndpointOn(t, s.d, ag, "StopAgent")
		if !s.obs.AgentExists(t, ag) {
			t.Fatal("StopAgent removed the Agent's data")
		}
		if err := s.d.ActivateRevision(context.Background(), rev.RevisionRef); err == nil {
			t.Fatal("ActivateRevision of a stopped revision succeeded")
		}
		s.ready(t, rev)
		s.workload(t, ag)
		s.endpointOn(t, s.d, ag)
		s.deleteAgent(t, ag)
	}},
	{"DeleteRemovesEverything", func(t *testing.T, s *subject) {
		ag, rev := s.serving(t)
		s.deleteAgent(t, ag)
		stop(t, s.d, ag)
		if s.obs.AgentExists(t, ag) {
			t.Fatal("StopAgent of a deleted Agent made it exist again")
		}
		if err := s.d.RetireRevision(context.Background(), rev.RevisionRef); err != nil {
			t.Fatalf("RetireRevision of a deleted Agent: %v", err)
		}
		if s.obs.AgentExists(t, ag) {
			t.Fatal("RetireRevision of a deleted Agent made it exist again")
		}
	}},
	{"EndpointOnlyWhileRunning", func(t *testing.T, s *subject) {
		ctx := context.Background()
		ag := s.agent(t)
		noEndpointOn(t, s.d, ag, "nothing was prepared")
		if err := s.d.StopAgent(ctx, ag); err != nil {
			t.Fatalf("StopAgent of an Agent never prepared: %v", err)
		}
		if err := s.d.DeleteAgent(ctx, ag); err != nil {
			t.Fatalf("DeleteAgent of an Agent never prepared: %v", err)
		}
		if err := s.d.ActivateRevision(ctx, s.spec(ag, 1).RevisionRef); err == nil {
			t.Fatal("ActivateRevision of a revision never prepared succeeded")
		}
		s.gone(t, ag, "calls on an Agent never prepared")
	}},
}
