package local_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/occ"
)

// The dedicated Codex lane on fakes: the fake Codex CLI (login, probe,
// capability-token app-server) and the fake gateway (codex plugin install,
// WebSocket settings checked against the app-server at start).

// openDedicated is open with the fake Codex harness.
func openDedicated(t *testing.T, tune ...func(*local.Options)) (*local.Driver, *events) {
	t.Helper()
	return open(t, "", append([]func(*local.Options){func(o *local.Options) {
		o.Harness = local.BinaryHarness(fakeCodex, fakeGateway)
	}}, tune...)...)
}

// dedicatedSpec is a dedicated revision whose harness gets env.
func dedicatedSpec(ag compute.AgentRef, n int64, env map[string]string) compute.RevisionSpec {
	spec := newSpec(ag, n)
	spec.ExecutionMode = occ.ExecutionDedicated
	spec.HarnessEnv = env
	spec.Document = computetest.FakeDedicatedDocument()
	return spec
}

// harnessPIDs lists the live processes of the Agent's harness.
func harnessPIDs(d *local.Driver, ag compute.AgentRef) []int {
	return local.ProcessesWithEnv("CODEX_HOME=" + filepath.Join(d.AgentDir(ag), "harness", "codex"))
}

func codexFile(t *testing.T, d *local.Driver, ag compute.AgentRef, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.AgentDir(ag), "harness", "codex", name))
	if err != nil {
		t.Fatalf("read the harness's %s: %v", name, err)
	}
	return string(b)
}

func TestDedicatedCapabilitiesDeclareCodexOnlyWithHarness(t *testing.T) {
	plain, _ := open(t, "")
	needs := occ.RevisionNeeds{ExecutionMode: occ.ExecutionDedicated, HarnessAuthMethod: occ.HarnessAPIKey}
	if r := plain.Capabilities().Refusal("local", needs); r == nil || r.Code != occ.DeployExecutionModeUnsupported {
		t.Fatalf("a driver without a harness: refusal of dedicated = %+v, want %s", r, occ.DeployExecutionModeUnsupported)
	}
	d, _ := openDedicated(t)
	for _, m := range []string{occ.HarnessAPIKey, occ.HarnessCodexPAT, occ.HarnessChatGPTServiceAccount, occ.HarnessCredentialSource} {
		if r := d.Capabilities().Refusal("local", occ.RevisionNeeds{ExecutionMode: occ.ExecutionDedicated, HarnessAuthMethod: m}); r != nil {
			t.Errorf("dedicated with %s refused: %+v", m, r)
		}
	}
	// The host's own login (runtime) is never a dedicated harness's.
	r := d.Capabilities().Refusal("local", occ.RevisionNeeds{ExecutionMode: occ.ExecutionDedicated, HarnessAuthMethod: occ.HarnessRuntime})
	if r == nil || r.Code != occ.DeployHarnessAuthUnsupported || r.Path != "/harnessAuth/method" {
		t.Errorf("dedicated with %s: refusal %+v, want %s", occ.HarnessRuntime, r, occ.DeployHarnessAuthUnsupported)
	}
}

