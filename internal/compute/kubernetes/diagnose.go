package kubernetes

import (
	"context"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
)

// Diagnostics components, checks and codes of the kubernetes driver.
const (
	// ComponentGateway checks: CheckPod (the revision's Pod), then the
	// gateway's own CheckHealthz, CheckStartupz, CheckReadyz.
	ComponentGateway = "gateway"
	CheckPod         = "pod"
	CheckHealthz     = compute.CheckHealthz
	CheckStartupz    = compute.CheckStartupz
	CheckReadyz      = compute.CheckReadyz

	CodeOK = compute.CodeOK
	// CodeUnavailable: the check could not be made (no Pod, no answer).
	CodeUnavailable = compute.CodeUnavailable
	// CodePodFailed: the revision's gateway container exited or its image
	// cannot be had.
	CodePodFailed = "POD_FAILED"
)

var diagMessages = map[string]string{
	CodeOK:                 "The check succeeded.",
	CodeUnavailable:        "The gateway Pod of this revision is missing or did not answer.",
	CodePodFailed:          "The gateway container of this revision exited or its image cannot be pulled.",
	compute.CodeNotLive:    "The gateway does not report itself live.",
	compute.CodeNotStarted: "The gateway is still starting.",
	compute.CodeNotReady:   "The gateway reports a failing component.",
}

// diagnoseTimeout bounds Diagnose.
const diagnoseTimeout = 10 * time.Second

func check(name, status, code string) compute.Check {
	return compute.Check{Component: ComponentGateway, Check: name, Status: status, Code: code, Message: diagMessages[code]}
}

// Diagnose checks the revision's gateway afresh: its Pod, then /healthz,
// /startupz and /readyz through the endpoint. A missing Pod (the revision
// is not the one running, or Kubernetes has not made it) gives unknown
// checks.
func (d *Driver) Diagnose(ctx context.Context, rev compute.RevisionRef) (compute.Diagnosis, error) {
	if err := rev.Validate(); err != nil {
		return compute.Diagnosis{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, diagnoseTimeout)
	defer cancel()
	out := compute.Diagnosis{RevisionID: rev.RevisionID}
	unknown := func(names ...string) {
		for _, n := range names {
			out.Checks = append(out.Checks, check(n, gateway.CheckUnknown, CodeUnavailable))
		}
	}
	pods, err := d.pods(ctx, rev.AgentRef, rev.RevisionID)
	if err != nil {
		return compute.Diagnosis{}, err
	}
	pod := live(pods)
	if pod == nil {
		unknown(CheckPod, CheckHealthz, CheckStartupz, CheckReadyz)
		return out, nil
	}
	switch podState(pod) {
	case podReady:
		out.Checks = append(out.Checks, check(CheckPod, gateway.CheckSucceeded, CodeOK))
	case podExited, podImageFailed:
		out.Checks = append(out.Checks, check(CheckPod, gateway.CheckFailed, CodePodFailed))
		unknown(CheckHealthz, CheckStartupz, CheckReadyz)
		return out, nil
	default:
		unknown(CheckPod, CheckHealthz, CheckStartupz, CheckReadyz)
		return out, nil
	}
	ep, err := d.reach(ctx, rev.AgentRef, pod)
	if err != nil {
		unknown(CheckHealthz, CheckStartupz, CheckReadyz)
		return out, nil
	}
	pctx, pcancel := context.WithTimeout(ctx, probeTimeout)
	h, perr := gateway.Probe(pctx, httpURL(ep.URL))
	pcancel()
	out.Checks = append(out.Checks, compute.ProbeChecks(h, perr, check)...)
	return out, nil
}
