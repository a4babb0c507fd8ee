package computetest

import (
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
)

// Harness is one fresh driver under test and how the suite sees its
// effects. Run calls the factory once in every subtest (subtests run in
// parallel), so the state of one never meets another's.
type Harness struct {
	// Driver is a new driver instance over state of its own (a new
	// directory, host, cluster namespace, …).
	Driver compute.Driver
	// Observer looks at that state from outside the driver, whichever
	// instance acted on it.
	Observer Observer
	// Reopen returns another driver instance over the same state, as a
	// restarted occ, or a second occ process, opens it. Instances opened
	// earlier stay usable: the suite calls them concurrently.
	Reopen func(t *testing.T) compute.Driver
	// Options tune the suite for this driver.
	Options Options
}

// Observer lets the suite check a driver's effects without asking the
// driver. A method fails the test (t.Fatal) when it cannot observe.
type Observer interface {
	// NamespaceExists reports whether anything the driver owns for the
	// Namespace is left.
	NamespaceExists(t *testing.T, id string) bool
	// Workloads identifies every workload that runs for the Agent
	// (local: PID and start time of each process, strays included;
	// Docker: container IDs; Kubernetes: Pod UIDs); none: empty.
	Workloads(t *testing.T, agent compute.AgentRef) []string
	// WorkloadEnv is the environment the Agent's running workload sees;
	// false when none runs.
	WorkloadEnv(t *testing.T, agent compute.AgentRef) (map[string]string, bool)
	// WorkspaceFile reads a file of the Agent's workspace as the gateway
	// sees it; false when it does not exist.
	WorkspaceFile(t *testing.T, agent compute.AgentRef, name string) (string, bool)
	// WriteWorkspaceFile writes a file into the Agent's workspace as the
	// gateway would (a user's edit).
	WriteWorkspaceFile(t *testing.T, agent compute.AgentRef, name, content string)
	// AgentExists reports whether anything the driver owns for the Agent
	// (files, volumes, units, …) is left.
	AgentExists(t *testing.T, agent compute.AgentRef) bool
	// ScanState calls visit with every piece of state the driver keeps
	// outside its workloads' memory (files under its root, objects it
	// wrote to an API, …), named by where it is.
	ScanState(t *testing.T, visit func(where string, content []byte))
}

// Options tune Run for a driver. A Spec hook completes the spec the
// suite made; the other hooks are applied after it.
type Options struct {
	// Spec completes a spec so that the driver's gateway can become ready
	// (Document, Env, …); nil leaves it as it is.
	Spec func(compute.RevisionSpec) compute.RevisionSpec
	// SlowStart makes the spec's gateway start slowly: the first
	// PrepareRevision after its start answers not ready
	// (occ.PendingGatewayStarting), a later one ready. Required.
	SlowStart func(compute.RevisionSpec) compute.RevisionSpec
	// RejectCredential makes the model provider reject the spec's model
	// credential, so that the gateway holds itself unready. Required.
	RejectCredential func(compute.RevisionSpec) compute.RevisionSpec
	// PluginWarnings makes the spec's gateway, once ready, report these
	// plugin warnings. Required when the driver declares plugin approval
	// policies.
	PluginWarnings func(compute.RevisionSpec, []compute.Warning) compute.RevisionSpec
	// ReadyTimeout bounds every wait for readiness; default 60 s.
	ReadyTimeout time.Duration
	// Poll is the pause between two PrepareRevision calls; default 100 ms.
	Poll time.Duration
}
