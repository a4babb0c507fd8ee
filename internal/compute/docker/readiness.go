package docker

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// CodeStartupFailed is the RuntimeFailure code of a gateway container that
// exited or restarts (component "gateway", check "process").
const CodeStartupFailed = occ.DeployRuntimeStartup

// probeTimeout bounds the HTTP probes and healthTimeout the health call
// of one PrepareRevision.
const (
	probeTimeout  = 5 * time.Second
	healthTimeout = 15 * time.Second
)

// The states of a gateway container that readiness tells apart.
const (
	containerStarting = iota
	containerRunning
	containerFailed
)

func containerPhase(c containerJSON) int {
	switch {
	case running(c):
		return containerRunning
	case c.State.Restarting, c.State.Status == "exited", c.State.Status == "dead":
		return containerFailed
	}
	return containerStarting
}

// readiness reads the revision's container and, once it runs, probes the
// gateway through its published port.
func (d *Driver) readiness(ctx context.Context, spec compute.RevisionSpec) (compute.Readiness, error) {
	starting := compute.Readiness{PendingReason: occ.PendingGatewayStarting}
	c, found, err := d.gateway(ctx, spec.AgentRef)
	if err != nil {
		return compute.Readiness{}, err
	}
	if !found || c.Config.Labels[LabelRevision] != spec.RevisionID {
		return starting, nil
	}
	failed := compute.Readiness{RuntimeFailure: &compute.RuntimeFailure{Component: "gateway", Check: "process", CheckedAt: time.Now().UTC(), Code: CodeStartupFailed}}
	dedicated := spec.ExecutionMode == occ.ExecutionDedicated
	if dedicated {
		// The harness container exited, restarts, or was restarted and
		// does not answer: the app-server the gateway needs is failing.
		h, found, err := d.harnessOf(ctx, spec.AgentRef)
		if err != nil {
			return compute.Readiness{}, err
		}
		if !found || containerPhase(h) == containerFailed || h.RestartCount > 0 && !appServerReady(ctx, h) {
			return compute.Readiness{RuntimeFailure: &compute.RuntimeFailure{Component: compute.HarnessComponent, Check: compute.HarnessCheckProcess,
				CheckedAt: time.Now().UTC(), Code: CodeStartupFailed}}, nil
		}
	}
	switch containerPhase(c) {
	case containerFailed:
		return failed, nil
	case containerStarting:
		return starting, nil
	}
	ep, err := d.endpointOf(c)
	if err != nil {
		d.o.Logger.Debug("gateway port not published yet", "agent", spec.AgentID, "error", err)
		return starting, nil
	}
	d.mu.Lock()
	verified := d.verified[spec.AgentRef] == c.ID
	d.mu.Unlock()
	recorded := !verified && d.probedBefore(ctx, c)
	verified = verified || recorded
	// A dedicated gateway holds no model credential: its harness probed
	// the model before it was made.
	r, err := compute.ProbeEndpoint(ctx, compute.Probe{Endpoint: ep, Document: spec.Document, ProbeModel: !verified && !dedicated, Report: spec.Report,
		ModelProbeTimeout: d.o.ModelProbeTimeout, ProbeTimeout: probeTimeout, HealthTimeout: healthTimeout})
	if err != nil {
		return r, err
	}
	if !r.Ready {
		// The engine restarts a gateway that exits: one that has
		// restarted and does not answer ready is failing, not starting.
		if c.RestartCount > 0 && r.PendingReason != "" {
			return failed, nil
		}
		return r, nil
	}
	d.mu.Lock()
	first := d.verified[spec.AgentRef] != c.ID
	d.verified[spec.AgentRef] = c.ID
	d.mu.Unlock()
	if first && !recorded && !dedicated {
		d.recordProbed(ctx, c)
	}
	return r, nil
}

// endpointOf is the URL and token of a running gateway container: its
// port published on 127.0.0.1, and the token in its environment.
func (d *Driver) endpointOf(c containerJSON) (compute.Endpoint, error) {
	var port string
	for _, b := range c.NetworkSettings.Ports[portKey(d.relayPort())] {
		if b.HostIP == "127.0.0.1" && b.HostPort != "" {
			port = b.HostPort
		}
	}
	if port == "" {
		return compute.Endpoint{}, fmt.Errorf("container %s: port %d is not published on 127.0.0.1", c.Name, d.relayPort())
	}
	token := gatewayToken(c)
	if token == "" {
		return compute.Endpoint{}, fmt.Errorf("container %s has no gateway token", c.Name)
	}
	return compute.Endpoint{URL: "ws://127.0.0.1:" + port, Token: token, RevisionID: c.Config.Labels[LabelRevision]}, nil
}

// gatewayToken is the gateway token in the container's environment.
func gatewayToken(c containerJSON) string { return envValue(c, "OPENCLAW_GATEWAY_TOKEN") }

// envValue is a variable of the container's environment ("" when unset).
func envValue(c containerJSON, name string) string {
	v := ""
	for _, kv := range c.Config.Env {
		if s, ok := strings.CutPrefix(kv, name+"="); ok {
			v = s
		}
	}
	return v
}

// GatewayEndpoint returns the endpoint of the Agent's running gateway
// container.
func (d *Driver) GatewayEndpoint(ctx context.Context, a compute.AgentRef) (compute.Endpoint, bool) {
	if a.Validate() != nil {
		return compute.Endpoint{}, false
	}
	c, found, err := d.gateway(ctx, a)
	if err != nil || !found || !running(c) {
		return compute.Endpoint{}, false
	}
	ep, err := d.endpointOf(c)
	return ep, err == nil
}
