package computetest

import (
	"context"
	"testing"

	"github.com/openclaw/occ/internal/compute"
)

// badID is an ID no driver may accept (it would escape a directory).
const badID = "../../etc"

// referenceObligations: a malformed ID or initial file name is a
// permanent error with a fixed code, and leaves nothing behind.
var referenceObligations = []obligation{
	{"InvalidAreRefusedPermanently", func(t *testing.T, s *subject) {
		ctx := context.Background()
		want := func(what, code string, err error) {
			t.Helper()
			if got := compute.PermanentCode(err); got != code {
				t.Errorf("%s = %v; want a permanent %s", what, err, code)
			}
		}
		_, err := s.d.EnsureNamespace(ctx, compute.NamespaceRef{ID: badID})
		want("EnsureNamespace of a bad ID", compute.InvalidNamespaceID, err)
		_, err = s.d.DeleteNamespace(ctx, compute.NamespaceRef{ID: badID})
		want("DeleteNamespace of a bad ID", compute.InvalidNamespaceID, err)

		ag := s.agent(t)
		badAgent, badNamespace := ag, ag
		badAgent.AgentID, badNamespace.NamespaceID = badID, badID
		for _, c := range []struct {
			ref  compute.AgentRef
			code string
		}{{badAgent, compute.InvalidAgentID}, {badNamespace, compute.InvalidNamespaceID}} {
			sp := s.spec(c.ref, 1)
			_, err := s.d.PrepareRevision(ctx, sp)
			want("PrepareRevision of "+c.code, c.code, err)
			want("ActivateRevision of "+c.code, c.code, s.d.ActivateRevision(ctx, sp.RevisionRef))
			want("RetireRevision of "+c.code, c.code, s.d.RetireRevision(ctx, sp.RevisionRef))
			want("StopAgent of "+c.code, c.code, s.d.StopAgent(ctx, c.ref))
			want("DeleteAgent of "+c.code, c.code, s.d.DeleteAgent(ctx, c.ref))
			_, err = s.d.Diagnose(ctx, sp.RevisionRef)
			want("Diagnose of "+c.code, c.code, err)
			if ep, ok := s.d.GatewayEndpoint(ctx, c.ref); ok {
				t.Errorf("GatewayEndpoint of %s = %+v", c.code, ep)
			}
		}

		badRev := s.spec(ag, 1)
		badRev.RevisionID = "rev_x"
		_, err = s.d.PrepareRevision(ctx, badRev)
		want("PrepareRevision of a bad revision ID", compute.InvalidRevisionID, err)
		want("ActivateRevision of a bad revision ID", compute.InvalidRevisionID, s.d.ActivateRevision(ctx, badRev.RevisionRef))
		want("RetireRevision of a bad revision ID", compute.InvalidRevisionID, s.d.RetireRevision(ctx, badRev.RevisionRef))
		_, err = s.d.Diagnose(ctx, badRev.RevisionRef)
		want("Diagnose of a bad revision ID", compute.InvalidRevisionID, err)

		if s.caps.WorkspaceSetup {
			for _, name := range []string{"../x", "sub/USER.md", "", ".."} {
				sp := s.spec(ag, 1)
				sp.InitialFiles = map[string]string{name: "y"}
				_, err = s.d.PrepareRevision(ctx, sp)
				want("PrepareRevision with initial file "+name, compute.InvalidInitialFile, err)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
		s.gone(t, ag, "refused calls")
	}},
}
