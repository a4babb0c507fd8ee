package ssh

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
)

// Diagnostics components, checks and codes of the ssh driver.
const (
	// ComponentGateway checks: CheckUnit (the Agent's systemd unit runs
	// the revision), then the gateway's own CheckHealthz, CheckStartupz,
	// CheckReadyz.
	ComponentGateway = "gateway"
	CheckUnit        = "unit"
	CheckHealthz     = compute.CheckHealthz
	CheckStartupz    = compute.CheckStartupz
	CheckReadyz      = compute.CheckReadyz

	CodeOK = compute.CodeOK
	// CodeUnavailable: the check could not be made (the unit does not
	// run this revision, or no answer).
	CodeUnavailable = compute.CodeUnavailable
	// CodeUnitFailed: the revision's unit failed or systemd restarted
	// its gateway.
	CodeUnitFailed = "UNIT_FAILED"
)

var diagMessages = map[string]string{
	CodeUnavailable: "The gateway service of this revision is not running or did not answer.",
	CodeUnitFailed:  "The gateway service of this revision failed or was restarted after its gateway exited.",
}

// diagnoseTimeout bounds Diagnose.
const diagnoseTimeout = 30 * time.Second

func check(component, name, status, code string) compute.Check {
	return compute.CheckWith(diagMessages, component, name, status, code)
}

// Diagnose checks the revision's gateway afresh: its unit, then /healthz,
// /startupz and /readyz. A unit that does not run the revision gives
// unknown checks.
func (d *Driver) Diagnose(ctx context.Context, rev compute.RevisionRef) (compute.Diagnosis, error) {
	if err := rev.Validate(); err != nil {
		return compute.Diagnosis{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, diagnoseTimeout)
	defer cancel()
	out := compute.Diagnosis{RevisionID: rev.RevisionID}
	unknown := func(names ...string) (compute.Diagnosis, error) {
		for _, n := range names {
			out.Checks = append(out.Checks, check(ComponentGateway, n, gateway.CheckUnknown, CodeUnavailable))
		}
		return out, nil
	}
	h, st, ok, err := d.state(ctx, rev.AgentRef)
	if err != nil {
		return compute.Diagnosis{}, err
	}
	if !ok || st.running != rev.RevisionID {
		return unknown(CheckUnit, CheckHealthz, CheckStartupz, CheckReadyz)
	}
	switch {
	case st.active == "failed":
		out.Checks = append(out.Checks, check(ComponentGateway, CheckUnit, gateway.CheckFailed, CodeUnitFailed))
		return unknown(CheckHealthz, CheckStartupz, CheckReadyz)
	case st.active == "active" && st.restart > 0:
		out.Checks = append(out.Checks, check(ComponentGateway, CheckUnit, gateway.CheckFailed, CodeUnitFailed))
	case st.active == "active":
		out.Checks = append(out.Checks, check(ComponentGateway, CheckUnit, gateway.CheckSucceeded, CodeOK))
	default:
		return unknown(CheckUnit, CheckHealthz, CheckStartupz, CheckReadyz)
	}
	ep, err := d.endpoint(h, st)
	if err != nil {
		return unknown(CheckHealthz, CheckStartupz, CheckReadyz)
	}
	pctx, pcancel := context.WithTimeout(ctx, probeTimeout)
	hp, perr := gateway.Probe(pctx, "http://"+strings.TrimPrefix(ep.URL, "ws://"))
	pcancel()
	out.Checks = append(out.Checks, compute.ProbeChecks(hp, perr, func(name, status, code string) compute.Check {
		return check(ComponentGateway, name, status, code)
	})...)
	return out, nil
}

// Logs reads the last lines of the revision's gateway log (logging.file
// of its openclaw.json, on the host); none when the unit does not run the
// revision.
func (d *Driver) Logs(ctx context.Context, rev compute.RevisionRef, opts compute.LogOptions) (compute.Logs, error) {
	if err := rev.Validate(); err != nil {
		return compute.Logs{}, err
	}
	h, ok, err := d.hostOf(ctx, rev.NamespaceID)
	if err != nil || !ok {
		return compute.Logs{}, err
	}
	n := opts.TailLines
	if n <= 0 || n > compute.MaxLogLines {
		n = compute.MaxLogLines
	}
	// One line more than asked: whether older output exists. The log's
	// bytes come base64-encoded after the report's lines.
	out, err := d.t.RunBounded(ctx, h, prelude+d.agentVars(rev.AgentRef, "REV", rev.RevisionID, "N", strconv.Itoa(n+1),
		"MAXB", strconv.Itoa(compute.MaxLogBytes))+`
if [ "$(cat "$A/running" 2>/dev/null || true)" != "$REV" ]; then exit 0; fi
echo found yes
echo "token $(sed -n 's/^OPENCLAW_GATEWAY_TOKEN=//p' "$A/gateway-token.env" 2>/dev/null || true)"
if [ -f "$A/logs/$REV.log" ]; then
	echo "size $(wc -c < "$A/logs/$REV.log")"
	echo "log $(tail -c "$MAXB" "$A/logs/$REV.log" | tail -n "$N" | base64 -w0)"
fi
`, compute.MaxLogBytes*2)
	if err != nil {
		return compute.Logs{}, err
	}
	r := parseReport(out)
	if r["found"] != "yes" {
		return compute.Logs{}, nil
	}
	raw, err := decodeB64(r["log"])
	if err != nil {
		return compute.Logs{}, err
	}
	size, _ := strconv.Atoi(r["size"])
	lines, truncated := compute.TailLines(raw, n, size > compute.MaxLogBytes)
	logs := compute.Logs{Found: true, Lines: lines, Truncated: truncated}
	if r["token"] != "" {
		logs.Credentials = append(logs.Credentials, r["token"], gateway.NativeAdminIdentity(r["token"]))
	}
	return logs, nil
}
