package compute

// WorkloadWatcher is implemented by a driver that can tell when an Agent's
// workload changed (on Kubernetes: one of its gateway Pods appeared,
// changed or went away), so that a revision deferred while its gateway
// starts is looked at again at once rather than at its next deferral. It
// is optional: without it the worker's deferrals alone pace the passes.
type WorkloadWatcher interface {
	// WatchWorkloads starts calling changed, from the driver's own
	// goroutines, for the Agent of every workload change it sees, until the
	// driver is closed. It is called at most once per driver. A change may
	// be reported more than once or for an Agent nobody waits on; one that
	// happens while the watch reconnects may be missed (the deferrals
	// still apply).
	WatchWorkloads(changed func(AgentRef)) error
}
