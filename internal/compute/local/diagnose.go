package local

import (
	"context"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
)

// Diagnostics components, checks and codes of the local driver.
const (
	// ComponentGateway checks: CheckProcess, CheckHealthz, CheckStartupz,
	// CheckReadyz.
	ComponentGateway = "gateway"
	CheckProcess     = "process"
	CheckHealthz     = compute.CheckHealthz
	CheckStartupz    = compute.CheckStartupz
	CheckReadyz      = compute.CheckReadyz
	// ComponentSlack checks, present when the configuration has
	// channels.slack: CheckConfiguration, CheckAuthentication,
	// CheckConnectivity (derived from channels.status; no message is sent).
	ComponentSlack      = compute.ComponentSlack
	CheckConfiguration  = compute.CheckConfiguration
	CheckAuthentication = compute.CheckAuthentication
	CheckConnectivity   = compute.CheckConnectivity

	// CodeOK goes with every succeeded check.
	CodeOK = compute.CodeOK
	// CodeUnavailable: the check could not be made (no process, no answer).
	CodeUnavailable = compute.CodeUnavailable
	// CodeProcessExited: the gateway of the revision should run and does
	// not (it exited; a supervised one is restarted with backoff).
	CodeProcessExited = "PROCESS_EXITED"
	// CodeNotLive, CodeNotStarted, CodeNotReady: a probe route answered,
	// but not 200.
	CodeNotLive    = compute.CodeNotLive
	CodeNotStarted = compute.CodeNotStarted
	CodeNotReady   = compute.CodeNotReady
	// CodeSlackNotConfigured, CodeSlackAuthFailed, CodeSlackDisconnected:
	// the failed Slack checks.
	CodeSlackNotConfigured = compute.CodeSlackNotConfigured
	CodeSlackAuthFailed    = compute.CodeSlackAuthFailed
	CodeSlackDisconnected  = compute.CodeSlackDisconnected
)

// diagMessages are the fixed messages of the local driver's own codes
// (compute.CheckMessage has the shared ones; nothing the gateway said is
// passed on).
var diagMessages = map[string]string{
	CodeUnavailable:   "The gateway of this revision is not running or did not answer.",
	CodeProcessExited: "The gateway process of this revision should run and does not.",
	CodeNotLoggedIn:   "The harness's Codex home holds no login.",
}

// harnessMessages replace the gateway wording for the harness's checks.
var harnessMessages = map[string]string{
	CodeUnavailable:   "The harness of this revision is not running or did not answer.",
	CodeProcessExited: "The harness process of this revision should run and does not.",
	CodeNotReady:      "The harness app-server does not answer its readiness probe.",
}

// diagnoseHarness checks a dedicated revision's harness: its process, its
// login (the Codex home holds one) and whether its app-server answers
// /readyz. An embedded revision has none of these checks.
func (d *Driver) diagnoseHarness(rev compute.RevisionRef) ([]compute.Check, error) {
	var dedicated, running, exited, login bool
	var st0 runState
	err := d.withAgent(rev.AgentRef, false, func(a *agent, st *runState) error {
		if st == nil || st.RevisionID != rev.RevisionID || !st.Dedicated {
			return nil
		}
		dedicated, login, st0 = true, loggedIn(a), *st
		if !st.Running {
			return nil
		}
		running = a.harness != nil && !a.harness.exited()
		exited = !running
		return nil
	})
	if err != nil || !dedicated {
		return nil, err
	}
	hc := func(name, status, code string) compute.Check {
		c := check(ComponentHarness, name, status, code)
		if m, ok := harnessMessages[code]; ok {
			c.Message = m
		}
		return c
	}
	out := make([]compute.Check, 0, 3)
	switch {
	case running:
		out = append(out, hc(CheckProcess, gateway.CheckSucceeded, CodeOK))
	case exited:
		out = append(out, hc(CheckProcess, gateway.CheckFailed, CodeProcessExited))
	default:
		out = append(out, hc(CheckProcess, gateway.CheckUnknown, CodeUnavailable))
	}
	if login {
		out = append(out, hc(CheckLogin, gateway.CheckSucceeded, CodeOK))
	} else {
		out = append(out, hc(CheckLogin, gateway.CheckFailed, CodeNotLoggedIn))
	}
	switch {
	case running && appServerReady(&st0):
		out = append(out, hc(CheckAppServer, gateway.CheckSucceeded, CodeOK))
	case running:
		out = append(out, hc(CheckAppServer, gateway.CheckFailed, CodeNotReady))
	default:
		out = append(out, hc(CheckAppServer, gateway.CheckUnknown, CodeUnavailable))
	}
	return out, nil
}

