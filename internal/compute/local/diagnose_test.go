package local_test

import (
	"context"
	"maps"
	"testing"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/local"
)

// diagnose runs Diagnose and checks the answer names the revision asked for.
func diagnose(d *local.Driver, rev compute.RevisionRef) ([]compute.Check, error) {
	dg, err := d.Diagnose(context.Background(), rev)
	if err == nil && dg.RevisionID != rev.RevisionID {
		return nil, &wrongRevision{got: dg.RevisionID, want: rev.RevisionID}
	}
	return dg.Checks, err
}

type wrongRevision struct{ got, want string }

func (e *wrongRevision) Error() string { return "diagnosis of " + e.got + ", asked for " + e.want }

// slackDoc configures Slack with both tokens from the environment.
var slackDoc = map[string]any{"channels": map[string]any{"slack": map[string]any{
	"enabled": true, "mode": "socket", "botToken": "${SLACK_BOT_TOKEN}", "appToken": "${SLACK_APP_TOKEN}"}}}

// slackEnv is the environment of slackDoc with the fake's Slack mode.
func slackEnv(mode string) map[string]string {
	return map[string]string{"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1", "FAKEGATEWAY_SLACK": mode}
}

// Each check as "component/check" → "status CODE", and every message fixed.
func verdicts(t *testing.T, checks []compute.Check) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, c := range checks {
		if c.Message == "" {
			t.Errorf("check %s/%s has no message", c.Component, c.Check)
		}
		m[c.Component+"/"+c.Check] = c.Status + " " + c.Code
	}
	if len(m) != len(checks) {
		t.Errorf("repeated checks: %+v", checks)
	}
	return m
}

var (
	gatewayOK = map[string]string{
		"gateway/process": "succeeded OK", "gateway/healthz": "succeeded OK", "gateway/startupz": "succeeded OK", "gateway/readyz": "succeeded OK"}
	gatewayUnknown = map[string]string{
		"gateway/process": "unknown UNAVAILABLE", "gateway/healthz": "unknown UNAVAILABLE", "gateway/startupz": "unknown UNAVAILABLE", "gateway/readyz": "unknown UNAVAILABLE"}
	slackUnknown = map[string]string{
		"slack/configuration": "unknown UNAVAILABLE", "slack/authentication": "unknown UNAVAILABLE", "slack/connectivity": "unknown UNAVAILABLE"}
)

// with returns the union of the maps, later ones winning.
func with(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		maps.Copy(out, m)
	}
	return out
}

func wantVerdicts(t *testing.T, what string, checks []compute.Check, err error, want map[string]string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got := verdicts(t, checks); !maps.Equal(got, want) {
		t.Fatalf("%s: checks\n%v\nwant\n%v", what, got, want)
	}
}

// TestDiagnoseWithoutWorkload: an Agent never prepared, and a stopped one,
// give exactly the local checks, unknown (the Slack ones too while its
// configuration is the revision's), never an error.
func TestDiagnoseWithoutWorkload(t *testing.T) {
	d, _ := open(t, "")
	ag := newAgent(t, d)
	never := newSpec(ag, 1)
	checks, err := diagnose(d, never.RevisionRef)
	wantVerdicts(t, "never prepared", checks, err, gatewayUnknown)

	spec := newSpec(ag, 2)
	spec.Document, spec.Env = slackDoc, slackEnv("ok")
	ready(t, d, spec)
	checks, err = diagnose(d, spec.RevisionRef)
	wantVerdicts(t, "running", checks, err, with(gatewayOK, map[string]string{
		"slack/configuration": "succeeded OK", "slack/authentication": "succeeded OK", "slack/connectivity": "succeeded OK"}))
	if err := d.StopAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	checks, err = diagnose(d, spec.RevisionRef)
	wantVerdicts(t, "stopped", checks, err, with(gatewayUnknown, slackUnknown))
}

// TestDiagnoseProbes: a process that does not listen yet, one still
// starting, and one whose process exited.
func TestDiagnoseProbes(t *testing.T) {
	d, _ := open(t, "")

	// The process runs but its port is closed: nothing answered.
	ag := newAgent(t, d)
	silent := newSpec(ag, 1)
	silent.Document = slackDoc
	silent.Env = with(slackEnv("ok"), map[string]string{"FAKEGATEWAY_LISTEN_DELAY": "10m"})
	prepareUntil(t, d, silent, "started", func(r compute.Readiness) bool { return r.PendingReason == local.PendingStarting })
	checks, err := diagnose(d, silent.RevisionRef)
	wantVerdicts(t, "not listening", checks, err, with(gatewayUnknown, slackUnknown, map[string]string{"gateway/process": "succeeded OK"}))

	// Live but still starting: /startupz fails, /readyz was not reached,
	// the WebSocket refuses connections (Slack unknown).
	ag = newAgent(t, d)
	starting := newSpec(ag, 1)
	starting.Document = slackDoc
	starting.Env = with(slackEnv("ok"), map[string]string{"FAKEGATEWAY_STARTUP_DELAY": "10m"})
	prepareUntil(t, d, starting, "started", func(r compute.Readiness) bool { return r.PendingReason == local.PendingStarting })
	eventually(t, "the gateway listening", func() bool {
		checks, err = diagnose(d, starting.RevisionRef)
		return err == nil && verdicts(t, checks)["gateway/healthz"] == "succeeded OK"
	})
	wantVerdicts(t, "starting", checks, err, with(slackUnknown, map[string]string{
		"gateway/process": "succeeded OK", "gateway/healthz": "succeeded OK", "gateway/startupz": "failed NOT_STARTED", "gateway/readyz": "unknown UNAVAILABLE"}))

	// The process exited (a configuration the gateway refuses): failed
	// process, nothing else known.
	ag = newAgent(t, d)
	exited := newSpec(ag, 1)
	exited.Document = withDoc(slackDoc, map[string]any{"bogusKey": true})
	exited.Env = slackEnv("ok")
	prepareUntil(t, d, exited, "a runtime failure", func(r compute.Readiness) bool { return r.RuntimeFailure != nil })
	checks, err = diagnose(d, exited.RevisionRef)
	wantVerdicts(t, "exited", checks, err, with(gatewayUnknown, slackUnknown, map[string]string{"gateway/process": "failed PROCESS_EXITED"}))
}

