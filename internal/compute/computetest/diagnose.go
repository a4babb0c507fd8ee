package computetest

import (
	"context"
	"slices"
	"testing"

	"github.com/openclaw/occ/internal/compute"
)

// diagnoseObligations: a diagnosis is of the revision asked for, bounded
// to compute.MaxChecks, has a succeeded check while the revision is ready,
// and only unknown checks when no workload runs it.
var diagnoseObligations = []obligation{
	{"BoundedWithASucceededCheckWhenReady", func(t *testing.T, s *subject) {
		ag := s.agent(t)
		rev := s.spec(ag, 1)
		s.ready(t, rev)
		checks := s.diagnose(t, rev.RevisionRef)
		if !slices.ContainsFunc(checks, func(c compute.Check) bool { return c.Status == "succeeded" }) {
			t.Fatalf("no check of a ready revision succeeded: %+v", checks)
		}
	}},
	{"UnknownWithoutWorkload", func(t *testing.T, s *subject) {
		ag := s.agent(t)
		rev1, rev2 := s.spec(ag, 1), s.spec(ag, 2)
		s.allUnknown(t, rev1.RevisionRef, "a revision never prepared")
		s.ready(t, rev1)
		s.ready(t, rev2)
		s.allUnknown(t, rev1.RevisionRef, "a superseded revision")
		stop(t, s.d, ag)
		s.allUnknown(t, rev2.RevisionRef, "a stopped revision")
		s.deleteAgent(t, ag)
		s.allUnknown(t, rev2.RevisionRef, "a deleted Agent's revision")
	}},
}

// diagnose runs Diagnose and checks the diagnosis's shape (CONTRACT.md
// §7): of the revision asked for, 1 to MaxChecks checks, each with a
// component, a name, a status, a code and a message, no check twice.
func (s *subject) diagnose(t *testing.T, rev compute.RevisionRef) []compute.Check {
	t.Helper()
	dg, err := s.d.Diagnose(context.Background(), rev)
	if err != nil {
		t.Fatalf("Diagnose: %v", err)
	}
	if dg.RevisionID != rev.RevisionID {
		t.Fatalf("diagnosis of revision %q; asked for %q", dg.RevisionID, rev.RevisionID)
	}
	if len(dg.Checks) == 0 || len(dg.Checks) > compute.MaxChecks {
		t.Fatalf("%d checks; want 1 to %d", len(dg.Checks), compute.MaxChecks)
	}
	seen := map[string]bool{}
	for _, c := range dg.Checks {
		if c.Component == "" || c.Check == "" || c.Code == "" || c.Message == "" {
			t.Fatalf("check without component, name, code or message: %+v", c)
		}
		if !slices.Contains(checkStatuses, c.Status) {
			t.Fatalf("check %s/%s has status %q", c.Component, c.Check, c.Status)
		}
		if seen[c.Component+"/"+c.Check] {
			t.Fatalf("check %s/%s twice", c.Component, c.Check)
		}
		seen[c.Component+"/"+c.Check] = true
	}
	return dg.Checks
}

// allUnknown fails unless every check of the revision is unknown.
func (s *subject) allUnknown(t *testing.T, rev compute.RevisionRef, what string) {
	t.Helper()
	for _, c := range s.diagnose(t, rev) {
		if c.Status != "unknown" {
			t.Fatalf("check of %s = %+v; want unknown", what, c)
		}
	}
}