func TestDedicatedCodexAPIKeyReachesOnlyTheHarness(t *testing.T) {
	d, _ := openDedicated(t)
	ag := newAgent(t, d)
	key := "sk-" + canary(t)
	spec := dedicatedSpec(ag, 1, map[string]string{"OPENAI_API_KEY": key})
	spec.Env = map[string]string{"OTHER_SECRET": "gateway-only"}
	if r := ready(t, d, spec); r.RuntimeFailure != nil {
		t.Fatalf("ready with a failure: %+v", r.RuntimeFailure)
	}

	// The harness logged in with the key, and probed the primary model
	// through the document's OpenAI base URL.
	if a := codexFile(t, d, ag, "auth.json"); !strings.Contains(a, key) || !strings.Contains(a, `"api_key"`) {
		t.Fatalf("the harness's login = %s, want the api key", a)
	}
	args := codexFile(t, d, ag, "exec.args")
	for _, want := range []string{`openai_base_url="http://127.0.0.1:9/v1"`, "--model\ngpt-5.4", "--sandbox\nread-only"} {
		if !strings.Contains(args, want) {
			t.Errorf("the model probe's arguments %q lack %q", args, want)
		}
	}
	// The gateway reached the app-server with the per-startup token.
	if c := codexFile(t, d, ag, "connections"); !strings.Contains(c, "ok") || strings.Contains(c, "rejected") {
		t.Fatalf("app-server connections = %q", c)
	}

	gw := onlyPID(t, d, ag)
	genv := environ(t, gw)
	for k, v := range genv {
		if strings.Contains(v, key) {
			t.Fatalf("the gateway's environment holds the model key in %s", k)
		}
	}
	if _, ok := genv["OPENAI_API_KEY"]; ok {
		t.Fatal("the gateway's environment has OPENAI_API_KEY")
	}
	token := genv[gateway.CodexTokenEnv]
	if len(token) != 64 || genv["OTHER_SECRET"] != "gateway-only" {
		t.Fatalf("the gateway's environment: token %q, OTHER_SECRET %q", token, genv["OTHER_SECRET"])
	}
	cfg, err := os.ReadFile(filepath.Join(d.AgentDir(ag), gateway.ConfigFileName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg), key) || strings.Contains(string(cfg), token) {
		t.Fatal("the gateway's openclaw.json holds the model key or the app-server token")
	}
	var doc map[string]any
	if err := json.Unmarshal(cfg, &doc); err != nil {
		t.Fatal(err)
	}
	as := doc["plugins"].(map[string]any)["entries"].(map[string]any)["codex"].(map[string]any)["config"].(map[string]any)["appServer"].(map[string]any)
	if as["transport"] != "websocket" || !strings.HasPrefix(as["url"].(string), "ws://127.0.0.1:") || as["authToken"] != "${CODEX_APP_SERVER_TOKEN}" {
		t.Fatalf("appServer settings = %v", as)
	}
	rt := doc["agents"].(map[string]any)["defaults"].(map[string]any)["models"].(map[string]any)["openai/gpt-5.4"].(map[string]any)["agentRuntime"]
	if rt.(map[string]any)["id"] != "codex" {
		t.Fatalf("agentRuntime of the primary model = %v", rt)
	}

	hp := harnessPIDs(d, ag)
	if len(hp) != 1 {
		t.Fatalf("harness processes %v, want one", hp)
	}
	for k, v := range environ(t, hp[0]) {
		if strings.Contains(v, key) {
			t.Fatalf("the running app-server's environment holds the key in %s (login read it on stdin)", k)
		}
	}

	diag, err := d.Diagnose(context.Background(), spec.RevisionRef)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range diag.Checks {
		got[c.Component+"/"+c.Check] = c.Code
	}
	for _, k := range []string{"harness/process", "harness/login", "harness/app-server", "gateway/process", "gateway/readyz"} {
		if got[k] != local.CodeOK {
			t.Errorf("diagnosis %s = %q, want OK (all: %v)", k, got[k], got)
		}
	}

	if err := d.StopAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	if p := append(gatewayPIDs(d, ag), harnessPIDs(d, ag)...); len(p) != 0 {
		t.Fatalf("processes %v after StopAgent", p)
	}
	diag, err = d.Diagnose(context.Background(), spec.RevisionRef)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range diag.Checks {
		if c.Component == local.ComponentHarness && c.Check == local.CheckProcess && c.Status != gateway.CheckUnknown {
			t.Fatalf("harness process after the stop = %+v", c)
		}
	}
	// Started again: the login kept in the Agent's Codex home serves.
	ready(t, d, dedicatedSpec(ag, 2, map[string]string{"OPENAI_API_KEY": key}))
	if err := d.DeleteAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	if p := append(gatewayPIDs(d, ag), harnessPIDs(d, ag)...); len(p) != 0 {
		t.Fatalf("processes %v after DeleteAgent", p)
	}
}

