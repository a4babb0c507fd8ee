package local_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/occ"
)

func TestNamespacesOnlyDriverRefusesRevisions(t *testing.T) {
	d, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.PrepareRevision(context.Background(), newSpec(newAgent(t, d), 1))
	if compute.PermanentCode(err) != "RUNTIME_NOT_CONFIGURED" {
		t.Fatalf("PrepareRevision without a command = %v; want RUNTIME_NOT_CONFIGURED", err)
	}
}

func TestRuntimeNotInstalledIsRetryable(t *testing.T) {
	d, _ := open(t, "", func(o *local.Options) { o.Command = local.InstalledRuntime(t.TempDir()) })
	ag := newAgent(t, d)
	_, err := d.PrepareRevision(context.Background(), newSpec(ag, 1))
	if err == nil || compute.PermanentCode(err) != "" || !strings.Contains(err.Error(), "occ runtime install") {
		t.Fatalf("PrepareRevision without an installed runtime = %v; want a retryable error", err)
	}
	if pids := gatewayPIDs(d, ag); len(pids) != 0 {
		t.Fatalf("processes %v", pids)
	}
}

// TestGatewayEnvironment: the gateway's environment is the revision's plus
// what occ owns (a revision cannot override it), nothing inherited. (That a
// secret reaches the gateway and never the disk is the conformance suite's
// Isolation obligation.)
func TestGatewayEnvironment(t *testing.T) {
	d, _ := open(t, "")
	ag := newAgent(t, d)
	secret := canary(t)
	spec := newSpec(ag, 1)
	spec.Env = map[string]string{"OCC_TEST_SECRET": secret, "HOME": "/override", "OPENCLAW_GATEWAY_TOKEN": "override"}
	ready(t, d, spec)

	env := environ(t, onlyPID(t, d, ag))
	dir := d.AgentDir(ag)
	ep, _ := d.GatewayEndpoint(context.Background(), ag)
	want := map[string]string{
		"OCC_TEST_SECRET":        secret,
		"HOME":                   filepath.Join(dir, "home"),
		"OPENCLAW_CONFIG_PATH":   filepath.Join(dir, "openclaw.json"),
		"OPENCLAW_STATE_DIR":     filepath.Join(dir, "state"),
		"OPENCLAW_GATEWAY_TOKEN": ep.Token,
		"OPENCLAW_NO_RESPAWN":    "1",
		"OPENCLAW_SKIP_CHANNELS": "1",
	}
	// As root the gateway's own user cannot write openclaw.json, and the
	// gateway is told so; not root it can, as before.
	if os.Geteuid() == 0 {
		want["OPENCLAW_CONFIG_READONLY"] = "1"
	} else if _, ok := env["OPENCLAW_CONFIG_READONLY"]; ok {
		t.Error("gateway env has OPENCLAW_CONFIG_READONLY; occ is not root, the gateway may write its configuration")
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("gateway env %s = %q; want %q", k, env[k], v)
		}
	}
	for k := range env {
		if k != "PATH" && k != "OCC_TEST_SECRET" && !strings.HasPrefix(k, "OPENCLAW_") && k != "HOME" {
			t.Errorf("gateway env has %s, inherited or unexpected", k)
		}
	}
}

// TestModelProbeHeld: the startup model probe's failures are held
// (reference/flows.md §6, §13.4): no answer within ModelProbeTimeout or a
// "timeout" status, and any other failed status with that status as the
// cause; a working credential is then ready. (A rejected credential is the
// conformance suite's Readiness obligation.)
func TestModelProbeHeld(t *testing.T) {
	d, _ := open(t, "", func(o *local.Options) { o.ModelProbeTimeout = 2 * time.Second })
	ag := newAgent(t, d)
	n := int64(0)
	for _, c := range []struct {
		name  string
		env   map[string]string
		code  string
		cause *compute.FailureCause
	}{
		{"no answer in time", map[string]string{"FAKEGATEWAY_MODEL_PROBE_DELAY": "30s"}, compute.HeldModelProbeTimeout, nil},
		{"timeout status", map[string]string{"FAKEGATEWAY_MODEL_PROBE": "timeout"}, compute.HeldModelProbeTimeout, nil},
		{"rate limited", map[string]string{"FAKEGATEWAY_MODEL_PROBE": "rate_limit"}, compute.HeldModelProbeFailed,
			&compute.FailureCause{Kind: "PROBE_STATUS", Detail: "rate_limit"}},
		{"billing", map[string]string{"FAKEGATEWAY_MODEL_PROBE": "billing"}, compute.HeldModelProbeFailed,
			&compute.FailureCause{Kind: "PROBE_STATUS", Detail: "billing"}},
	} {
		n++
		spec := newSpec(ag, n)
		spec.Document = modelDoc
		spec.Env = with(map[string]string{"FAKEPROV_API_KEY": "sk-" + c.name}, c.env)
		r := prepareUntil(t, d, spec, c.name, func(r compute.Readiness) bool { return r.Held })
		rf := r.RuntimeFailure
		if r.Ready || rf == nil || rf.Component != compute.HeldComponent || rf.Check != compute.HeldCheckModelProbe || rf.Code != c.code ||
			rf.CheckedAt.IsZero() || !reflect.DeepEqual(rf.Cause, c.cause) {
			t.Fatalf("%s: readiness = %+v, failure %+v; want held %s cause %+v", c.name, r, rf, c.code, c.cause)
		}
	}

	n++
	ok := newSpec(ag, n)
	ok.Document = modelDoc
	ok.Env = map[string]string{"FAKEPROV_API_KEY": "sk-good", "FAKEGATEWAY_MODEL_AUTH": "ok"}
	ready(t, d, ok)
}

