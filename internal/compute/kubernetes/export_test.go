package kubernetes

import "github.com/openclaw/occ/internal/compute"

// OpenTunnels reports how many port-forwards the Agent's endpoint holds
// open (0 or 1).
func OpenTunnels(d *Driver, a compute.AgentRef) int {
	s := slot(forwardKey{d.o.Config.Host, a})
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.t != nil && s.t.alive() {
		return 1
	}
	return 0
}

// StopVerdict is stopVerdict, for the harness script's test.
var StopVerdict = stopVerdict

// WatchedPods is watchedPods.
func WatchedPods(d *Driver, a compute.AgentRef, revisionID string) int {
	pods, _ := d.watchedPods(a, revisionID)
	return len(pods)
}

// ResumedDials reports how many of the driver's port-forward dials resumed
// a TLS session.
func ResumedDials(d *Driver) int64 { return d.dialer.resumed.Load() }

// EndpointRelayScript is endpointRelayScript, for its test with Node.js.
var EndpointRelayScript = endpointRelayScript
