package computetest

import (
	"reflect"
	"slices"
	"testing"

	"github.com/openclaw/occ/internal/compute"
)

// capabilityObligations: what a driver declares is stable, its own (a
// caller changing what it got changes nothing), and in the closed
// vocabularies.
var capabilityObligations = []obligation{
	{"StableAndFromTheVocabulary", func(t *testing.T, s *subject) {
		name := s.d.Name()
		if name == "" || s.d.Name() != name {
			t.Fatalf("Name() = %q, then %q; want one non-empty name", name, s.d.Name())
		}
		want := cloneCapabilities(s.d.Capabilities())
		if !reflect.DeepEqual(want, s.caps) {
			t.Fatalf("Capabilities() = %+v, then %+v", s.caps, want)
		}
		got := s.d.Capabilities()
		for _, l := range [][]string{got.ExecutionModes, got.HarnessAuthMethods, got.PluginApprovalPolicies} {
			for i := range l {
				l[i] = "changed by a caller"
			}
		}
		if again := s.d.Capabilities(); !reflect.DeepEqual(again, want) {
			t.Fatalf("Capabilities() = %+v after a caller changed what it got; want %+v", again, want)
		}
		closedSet(t, "execution mode", want.ExecutionModes, executionModes)
		closedSet(t, "harness authentication method", want.HarnessAuthMethods, harnessAuthMethods)
		closedSet(t, "plugin approval policy", want.PluginApprovalPolicies, approvalPolicies)
	}},
}

// cloneCapabilities is a deep copy.
func cloneCapabilities(c compute.Capabilities) compute.Capabilities {
	c.ExecutionModes = slices.Clone(c.ExecutionModes)
	c.HarnessAuthMethods = slices.Clone(c.HarnessAuthMethods)
	c.PluginApprovalPolicies = slices.Clone(c.PluginApprovalPolicies)
	return c
}

// closedSet fails unless every value is in vocabulary, once.
func closedSet(t *testing.T, what string, values, vocabulary []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, v := range values {
		if !slices.Contains(vocabulary, v) {
			t.Errorf("declared %s %q is not one of %v", what, v, vocabulary)
		}
		if seen[v] {
			t.Errorf("declared %s %q twice", what, v)
		}
		seen[v] = true
	}
}
