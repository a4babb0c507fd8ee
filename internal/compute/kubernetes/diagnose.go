package kubernetes

import (
	"context"
	"encoding/json"
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
	// CodePodNotReady: the revision's gateway container runs and its
	// readiness probe has not passed (the gateway's own checks say why).
	CodePodNotReady = "POD_NOT_READY"
)

// diagMessages are the fixed messages of the driver's own codes
// (compute.CheckMessage has the shared ones).
var diagMessages = map[string]string{
	CodeUnavailable: "The gateway Pod of this revision is missing or did not answer.",
	CodePodFailed:   "The gateway container of this revision exited or its image cannot be pulled.",
	CodePodNotReady: "The gateway container of this revision runs, and the Pod's readiness probe has not passed.",
}

// diagnoseTimeout bounds Diagnose.
const diagnoseTimeout = 10 * time.Second

func check(component, name, status, code string) compute.Check {
	return compute.CheckWith(diagMessages, component, name, status, code)
}

// Diagnose checks the revision's gateway afresh: its Pod, then /healthz,
// /startupz and /readyz through the endpoint and, when the revision's
// configuration has channels.slack, the three Slack checks (as the local
// driver makes them). A missing Pod (the revision is not the one running,
// or Kubernetes has not made it) gives unknown checks.
func (d *Driver) Diagnose(ctx context.Context, rev compute.RevisionRef) (compute.Diagnosis, error) {
	if err := rev.Validate(); err != nil {
		return compute.Diagnosis{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, diagnoseTimeout)
	defer cancel()
	out := compute.Diagnosis{RevisionID: rev.RevisionID}
	doc, err := d.revisionDocument(ctx, rev)
	if err != nil {
		return compute.Diagnosis{}, err
	}
	slack := compute.WantsSlack(doc)
	pods, err := d.listPods(ctx, rev.AgentRef, rev.RevisionID)
	if err != nil {
		return compute.Diagnosis{}, err
	}
	pod := live(pods)
	if rendersCodex(doc) {
		out.Checks = append(out.Checks, diagnoseHarness(pod)...)
	}
	unknown := func(names ...string) (compute.Diagnosis, error) {
		for _, n := range names {
			out.Checks = append(out.Checks, check(ComponentGateway, n, gateway.CheckUnknown, CodeUnavailable))
		}
		if slack {
			out.Checks = append(out.Checks, compute.UnknownSlackChecks(check)...)
		}
		return out, nil
	}
	if pod == nil {
		return unknown(CheckPod, CheckHealthz, CheckStartupz, CheckReadyz)
	}
	switch podState(pod) {
	case podReady:
		out.Checks = append(out.Checks, check(ComponentGateway, CheckPod, gateway.CheckSucceeded, CodeOK))
	case podRunning:
		out.Checks = append(out.Checks, check(ComponentGateway, CheckPod, gateway.CheckFailed, CodePodNotReady))
	case podExited, podImageFailed:
		out.Checks = append(out.Checks, check(ComponentGateway, CheckPod, gateway.CheckFailed, CodePodFailed))
		return unknown(CheckHealthz, CheckStartupz, CheckReadyz)
	default:
		return unknown(CheckPod, CheckHealthz, CheckStartupz, CheckReadyz)
	}
	ep, err := d.reach(ctx, rev.AgentRef, pod)
	if err != nil {
		return unknown(CheckHealthz, CheckStartupz, CheckReadyz)
	}
	pctx, pcancel := context.WithTimeout(ctx, probeTimeout)
	h, perr := gateway.Probe(pctx, httpURL(ep.URL))
	pcancel()
	out.Checks = append(out.Checks, compute.ProbeChecks(h, perr, func(name, status, code string) compute.Check {
		return check(ComponentGateway, name, status, code)
	})...)
	if slack {
		out.Checks = append(out.Checks, compute.SlackChecks(ctx, gateway.Options{URL: ep.URL, Token: ep.Token}, h.Failing, probeTimeout, check)...)
	}
	return out, nil
}

// revisionDocument is the revision's rendered configuration (its
// ConfigMap); nil when occ has no ConfigMap of it or cannot read it.
func (d *Driver) revisionDocument(ctx context.Context, rev compute.RevisionRef) (map[string]any, error) {
	ns := NamespaceName(rev.NamespaceID)
	cm, found, err := getOwned(ctx, "configmap", ns, ConfigMapName(rev), revisionLabels(rev, RoleConfig), d.cs.CoreV1().ConfigMaps(ns).Get)
	if err != nil || !found {
		return nil, err
	}
	var doc map[string]any
	if json.Unmarshal([]byte(cm.Data[gateway.ConfigFileName]), &doc) != nil {
		return nil, nil
	}
	return doc, nil
}