func TestPluginWarnings(t *testing.T) {
	d, _ := open(t, "")
	ag := newAgent(t, d)
	spec := newSpec(ag, 1)
	spec.Env = map[string]string{"FAKEGATEWAY_PLUGIN_WARNINGS": "beta:auth_required,acme:install_failed"}
	r := ready(t, d, spec)
	want := []compute.Warning{{Code: "PLUGIN_INSTALL_FAILED", PluginID: "acme"}, {Code: "PLUGIN_AUTH_REQUIRED", PluginID: "beta"}}
	if !slices.Equal(r.Warnings, want) {
		t.Fatalf("warnings = %+v; want %+v", r.Warnings, want)
	}
}

// TestReadoptionSkipsTheModelProbe: the startup model probe calls the
// model provider (billable) once per gateway process. A driver that
// re-adopts that running process after an occ restart checks its health
// and identity only; a gateway that is started anew is probed again.
func TestReadoptionSkipsTheModelProbe(t *testing.T) {
	root := gatewaytest.ReachableDir(t)
	d1, _ := open(t, root)
	ag := newAgent(t, d1)
	spec := newSpec(ag, 1)
	spec.Document = modelDoc
	spec.Env = map[string]string{"FAKEPROV_API_KEY": "sk-good", "FAKEGATEWAY_MODEL_AUTH": "ok"}
	ready(t, d1, spec)
	ready(t, d1, spec)
	if n := modelProbes(t, d1, ag); n != 1 {
		t.Fatalf("model probes after the first start = %d; want 1", n)
	}
	w1 := workloadID(t, onlyPID(t, d1, ag))
	d1.Close() // occ stops; the gateway keeps running

	d2, _ := open(t, root)
	if err := d2.Adopt(context.Background()); err != nil {
		t.Fatal(err)
	}
	ready(t, d2, spec)
	if w := workloadID(t, onlyPID(t, d2, ag)); w != w1 {
		t.Fatalf("the reopened driver replaced the gateway: %s, then %s", w1, w)
	}
	if n := modelProbes(t, d2, ag); n != 1 {
		t.Fatalf("model probes after re-adoption = %d; want still 1 (no provider call on an occ restart)", n)
	}

	// A new revision starts a new gateway process: it is probed.
	next := newSpec(ag, 2)
	next.Document, next.Env = spec.Document, spec.Env
	ready(t, d2, next)
	if n := modelProbes(t, d2, ag); n != 1 {
		t.Fatalf("model probes of the new gateway = %d; want 1", n)
	}
}

// modelProbes counts the provider calls the running gateway of the Agent
// logged (the fake gateway logs each models.probe it answers).
func modelProbes(t *testing.T, d *local.Driver, ag compute.AgentRef) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.AgentDir(ag), "console.log"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "model probe of provider fakeprov")
}

// TestRuntimeInstallNamesItsPhaseAndCause: on a machine without the runtime
// the first deploy installs it in the background; meanwhile the revision
// is pending RUNTIME_INSTALLING with the install's phase, and a failed
// install fails it with a code that names the cause: no npm, or npm failing
// in a phase.
func TestRuntimeInstallNamesItsPhaseAndCause(t *testing.T) {
	failing := t.TempDir()
	if err := os.WriteFile(filepath.Join(failing, "npm"), []byte("#!/bin/sh\necho 'npm error network unreachable' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path, code string
		data             map[string]any
	}{
		{"no npm", t.TempDir(), occ.DeployRuntimeNPMNotFound, nil},
		{"npm fails", failing, occ.DeployRuntimeInstallFailed, map[string]any{"phase": occ.InstallPhaseResolving}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("PATH", c.path)
			d, _ := open(t, "", func(o *local.Options) { o.Command = local.InstallingRuntime(t.TempDir(), nil) })
			spec := newSpec(newAgent(t, d), 1)
			r, err := d.PrepareRevision(context.Background(), spec)
			if err != nil || r.Ready || r.PendingReason != occ.PendingRuntimeInstalling || r.Install == nil || r.Install.Phase == "" {
				t.Fatalf("first PrepareRevision = %+v, %v; want pending %s with the install's phase", r, err, occ.PendingRuntimeInstalling)
			}
			deadline := time.Now().Add(waitFor)
			for err == nil && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
				r, err = d.PrepareRevision(context.Background(), spec)
				if err == nil && r.PendingReason != occ.PendingRuntimeInstalling {
					t.Fatalf("PrepareRevision = %+v; want pending %s until the install ends", r, occ.PendingRuntimeInstalling)
				}
			}
			if code := compute.PermanentCode(err); code != c.code || !reflect.DeepEqual(compute.PermanentData(err), c.data) {
				t.Fatalf("PrepareRevision after the install = %v (code %q, data %v); want %s with data %v", err, code, compute.PermanentData(err), c.code, c.data)
			}
		})
	}
}