func check(component, name, status, code string) compute.Check {
	return compute.CheckWith(diagMessages, component, name, status, code)
}

// Diagnose checks the revision's gateway afresh: the process, /healthz,
// /startupz, /readyz and, when the configuration has channels.slack, the
// three Slack checks from channels.status (with the gateway's provider
// probe, which sends no message). When the Agent's gateway does not run the
// revision every check is unknown (the Slack ones too while the Agent's
// configuration is still that revision's, as after a stop).
func (d *Driver) Diagnose(ctx context.Context, rev compute.RevisionRef) (compute.Diagnosis, error) {
	if err := rev.Validate(); err != nil {
		return compute.Diagnosis{}, err
	}
	checks, err := d.diagnose(ctx, rev)
	if err != nil {
		return compute.Diagnosis{}, err
	}
	harness, err := d.diagnoseHarness(rev)
	if err != nil {
		return compute.Diagnosis{}, err
	}
	checks = append(checks, harness...)
	return compute.Diagnosis{RevisionID: rev.RevisionID, Checks: checks}, nil
}

func (d *Driver) diagnose(ctx context.Context, rev compute.RevisionRef) ([]compute.Check, error) {
	var t target
	var running, exited, slack bool
	err := d.withAgent(rev.AgentRef, false, func(a *agent, st *runState) error {
		if st == nil || st.RevisionID != rev.RevisionID {
			return nil
		}
		// openclaw.json is this revision's configuration.
		if doc, err := readConfig(a.dir); err == nil {
			slack = compute.WantsSlack(doc)
		}
		if !st.Running {
			return nil
		}
		if a.proc == nil || a.proc.exited() {
			exited = true
			return nil
		}
		running = true
		t = targetOf(a, st)
		return nil
	})
	if err != nil {
		return nil, err
	}
	unknown := func(component string, names ...string) []compute.Check {
		var out []compute.Check
		for _, n := range names {
			out = append(out, check(component, n, gateway.CheckUnknown, CodeUnavailable))
		}
		return out
	}
	var out []compute.Check
	switch {
	case exited:
		out = append(out, check(ComponentGateway, CheckProcess, gateway.CheckFailed, CodeProcessExited))
	case running:
		out = append(out, check(ComponentGateway, CheckProcess, gateway.CheckSucceeded, CodeOK))
	default:
		out = append(out, unknown(ComponentGateway, CheckProcess)...)
	}
	if !running {
		out = append(out, unknown(ComponentGateway, CheckHealthz, CheckStartupz, CheckReadyz)...)
		if slack {
			out = append(out, compute.UnknownSlackChecks(check)...)
		}
		return out, nil
	}

	ctx, cancel := context.WithTimeout(ctx, diagnoseTimeout)
	defer cancel()
	pctx, pcancel := context.WithTimeout(ctx, probeTimeout)
	h, perr := gateway.Probe(pctx, t.httpURL())
	pcancel()
	out = append(out, compute.ProbeChecks(h, perr, func(name, status, code string) compute.Check {
		return check(ComponentGateway, name, status, code)
	})...)
	if !slack {
		return out, nil
	}

	return append(out, compute.SlackChecks(ctx, t.dialOptions(), h.Failing, probeTimeout, check)...), nil
}
