package computetest

import (
	"context"
	"testing"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// namespaceObligations: Namespace calls are idempotent, and deleting a
// Namespace deletes its Agents.
var namespaceObligations = []obligation{
	{"EnsureIsIdempotent", func(t *testing.T, s *subject) {
		ns := compute.NamespaceRef{ID: occ.NewID(occ.PrefixNamespace), Name: "conformance"}
		for i := 0; i < 2; i++ {
			o, err := s.d.EnsureNamespace(context.Background(), ns)
			if err != nil || !o.Done {
				t.Fatalf("EnsureNamespace #%d = %+v, %v; want done", i+1, o, err)
			}
		}
		if !s.obs.NamespaceExists(t, ns.ID) {
			t.Fatalf("namespace %s missing after EnsureNamespace", ns.ID)
		}
		deleteNamespace(t, s, ns)
	}},
	{"DeleteIsIdempotent", func(t *testing.T, s *subject) {
		deleteNamespace(t, s, s.namespace(t))
	}},
	{"DeleteOfUnknownSucceeds", func(t *testing.T, s *subject) {
		o, err := s.d.DeleteNamespace(context.Background(), compute.NamespaceRef{ID: occ.NewID(occ.PrefixNamespace)})
		if err != nil || !o.Done {
			t.Fatalf("DeleteNamespace of an unknown Namespace = %+v, %v; want done", o, err)
		}
	}},
	{"DeleteStopsAndRemovesItsAgents", func(t *testing.T, s *subject) {
		ns := s.namespace(t)
		a1, a2 := agentIn(ns), agentIn(ns)
		s.ready(t, s.spec(a1, 1))
		sp2 := s.spec(a2, 1)
		s.ready(t, sp2)
		activate(t, s.d, sp2.RevisionRef)
		deleteNamespace(t, s, ns)
		s.gone(t, a1, "DeleteNamespace")
		s.gone(t, a2, "DeleteNamespace")
	}},
}

// deleteNamespace deletes the Namespace twice and checks it is gone.
func deleteNamespace(t *testing.T, s *subject, ns compute.NamespaceRef) {
	t.Helper()
	for i := 0; i < 2; i++ {
		o, err := s.d.DeleteNamespace(context.Background(), ns)
		if err != nil || !o.Done {
			t.Fatalf("DeleteNamespace #%d = %+v, %v; want done", i+1, o, err)
		}
	}
	if s.obs.NamespaceExists(t, ns.ID) {
		t.Fatalf("namespace %s still present after DeleteNamespace", ns.ID)
	}
}
