package ssh

import (
	"context"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// CodeStartupFailed is the RuntimeFailure code of a unit that failed or
// that systemd restarted (component "gateway", check "process").
const CodeStartupFailed = occ.DeployRuntimeStartup

// probeTimeout bounds the HTTP probes and healthTimeout the health call
// of one PrepareRevision.
const (
	probeTimeout  = 5 * time.Second
	healthTimeout = 15 * time.Second
)

// readiness reads the unit's state and, once it runs the revision, the
// gateway's probes and (once per process, not for the runtime harness
// method) its model credential.
func (d *Driver) readiness(ctx context.Context, h Host, spec compute.RevisionSpec, st agentState) (compute.Readiness, error) {
	starting := compute.Readiness{PendingReason: occ.PendingGatewayStarting}
	failed := compute.Readiness{RuntimeFailure: &compute.RuntimeFailure{Component: "gateway", Check: "process", CheckedAt: time.Now().UTC(), Code: CodeStartupFailed}}
	if st.running != spec.RevisionID {
		return starting, nil
	}
	switch st.active {
	case "active":
	case "failed":
		return failed, nil
	default:
		if st.restart > 0 {
			return failed, nil
		}
		return starting, nil
	}
	d.mu.Lock()
	verified := d.verified[spec.AgentRef] == st.workload()
	d.mu.Unlock()
	ep, err := d.endpoint(h, st)
	if err != nil {
		return compute.Readiness{}, err
	}
	// The runtime method's credentials are the operator's: occ runs no
	// model probe on them (the seed), only the gateway's own probes.
	probe := !verified && spec.HarnessAuthMethod != occ.HarnessRuntime
	r, err := compute.ProbeEndpoint(ctx, compute.Probe{Endpoint: ep, Document: spec.Document, ProbeModel: probe,
		Report: spec.Report, ModelProbeTimeout: d.o.ModelProbeTimeout, ProbeTimeout: probeTimeout, HealthTimeout: healthTimeout})
	if err != nil {
		return r, err
	}
	if !r.Ready {
		// systemd restarts a gateway that exits: one that has restarted
		// and does not answer ready is failing, not starting.
		if st.restart > 0 && r.PendingReason != "" {
			return failed, nil
		}
		return r, nil
	}
	d.mu.Lock()
	d.verified[spec.AgentRef] = st.workload()
	d.mu.Unlock()
	return r, nil
}
