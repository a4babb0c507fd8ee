package compute

import "context"

// WorkloadLister is implemented by a driver that can list the Agents it
// holds workloads for, so the worker can collect the workload of an Agent
// desired stopped that appeared after its stop: an engine may finish a
// create whose caller had already given up (a killed occ process, a
// request past its deadline), and nothing else would ever look at that
// Agent again. It is optional: without it such a workload stays until
// the Agent is deployed again or deleted.
type WorkloadLister interface {
	// AgentsWithWorkloads lists every Agent that has a gateway, harness
	// or other per-Agent workload, in any state (created, running,
	// exited), once each. Only workloads carrying the driver's ownership
	// marks count.
	AgentsWithWorkloads(ctx context.Context) ([]AgentRef, error)
}
