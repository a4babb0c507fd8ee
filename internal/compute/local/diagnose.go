package local

import (
	"context"
	"errors"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
)

// Diagnostics components, checks and codes of the local driver.
const (
	// ComponentGateway checks: CheckProcess, CheckHealthz, CheckStartupz,
	// CheckReadyz.
	ComponentGateway = "gateway"
	CheckProcess     = "process"
	CheckHealthz     = "healthz"
	CheckStartupz    = "startupz"
	CheckReadyz      = "readyz"
	// ComponentSlack checks, present when the configuration has
	// channels.slack: CheckConfiguration, CheckAuthentication,
	// CheckConnectivity (derived from channels.status; no message is sent).
	ComponentSlack      = "slack"
	CheckConfiguration  = "configuration"
	CheckAuthentication = "authentication"
	CheckConnectivity   = "connectivity"

	// CodeOK goes with every succeeded check.
	CodeOK = "OK"
	// CodeUnavailable: the check could not be made (no process, no answer).
	CodeUnavailable = "UNAVAILABLE"
	// CodeProcessExited: the gateway of the revision should run and does
	// not (it exited; a supervised one is restarted with backoff).
	CodeProcessExited = "PROCESS_EXITED"
	// CodeNotLive, CodeNotStarted, CodeNotReady: a probe route answered,
	// but not 200.
	CodeNotLive    = "NOT_LIVE"
	CodeNotStarted = "NOT_STARTED"
	CodeNotReady   = "NOT_READY"
	// CodeSlackNotConfigured, CodeSlackAuthFailed, CodeSlackDisconnected:
	// the failed Slack checks.
	CodeSlackNotConfigured = "SLACK_NOT_CONFIGURED"
	CodeSlackAuthFailed    = "SLACK_AUTHENTICATION_FAILED"
	CodeSlackDisconnected  = "SLACK_DISCONNECTED"
)

// diagMessages are the fixed messages of each code (nothing the gateway
// said is passed on).
var diagMessages = map[string]string{
	CodeOK:                 "The check succeeded.",
	CodeUnavailable:        "The gateway of this revision is not running or did not answer.",
	CodeProcessExited:      "The gateway process of this revision should run and does not.",
	CodeNotLive:            "The gateway does not report itself live.",
	CodeNotStarted:         "The gateway is still starting.",
	CodeNotReady:           "The gateway reports a failing component.",
	CodeSlackNotConfigured: "Slack is not configured on the gateway.",
	CodeSlackAuthFailed:    "Slack rejected the configured tokens.",
	CodeSlackDisconnected:  "The Slack connection is down.",
	CodeNotLoggedIn:        "The harness's Codex home holds no login.",
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
	return compute.Check{Component: component, Check: name, Status: status, Code: code, Message: diagMessages[code]}
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
			ch, _ := doc["channels"].(map[string]any)
			_, slack = ch["slack"]
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
			out = append(out, unknown(ComponentSlack, CheckConfiguration, CheckAuthentication, CheckConnectivity)...)
		}
		return out, nil
	}

	ctx, cancel := context.WithTimeout(ctx, diagnoseTimeout)
	defer cancel()
	pctx, pcancel := context.WithTimeout(ctx, probeTimeout)
	h, perr := gateway.Probe(pctx, t.httpURL())
	pcancel()
	answered := perr == nil || errors.Is(perr, gateway.ErrNotReady)
	probe := func(name string, ok, reached bool, failCode string) compute.Check {
		switch {
		case ok:
			return check(ComponentGateway, name, gateway.CheckSucceeded, CodeOK)
		case answered && reached:
			return check(ComponentGateway, name, gateway.CheckFailed, failCode)
		default:
			return check(ComponentGateway, name, gateway.CheckUnknown, CodeUnavailable)
		}
	}
	// Probe stops at the first route that is not satisfied: a later route
	// was reached only if the earlier ones passed.
	out = append(out,
		probe(CheckHealthz, h.Live, true, CodeNotLive),
		probe(CheckStartupz, h.Started, h.Live, CodeNotStarted),
		probe(CheckReadyz, h.Ready, h.Started, CodeNotReady))
	if !slack {
		return out, nil
	}

	c, err := gateway.Dial(ctx, t.dialOptions())
	if err != nil {
		return append(out, unknown(ComponentSlack, CheckConfiguration, CheckAuthentication, CheckConnectivity)...), nil
	}
	defer c.Close()
	cs, err := c.ChannelsStatus(ctx, gateway.ChannelsStatusOptions{Probe: true, Timeout: probeTimeout})
	if err != nil {
		return append(out, unknown(ComponentSlack, CheckConfiguration, CheckAuthentication, CheckConnectivity)...), nil
	}
	s := cs.Slack(h.Failing)
	verdict := func(name, status, failCode string) compute.Check {
		switch status {
		case gateway.CheckSucceeded:
			return check(ComponentSlack, name, status, CodeOK)
		case gateway.CheckFailed:
			return check(ComponentSlack, name, status, failCode)
		default:
			return check(ComponentSlack, name, gateway.CheckUnknown, CodeUnavailable)
		}
	}
	return append(out,
		verdict(CheckConfiguration, s.Configuration, CodeSlackNotConfigured),
		verdict(CheckAuthentication, s.Authentication, CodeSlackAuthFailed),
		verdict(CheckConnectivity, s.Connectivity, CodeSlackDisconnected)), nil
}