func TestDedicatedCodexPATUsesAccessTokenLogin(t *testing.T) {
	d, _ := openDedicated(t)
	ag := newAgent(t, d)
	tok := "at-" + canary(t)
	spec := dedicatedSpec(ag, 1, map[string]string{"CODEX_ACCESS_TOKEN": tok})
	ready(t, d, spec)
	if a := codexFile(t, d, ag, "auth.json"); !strings.Contains(a, tok) || !strings.Contains(a, `"access_token"`) {
		t.Fatalf("the harness's login = %s, want the access token", a)
	}
	for k, v := range environ(t, onlyPID(t, d, ag)) {
		if strings.Contains(v, tok) {
			t.Fatalf("the gateway's environment holds the token in %s", k)
		}
	}
	b, _ := os.ReadFile(filepath.Join(d.AgentDir(ag), gateway.ConfigFileName))
	if strings.Contains(string(b), tok) {
		t.Fatal("openclaw.json holds the token")
	}
}

// heldDedicated prepares a dedicated revision whose harness must fail and
// returns the held answer; no gateway ever starts, and asking again gives
// the same answer.
func heldDedicated(t *testing.T, d *local.Driver, env map[string]string) compute.Readiness {
	t.Helper()
	ag := newAgent(t, d)
	spec := dedicatedSpec(ag, 1, env)
	r, err := d.PrepareRevision(context.Background(), spec)
	if err != nil || !r.Held || r.RuntimeFailure == nil || r.RuntimeFailure.Component != compute.HeldComponent {
		t.Fatalf("PrepareRevision = %+v %v, want a held harness failure", r, err)
	}
	if p := gatewayPIDs(d, ag); len(p) != 0 {
		t.Fatalf("a gateway started (%v) although its harness failed", p)
	}
	again, err := d.PrepareRevision(context.Background(), spec)
	if err != nil || !again.Held || again.RuntimeFailure.Code != r.RuntimeFailure.Code {
		t.Fatalf("asked again: %+v %v, want the same held failure", again, err)
	}
	return r
}

func TestDedicatedCodexRejectedCredentialIsHeldAuthenticationFailed(t *testing.T) {
	d, _ := openDedicated(t)
	for _, secret := range []map[string]string{
		{"OPENAI_API_KEY": "sk-rejected-" + canary(t)},     // 401
		{"OPENAI_API_KEY": "sk-forbidden-" + canary(t)},    // 403
		{"CODEX_ACCESS_TOKEN": "at-rejected-" + canary(t)}, // 401 for a PAT
		{"CODEX_ACCESS_TOKEN": "at-revoked-" + canary(t)},  // 401 at the login
		{"CODEX_ACCESS_TOKEN": "not-a-token-" + canary(t)}, // no Codex access token
	} {
		r := heldDedicated(t, d, secret)
		if rf := r.RuntimeFailure; rf.Code != compute.HeldAuthenticationFailed || rf.Check != compute.HeldCheckModelCredential {
			t.Errorf("%v: failure %+v, want %s", secret, rf, compute.HeldAuthenticationFailed)
		}
	}
}

func TestDedicatedCodexProbeFailureAndTimeoutAreHeld(t *testing.T) {
	d, _ := openDedicated(t)
	r := heldDedicated(t, d, map[string]string{"OPENAI_API_KEY": "sk-broken-" + canary(t)})
	if rf := r.RuntimeFailure; rf.Code != compute.HeldModelProbeFailed || rf.Cause == nil || rf.Cause.Detail != "other" {
		t.Fatalf("a failing provider: %+v", rf)
	}
	slow, _ := openDedicated(t, func(o *local.Options) { o.ModelProbeTimeout = time.Second })
	r = heldDedicated(t, slow, map[string]string{"OPENAI_API_KEY": "sk-slow-" + canary(t)})
	if rf := r.RuntimeFailure; rf.Code != compute.HeldModelProbeTimeout || rf.Check != compute.HeldCheckModelProbe {
		t.Fatalf("a provider that does not answer: %+v", rf)
	}
}

