package local

import (
	"context"
	"errors"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
)

// probeDetails are the provider status buckets a failed probe's cause
// names; any other status is "other".
var probeDetails = map[string]bool{"format": true, "rate_limit": true, "billing": true, "unknown": true, "no_model": true}

// probeModel asks a just-started gateway to try the primary model's
// provider once (models.probe) within timeout. done false means
// the credential works and readiness goes on; otherwise r is the answer:
// pending while the gateway cannot take the call yet, or a held failure
// (reference/flows.md §6, §13.4): a rejected credential
// (AUTHENTICATION_FAILED), no answer in time (MODEL_PROBE_TIMEOUT), or any
// other failed status (MODEL_PROBE_FAILED with the status as the cause).
func probeModel(ctx context.Context, c *gateway.Conn, provider string, timeout time.Duration) (r compute.Readiness, done bool) {
	held := func(check, code string, cause *compute.FailureCause) (compute.Readiness, bool) {
		return compute.Readiness{Held: true, RuntimeFailure: &compute.RuntimeFailure{
			Component: compute.HeldComponent, Check: check, CheckedAt: time.Now().UTC(), Code: code, Cause: cause}}, true
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p, err := c.ProbeModel(pctx, provider)
	switch {
	case errors.Is(err, gateway.ErrModelAuth):
		return held(compute.HeldCheckModelCredential, CodeAuthenticationFailed, nil)
	case err != nil && ctx.Err() == nil && pctx.Err() != nil:
		// Our budget ran out, not the caller's: the probe did not answer.
		return held(compute.HeldCheckModelProbe, compute.HeldModelProbeTimeout, nil)
	case errors.Is(err, gateway.ErrNotReady), errors.Is(err, gateway.ErrUnreachable), ctx.Err() != nil:
		// The gateway could not take the call (starting, restarted), or the
		// pass ended: ask again at the next pass.
		return compute.Readiness{PendingReason: PendingStarting}, true
	case err != nil:
		// The gateway refused the call itself: that proves nothing about
		// the credential, and does not hold the deployment back.
		return compute.Readiness{}, false
	case p.Status == gateway.ModelProbeOK:
		return compute.Readiness{}, false
	case p.Status == "timeout":
		return held(compute.HeldCheckModelProbe, compute.HeldModelProbeTimeout, nil)
	}
	detail := p.Status
	if !probeDetails[detail] {
		detail = "other"
	}
	return held(compute.HeldCheckModelProbe, compute.HeldModelProbeFailed, &compute.FailureCause{Kind: "PROBE_STATUS", Detail: detail})
}
