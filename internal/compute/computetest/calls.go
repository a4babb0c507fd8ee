package computetest

import (
	"slices"
	"sync"
)

// The compute.Driver methods that act on a Namespace or an Agent, by the
// names Faulty and Fake count calls and Faulty injects failures under.
// Namespace methods are keyed by the Namespace ID, the others by the
// Agent ID.
const (
	MethodEnsureNamespace  = "EnsureNamespace"
	MethodDeleteNamespace  = "DeleteNamespace"
	MethodPrepareRevision  = "PrepareRevision"
	MethodActivateRevision = "ActivateRevision"
	MethodRetireRevision   = "RetireRevision"
	MethodStopAgent        = "StopAgent"
	MethodDeleteAgent      = "DeleteAgent"
	MethodGatewayEndpoint  = "GatewayEndpoint"
	MethodDiagnose         = "Diagnose"
	MethodLogs             = "Logs"
)

// keyedMethods lists them.
var keyedMethods = []string{MethodEnsureNamespace, MethodDeleteNamespace, MethodPrepareRevision, MethodActivateRevision,
	MethodRetireRevision, MethodStopAgent, MethodDeleteAgent, MethodGatewayEndpoint, MethodDiagnose, MethodLogs}

// isMethod reports whether name is one of them.
func isMethod(name string) bool { return slices.Contains(keyedMethods, name) }

// callCounts counts calls per method and ID; safe for concurrent use.
type callCounts struct {
	mu sync.Mutex
	n  map[[2]string]int
}

func (c *callCounts) add(method, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[[2]string]int{}
	}
	c.n[[2]string{method, id}]++
}

// of is the number of calls of one method for the ID.
func (c *callCounts) of(method, id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[[2]string{method, id}]
}

// total is the number of calls of every method for the ID.
func (c *callCounts) total(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k, v := range c.n {
		if k[1] == id {
			n += v
		}
	}
	return n
}
