package compute

import (
	"context"
	"errors"
	"time"

	"github.com/openclaw/occ/internal/gateway"
)

// The checks of a gateway's own probe routes and their codes, the same for
// every driver (each driver gives the messages).
const (
	CheckHealthz  = "healthz"
	CheckStartupz = "startupz"
	CheckReadyz   = "readyz"

	// CodeOK goes with every succeeded check.
	CodeOK = "OK"
	// CodeUnavailable: the check could not be made (no workload, no
	// answer).
	CodeUnavailable = "UNAVAILABLE"
	// CodeNotLive, CodeNotStarted, CodeNotReady: a probe route answered,
	// but not 200.
	CodeNotLive    = "NOT_LIVE"
	CodeNotStarted = "NOT_STARTED"
	CodeNotReady   = "NOT_READY"
)

// ProbeChecks turns one gateway.Probe answer (h, err) into the healthz,
// startupz and readyz checks, made by check(name, status, code). Probe stops
// at the first route that is not satisfied: a later route was reached only
// if the earlier ones passed; one not reached, or no answer at all, is
// unknown.
func ProbeChecks(h gateway.Health, err error, check func(name, status, code string) Check) []Check {
	answered := err == nil || errors.Is(err, gateway.ErrNotReady)
	probe := func(name string, ok, reached bool, failCode string) Check {
		switch {
		case ok:
			return check(name, gateway.CheckSucceeded, CodeOK)
		case answered && reached:
			return check(name, gateway.CheckFailed, failCode)
		default:
			return check(name, gateway.CheckUnknown, CodeUnavailable)
		}
	}
	return []Check{
		probe(CheckHealthz, h.Live, true, CodeNotLive),
		probe(CheckStartupz, h.Started, h.Live, CodeNotStarted),
		probe(CheckReadyz, h.Ready, h.Started, CodeNotReady),
	}
}

// The Slack checks of a gateway whose configuration has channels.slack,
// derived from channels.status (with the gateway's provider probe, which
// sends no message), and the codes of the failed ones.
const (
	ComponentSlack      = "slack"
	CheckConfiguration  = "configuration"
	CheckAuthentication = "authentication"
	CheckConnectivity   = "connectivity"

	CodeSlackNotConfigured = "SLACK_NOT_CONFIGURED"
	CodeSlackAuthFailed    = "SLACK_AUTHENTICATION_FAILED"
	CodeSlackDisconnected  = "SLACK_DISCONNECTED"
)

// WantsSlack reports whether a configuration document has channels.slack.
func WantsSlack(doc map[string]any) bool {
	ch, _ := doc["channels"].(map[string]any)
	_, ok := ch["slack"]
	return ok
}

// UnknownSlackChecks are the three Slack checks when none can be made.
func UnknownSlackChecks(check func(component, name, status, code string) Check) []Check {
	var out []Check
	for _, n := range []string{CheckConfiguration, CheckAuthentication, CheckConnectivity} {
		out = append(out, check(ComponentSlack, n, gateway.CheckUnknown, CodeUnavailable))
	}
	return out
}

// SlackChecks asks a running gateway (dial) for channels.status with its
// provider probe, within probeTimeout, and derives the three Slack checks;
// readyFailing is what /readyz reported failing (gateway.Health.Failing). A
// gateway that cannot be asked gives unknown checks.
func SlackChecks(ctx context.Context, dial gateway.Options, readyFailing []string, probeTimeout time.Duration,
	check func(component, name, status, code string) Check) []Check {
	c, err := gateway.Dial(ctx, dial)
	if err != nil {
		return UnknownSlackChecks(check)
	}
	defer c.Close()
	cs, err := c.ChannelsStatus(ctx, gateway.ChannelsStatusOptions{Probe: true, Timeout: probeTimeout})
	if err != nil {
		return UnknownSlackChecks(check)
	}
	s := cs.Slack(readyFailing)
	verdict := func(name, status, failCode string) Check {
		switch status {
		case gateway.CheckSucceeded:
			return check(ComponentSlack, name, status, CodeOK)
		case gateway.CheckFailed:
			return check(ComponentSlack, name, status, failCode)
		default:
			return check(ComponentSlack, name, gateway.CheckUnknown, CodeUnavailable)
		}
	}
	return []Check{
		verdict(CheckConfiguration, s.Configuration, CodeSlackNotConfigured),
		verdict(CheckAuthentication, s.Authentication, CodeSlackAuthFailed),
		verdict(CheckConnectivity, s.Connectivity, CodeSlackDisconnected),
	}
}

// CheckMessage is the fixed message of a code shared by the drivers (nothing
// the gateway said is passed on), or "" for a code of a driver's own.
func CheckMessage(code string) string { return checkMessages[code] }

// CheckWith is a check whose message is code's fixed one: the driver's own
// (messages, which may be nil) first, else the shared one.
func CheckWith(messages map[string]string, component, name, status, code string) Check {
	msg, ok := messages[code]
	if !ok {
		msg = CheckMessage(code)
	}
	return Check{Component: component, Check: name, Status: status, Code: code, Message: msg}
}

var checkMessages = map[string]string{
	CodeOK:                 "The check succeeded.",
	CodeNotLive:            "The gateway does not report itself live.",
	CodeNotStarted:         "The gateway is still starting.",
	CodeNotReady:           "The gateway reports a failing component.",
	CodeSlackNotConfigured: "Slack is not configured on the gateway.",
	CodeSlackAuthFailed:    "Slack rejected the configured tokens.",
	CodeSlackDisconnected:  "The Slack connection is down.",
}