// withDoc is the union of two documents.
func withDoc(a, b map[string]any) map[string]any {
	out := map[string]any{}
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}

// TestDiagnoseSlackStates: Slack disconnected, and configured without its
// app token (a gateway that cannot be asked is TestDiagnoseProbes').
func TestDiagnoseSlackStates(t *testing.T) {
	d, _ := open(t, "")

	ag := newAgent(t, d)
	down := newSpec(ag, 1)
	down.Document, down.Env = slackDoc, slackEnv("disconnected")
	prepareUntil(t, d, down, "pending on Slack", func(r compute.Readiness) bool { return r.PendingReason == local.PendingUnavailable })
	checks, err := diagnose(d, down.RevisionRef)
	wantVerdicts(t, "disconnected", checks, err, with(gatewayOK, map[string]string{"gateway/readyz": "failed NOT_READY",
		"slack/configuration": "succeeded OK", "slack/authentication": "succeeded OK", "slack/connectivity": "failed SLACK_DISCONNECTED"}))

	ag = newAgent(t, d)
	half := newSpec(ag, 1)
	half.Document = map[string]any{"channels": map[string]any{"slack": map[string]any{"enabled": true, "botToken": "${SLACK_BOT_TOKEN}"}}}
	half.Env = slackEnv("ok")
	ready(t, d, half)
	checks, err = diagnose(d, half.RevisionRef)
	wantVerdicts(t, "no app token", checks, err, with(gatewayOK, slackUnknown, map[string]string{"slack/configuration": "failed SLACK_NOT_CONFIGURED"}))
}

func TestDiagnoseSlack(t *testing.T) {
	d, _ := open(t, "")
	slack := map[string]any{"channels": map[string]any{"slack": map[string]any{
		"enabled": true, "mode": "socket", "botToken": "${SLACK_BOT_TOKEN}", "appToken": "${SLACK_APP_TOKEN}"}}}
	env := func(mode string) map[string]string {
		return map[string]string{"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1", "FAKEGATEWAY_SLACK": mode}
	}
	status := func(checks []compute.Check) map[string]string {
		m := map[string]string{}
		for _, c := range checks {
			m[c.Component+"/"+c.Check] = c.Status + " " + c.Code
		}
		return m
	}

	ag := newAgent(t, d)
	good := newSpec(ag, 1)
	good.Document, good.Env = slack, env("ok")
	ready(t, d, good)
	if env := environ(t, onlyPID(t, d, ag)); env["OPENCLAW_SKIP_CHANNELS"] != "" {
		t.Fatal("channels skipped although Slack is configured")
	}
	checks, err := diagnose(d, good.RevisionRef)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range status(checks) {
		if v != "succeeded OK" {
			t.Errorf("check %s = %s; want succeeded", k, v)
		}
	}
	if len(checks) != 7 {
		t.Fatalf("%d checks: %+v", len(checks), checks)
	}

	bad := newSpec(ag, 2)
	bad.Document, bad.Env = slack, env("invalid_auth")
	r := prepareUntil(t, d, bad, "pending on Slack", func(r compute.Readiness) bool { return r.PendingReason == local.PendingUnavailable })
	if r.Ready || r.RuntimeFailure != nil {
		t.Fatalf("readiness = %+v", r)
	}
	checks, err = diagnose(d, bad.RevisionRef)
	if err != nil {
		t.Fatal(err)
	}
	got := status(checks)
	for k, v := range map[string]string{
		"gateway/process":      "succeeded OK",
		"gateway/healthz":      "succeeded OK",
		"gateway/readyz":       "failed NOT_READY",
		"slack/configuration":  "succeeded OK",
		"slack/authentication": "failed SLACK_AUTHENTICATION_FAILED",
		"slack/connectivity":   "failed SLACK_DISCONNECTED",
	} {
		if got[k] != v {
			t.Errorf("check %s = %q; want %q", k, got[k], v)
		}
	}
	// The superseded revision has no gateway: unknown.
	checks, err = diagnose(d, good.RevisionRef)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if c.Status != "unknown" {
			t.Fatalf("check of a superseded revision = %+v", c)
		}
	}
}
