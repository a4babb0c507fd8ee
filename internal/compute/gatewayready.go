package compute

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/occ"
)

// Ask is how AskGateway reaches a gateway whose probe routes answered
// ready.
type Ask struct {
	// Dial connects occ's backend client.
	Dial gateway.Options
	// Document is the revision's configuration (its primary model's
	// provider is the one probed).
	Document map[string]any
	// ProbeModel asks the gateway to try the model credential (the first
	// time a workload is found ready).
	ProbeModel bool
	// ModelProbeTimeout bounds that probe; HealthTimeout the connection
	// and the health call.
	ModelProbeTimeout time.Duration
	HealthTimeout     time.Duration
	// Report hears occ.PendingModelProbeRunning before the model probe
	// (RevisionSpec.Report); nil hears nothing.
	Report func(reason string)
}

// AskGateway finishes a readiness check every driver makes the same way,
// once the gateway's probe routes answered ready: it connects, probes the
// model credential when asked (ProbeModel), and reads the plugin warnings
// (health). A gateway that cannot take the connection or a call yet is
// pending (occ.PendingGatewayStarting).
func AskGateway(ctx context.Context, a Ask) (Readiness, error) {
	starting := Readiness{PendingReason: occ.PendingGatewayStarting}
	dctx, cancel := context.WithTimeout(ctx, a.HealthTimeout)
	c, err := gateway.Dial(dctx, a.Dial)
	cancel()
	if err != nil {
		if errors.Is(err, gateway.ErrNotReady) || errors.Is(err, gateway.ErrUnreachable) {
			return starting, nil
		}
		return Readiness{}, err
	}
	defer c.Close()
	if provider := gateway.ModelProvider(a.Document); provider != "" && a.ProbeModel {
		if a.Report != nil {
			a.Report(occ.PendingModelProbeRunning)
		}
		if r, done := ProbeModel(ctx, c, provider, a.ModelProbeTimeout); done {
			return r, nil
		}
	}
	r := Readiness{Ready: true}
	hctx, cancel := context.WithTimeout(ctx, a.HealthTimeout)
	defer cancel()
	hr, err := c.Health(hctx)
	switch {
	case err == nil:
		for _, w := range hr.PluginWarnings() {
			r.Warnings = append(r.Warnings, Warning{Code: w.Code, PluginID: w.PluginID})
		}
	case errors.Is(err, gateway.ErrNotReady), errors.Is(err, gateway.ErrUnreachable):
		return starting, nil
	default:
		return Readiness{}, err
	}
	return r, nil
}

// probeDetails are the provider status buckets a failed probe's cause
// names; any other status is "other".
var probeDetails = map[string]bool{"format": true, "rate_limit": true, "billing": true, "unknown": true, "no_model": true}

// ProbeModel asks a just-started gateway to try the primary model's
// provider once (models.probe) within timeout; every driver reads a model
// credential's fate the same way. done false means the credential works
// and readiness goes on; otherwise r is the answer: pending
// (occ.PendingGatewayStarting) while the gateway cannot take the call yet,
// or a held failure (reference/flows.md §6, §13.4): a rejected credential
// (HeldAuthenticationFailed), no answer in time (HeldModelProbeTimeout), or
// any other failed status (HeldModelProbeFailed with the status as the
// cause).
func ProbeModel(ctx context.Context, c *gateway.Conn, provider string, timeout time.Duration) (r Readiness, done bool) {
	held := func(check, code string, cause *FailureCause) (Readiness, bool) {
		return Readiness{Held: true, RuntimeFailure: &RuntimeFailure{
			Component: HeldComponent, Check: check, CheckedAt: time.Now().UTC(), Code: code, Cause: cause}}, true
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p, err := c.ProbeModel(pctx, provider)
	switch {
	case errors.Is(err, gateway.ErrModelAuth):
		return held(HeldCheckModelCredential, HeldAuthenticationFailed, nil)
	case err != nil && ctx.Err() == nil && pctx.Err() != nil:
		// Our budget ran out, not the caller's: the probe did not answer.
		return held(HeldCheckModelProbe, HeldModelProbeTimeout, nil)
	case errors.Is(err, gateway.ErrNotReady), errors.Is(err, gateway.ErrUnreachable), ctx.Err() != nil:
		// The gateway could not take the call (starting, restarted), or the
		// pass ended: ask again at the next pass.
		return Readiness{PendingReason: occ.PendingGatewayStarting}, true
	case err != nil:
		// The gateway refused the call itself: that proves nothing about
		// the credential, and does not hold the deployment back.
		return Readiness{}, false
	case p.Status == gateway.ModelProbeOK:
		return Readiness{}, false
	case p.Status == "timeout":
		return held(HeldCheckModelProbe, HeldModelProbeTimeout, nil)
	}
	detail := p.Status
	if !probeDetails[detail] {
		detail = "other"
	}
	return held(HeldCheckModelProbe, HeldModelProbeFailed, &FailureCause{Kind: "PROBE_STATUS", Detail: detail})
}

// Probe is a readiness check of a running workload's gateway through its
// endpoint (ws://host:port).
type Probe struct {
	Endpoint Endpoint
	Document map[string]any
	// ProbeModel, ModelProbeTimeout and HealthTimeout are AskGateway's;
	// ProbeTimeout bounds the probe routes.
	ProbeModel                                     bool
	ModelProbeTimeout, ProbeTimeout, HealthTimeout time.Duration
	// Report is Ask.Report (RevisionSpec.Report).
	Report func(reason string)
}

// ProbeEndpoint reads a running gateway's readiness the way every driver
// that reaches it through an endpoint does: /healthz, /startupz and
// /readyz (not ready once started: occ.PendingGatewayUnavailable; not
// answering or still starting: occ.PendingGatewayStarting), then
// AskGateway.
func ProbeEndpoint(ctx context.Context, p Probe) (Readiness, error) {
	pctx, cancel := context.WithTimeout(ctx, p.ProbeTimeout)
	h, err := gateway.Probe(pctx, "http://"+strings.TrimPrefix(p.Endpoint.URL, "ws://"))
	cancel()
	switch {
	case err == nil:
	case errors.Is(err, gateway.ErrNotReady) && h.Started:
		return Readiness{PendingReason: occ.PendingGatewayUnavailable}, nil
	case errors.Is(err, gateway.ErrNotReady), errors.Is(err, gateway.ErrUnreachable):
		return Readiness{PendingReason: occ.PendingGatewayStarting}, nil
	default:
		return Readiness{}, err
	}
	return AskGateway(ctx, Ask{Dial: gateway.Options{URL: p.Endpoint.URL, Token: p.Endpoint.Token}, Document: p.Document,
		ProbeModel: p.ProbeModel, Report: p.Report, ModelProbeTimeout: p.ModelProbeTimeout, HealthTimeout: p.HealthTimeout})
}
