package docker

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
)

// Diagnostics components, checks and codes of the docker driver.
const (
	// ComponentGateway checks: CheckContainer (the revision's container),
	// then the gateway's own CheckHealthz, CheckStartupz, CheckReadyz.
	ComponentGateway = "gateway"
	CheckContainer   = "container"
	CheckHealthz     = compute.CheckHealthz
	CheckStartupz    = compute.CheckStartupz
	CheckReadyz      = compute.CheckReadyz

	CodeOK = compute.CodeOK
	// CodeUnavailable: the check could not be made (no container, no
	// answer).
	CodeUnavailable = compute.CodeUnavailable
	// CodeContainerFailed: the revision's gateway container exited, keeps
	// restarting or was restarted by the engine.
	CodeContainerFailed = "CONTAINER_FAILED"
)

// diagMessages are the fixed messages of the driver's own codes
// (compute.CheckMessage has the shared ones).
var diagMessages = map[string]string{
	CodeUnavailable:     "The gateway container of this revision is missing or did not answer.",
	CodeContainerFailed: "The gateway container of this revision exited or was restarted after its gateway exited.",
}

// diagnoseTimeout bounds Diagnose.
const diagnoseTimeout = 10 * time.Second

func check(component, name, status, code string) compute.Check {
	return compute.CheckWith(diagMessages, component, name, status, code)
}

// Diagnose checks the revision's gateway afresh: its container, then
// /healthz, /startupz and /readyz through the published port and, when the
// revision's configuration has channels.slack, the three Slack checks (as
// the local driver makes them). No container of the revision gives unknown
// checks. A dedicated revision's harness checks follow (diagnoseHarness).
func (d *Driver) Diagnose(ctx context.Context, rev compute.RevisionRef) (compute.Diagnosis, error) {
	if err := rev.Validate(); err != nil {
		return compute.Diagnosis{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, diagnoseTimeout)
	defer cancel()
	out, err := d.diagnoseGateway(ctx, rev)
	if err != nil {
		return out, err
	}
	c, found, err := d.gateway(ctx, rev.AgentRef)
	if err != nil {
		return compute.Diagnosis{}, err
	}
	out.Checks = append(out.Checks, d.diagnoseHarness(ctx, rev, found && c.Config.Labels[LabelRevision] == rev.RevisionID, c)...)
	return out, nil
}

// diagnoseGateway is Diagnose's gateway part.
func (d *Driver) diagnoseGateway(ctx context.Context, rev compute.RevisionRef) (compute.Diagnosis, error) {
	out := compute.Diagnosis{RevisionID: rev.RevisionID}
	c, found, err := d.gateway(ctx, rev.AgentRef)
	if err != nil {
		return compute.Diagnosis{}, err
	}
	found = found && c.Config.Labels[LabelRevision] == rev.RevisionID
	slack := found && d.wantsSlack(ctx, c.ID)
	unknown := func(names ...string) (compute.Diagnosis, error) {
		for _, n := range names {
			out.Checks = append(out.Checks, check(ComponentGateway, n, gateway.CheckUnknown, CodeUnavailable))
		}
		if slack {
			out.Checks = append(out.Checks, compute.UnknownSlackChecks(check)...)
		}
		return out, nil
	}
	if !found {
		return unknown(CheckContainer, CheckHealthz, CheckStartupz, CheckReadyz)
	}
	switch containerPhase(c) {
	case containerRunning:
		if c.RestartCount > 0 {
			out.Checks = append(out.Checks, check(ComponentGateway, CheckContainer, gateway.CheckFailed, CodeContainerFailed))
		} else {
			out.Checks = append(out.Checks, check(ComponentGateway, CheckContainer, gateway.CheckSucceeded, CodeOK))
		}
	case containerFailed:
		out.Checks = append(out.Checks, check(ComponentGateway, CheckContainer, gateway.CheckFailed, CodeContainerFailed))
		return unknown(CheckHealthz, CheckStartupz, CheckReadyz)
	default:
		return unknown(CheckContainer, CheckHealthz, CheckStartupz, CheckReadyz)
	}
	ep, err := d.endpointOf(c)
	if err != nil {
		return unknown(CheckHealthz, CheckStartupz, CheckReadyz)
	}
	pctx, pcancel := context.WithTimeout(ctx, probeTimeout)
	h, perr := gateway.Probe(pctx, "http://"+strings.TrimPrefix(ep.URL, "ws://"))
	pcancel()
	out.Checks = append(out.Checks, compute.ProbeChecks(h, perr, func(name, status, code string) compute.Check {
		return check(ComponentGateway, name, status, code)
	})...)
	if slack {
		out.Checks = append(out.Checks, compute.SlackChecks(ctx, gateway.Options{URL: ep.URL, Token: ep.Token}, h.Failing, probeTimeout, check)...)
	}
	return out, nil
}

// wantsSlack reports whether the container's openclaw.json has
// channels.slack; false when it cannot be read.
func (d *Driver) wantsSlack(ctx context.Context, id string) bool {
	var doc map[string]any
	if json.Unmarshal([]byte(d.readFile(ctx, id, ConfigPath)), &doc) != nil {
		return false
	}
	return compute.WantsSlack(doc)
}