func TestDedicatedCodexHarnessCrashRestartsBoth(t *testing.T) {
	d, _ := openDedicated(t)
	ag := newAgent(t, d)
	spec := dedicatedSpec(ag, 1, map[string]string{"OPENAI_API_KEY": "sk-" + canary(t)})
	ready(t, d, spec)
	hp, gw := harnessPIDs(d, ag), onlyPID(t, d, ag)
	oldToken := environ(t, gw)[gateway.CodexTokenEnv]
	if err := syscall.Kill(hp[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, "both restarted", func() bool {
		h, g := harnessPIDs(d, ag), gatewayPIDs(d, ag)
		return len(h) == 1 && h[0] != hp[0] && len(g) == 1 && g[0] != gw
	})
	ready(t, d, spec)
	if tok := environ(t, onlyPID(t, d, ag))[gateway.CodexTokenEnv]; tok == "" || tok == oldToken {
		t.Fatal("the restarted gateway did not get the new app-server's token")
	}
	if c := codexFile(t, d, ag, "connections"); strings.Contains(c, "rejected") {
		t.Fatalf("a gateway used a stale token: %q", c)
	}
}

func TestDedicatedCodexSurvivesDriverRestart(t *testing.T) {
	root := ""
	d, _ := openDedicated(t)
	root = d.Root()
	ag := newAgent(t, d)
	spec := dedicatedSpec(ag, 1, map[string]string{"OPENAI_API_KEY": "sk-" + canary(t)})
	ready(t, d, spec)
	hp, gw := harnessPIDs(d, ag), onlyPID(t, d, ag)
	d.Close()

	d2, _ := open(t, root, func(o *local.Options) { o.Harness = local.BinaryHarness(fakeCodex, fakeGateway) })
	ready(t, d2, spec)
	if h := harnessPIDs(d2, ag); !slices.Equal(h, hp) || onlyPID(t, d2, ag) != gw {
		t.Fatalf("after re-adoption: harness %v gateway %v, want %v %d (re-adopted, not restarted)", h, gatewayPIDs(d2, ag), hp, gw)
	}
	if err := d2.StopAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	if p := append(gatewayPIDs(d2, ag), harnessPIDs(d2, ag)...); len(p) != 0 {
		t.Fatalf("processes %v after StopAgent by the new driver", p)
	}
}

// TestDedicatedPluginInstallFailureNamesThePlugin: a codex plugin that
// cannot be installed into the gateway fails the revision with
// PLUGIN_INSTALL_FAILED naming the plugin, not a generic retry.
func TestDedicatedPluginInstallFailureNamesThePlugin(t *testing.T) {
	failing := filepath.Join(gatewaytest.ReachableDir(t), "openclaw")
	if err := os.WriteFile(failing, []byte("#!/bin/sh\necho 'npm error 404 Not Found' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	d, _ := open(t, "", func(o *local.Options) { o.Harness = local.BinaryHarness(fakeCodex, failing) })
	spec := dedicatedSpec(newAgent(t, d), 1, map[string]string{"OPENAI_API_KEY": "sk-" + canary(t)})
	var err error
	deadline := time.Now().Add(waitFor)
	for err == nil && time.Now().Before(deadline) {
		_, err = d.PrepareRevision(context.Background(), spec)
		time.Sleep(50 * time.Millisecond)
	}
	want := map[string]any{"pluginId": "@openclaw/codex"}
	if code, data := compute.PermanentCode(err), compute.PermanentData(err); code != occ.DeployPluginInstallFailed || !reflect.DeepEqual(data, want) {
		t.Fatalf("PrepareRevision with a failing plugin install = %v (code %q, data %v); want %s with %v", err, code, data, occ.DeployPluginInstallFailed, want)
	}
}
