package computetest

import (
	"reflect"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/compute"
)

// group is a set of obligations and the drivers they bind (applies nil:
// every driver).
type group struct {
	name        string
	applies     func(compute.Capabilities) bool
	obligations []obligation
}

// obligation is one subtest of the suite.
type obligation struct {
	name  string
	check func(t *testing.T, s *subject)
}

// groups is the whole contract, in the order the subtests start.
func groups() []group {
	return []group{
		{name: "Capabilities", obligations: capabilityObligations},
		{name: "Namespaces", obligations: namespaceObligations},
		{name: "References", obligations: referenceObligations},
		{name: "Revisions", obligations: revisionObligations},
		{name: "Readiness", obligations: readinessObligations},
		{name: "Isolation", obligations: isolationObligations},
		{name: "Diagnose", obligations: diagnoseObligations},
		{name: "Logs", obligations: logsObligations},
		{name: "Adoption", obligations: adoptionObligations},
		{name: "WorkspaceSetup", applies: func(c compute.Capabilities) bool { return c.WorkspaceSetup },
			obligations: workspaceSetupObligations},
		{name: "PersistentState", applies: func(c compute.Capabilities) bool { return c.PersistentState },
			obligations: persistentStateObligations},
		{name: "SecretEnvironment", applies: func(c compute.Capabilities) bool { return c.SecretEnvironment },
			obligations: secretEnvironmentObligations},
		{name: "NativeAdmin", applies: func(c compute.Capabilities) bool { return c.NativeAdmin },
			obligations: nativeAdminObligations},
		{name: "Plugins", applies: func(c compute.Capabilities) bool { return len(c.PluginApprovalPolicies) > 0 },
			obligations: pluginObligations},
	}
}

// Run checks that the driver newHarness makes honours the compute.Driver
// contract. Every obligation is a subtest named Group/Obligation that
// calls newHarness for a fresh driver and runs in parallel with the
// others; a capability's group runs only when the driver declares it (see
// docs/DEVELOPMENT.md). The calling test's name must contain
// "Conformance", so that every subtest's does.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	if !strings.Contains(t.Name(), "Conformance") {
		t.Fatalf("computetest.Run called from %s: the calling test's name must contain Conformance", t.Name())
	}
	caps := newSubject(t, newHarness).caps
	for _, g := range groups() {
		if g.applies != nil && !g.applies(caps) {
			continue
		}
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, ob := range g.obligations {
				t.Run(ob.name, func(t *testing.T) {
					t.Parallel()
					s := newSubject(t, newHarness)
					if !reflect.DeepEqual(s.caps, caps) {
						t.Fatalf("a new driver declares %+v; the first declared %+v", s.caps, caps)
					}
					ob.check(t, s)
				})
			}
		})
	}
}
