package docker_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/compute/docker"
	"github.com/openclaw/occ/internal/compute/docker/dockertest"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/occ"
)

// dedicatedSpec is revision n of a dedicated Agent whose harness gets env
// (RevisionSpec.HarnessEnv) and runs the primary model openai/gpt-5.4.
func dedicatedSpec(rev compute.RevisionRef, n int64, env map[string]string) compute.RevisionSpec {
	spec := specOf(rev, n)
	spec.ExecutionMode = occ.ExecutionDedicated
	spec.HarnessEnv = env
	spec.Document = computetest.FakeDedicatedDocument()
	return spec
}

// dedicatedAgent is a new dedicated revision, its Agent and Namespace
// deleted when the test ends.
func dedicatedAgent(t *testing.T, d *docker.Driver, env map[string]string) compute.RevisionSpec {
	t.Helper()
	rev := newRevision()
	t.Cleanup(func() {
		ctx := context.Background()
		_ = d.DeleteAgent(ctx, rev.AgentRef)
		_, _ = d.DeleteNamespace(ctx, compute.NamespaceRef{ID: rev.NamespaceID})
	})
	return dedicatedSpec(rev, 1, env)
}

// codexFile reads a file of the Agent's Codex home as the host sees the
// volume ("" when missing).
func codexFile(dd *dockertest.Daemon, ag compute.AgentRef, name string) string {
	b, _ := os.ReadFile(filepath.Join(dd.VolumeDir(docker.CodexVolumeName(ag)), "home", name))
	return string(b)
}

// inspectRaw is the engine's whole inspect of a container, or nil when it
// does not exist.
func inspectRaw(t *testing.T, dd *dockertest.Daemon, name string) []byte {
	t.Helper()
	status, b, err := dd.Do(http.MethodGet, "/containers/"+name+"/json", nil)
	if err != nil || status != http.StatusOK && status != http.StatusNotFound {
		t.Fatalf("inspect %s: %d %v %s", name, status, err, b)
	}
	if status == http.StatusNotFound {
		return nil
	}
	return b
}

// TestDedicatedCodexDeliveryReachesOnlyTheHarness: for every delivery
// method the credential reaches the harness's login (its Codex home) and
// nothing else: not the harness container's configuration (Env, Cmd,
// labels: everything the engine's inspect shows), not the gateway
// container's inspect, environment or rendered document. The gateway
// container gets the app-server's URL and token, and its fake codex plugin
// connected to the app-server with it.
func TestDedicatedCodexDeliveryReachesOnlyTheHarness(t *testing.T) {
	t.Parallel()
	dd := daemon(t)
	cases := []struct {
		name, secret string
		env          map[string]string
		args         []string // in the probe's recorded command line
	}{
		{name: "api_key", secret: "sk-dedicated-apikey-1f2e", env: map[string]string{compute.HarnessAPIKeyEnv: "sk-dedicated-apikey-1f2e"}},
		{name: "codex_pat", secret: "at-dedicated-pat-9c8d", env: map[string]string{compute.HarnessAccessTokenEnv: "at-dedicated-pat-9c8d"}},
		{name: "chatgpt_service_account", secret: "at-dedicated-sa-7b6a",
			env:  map[string]string{compute.HarnessAccessTokenEnv: "at-dedicated-sa-7b6a", compute.HarnessWorkspaceEnv: "ws-dedicated-42"},
			args: []string{`forced_chatgpt_workspace_id="ws-dedicated-42"`}},
		{name: "credential_source", secret: "sk-dedicated-placeholder-5d4c",
			env:  map[string]string{compute.HarnessAPIKeyEnv: "sk-dedicated-placeholder-5d4c", compute.HarnessBaseURLEnv: "http://credential-gateway.invalid/v1"},
			args: []string{`openai_base_url="http://credential-gateway.invalid/v1"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := open(t)
			spec := dedicatedAgent(t, d, tc.env)
			began := time.Now()
			if r := awaitReadiness(t, d, spec, isReady); !r.Ready {
				t.Fatalf("readiness: %+v", r)
			}
			t.Logf("dedicated %s Agent ready in %v", tc.name, time.Since(began).Round(time.Millisecond))
			ag := spec.AgentRef
			if got := codexFile(dd, ag, "auth.json"); !strings.Contains(got, tc.secret) {
				t.Errorf("the harness's login %q does not hold the credential", got)
			}
			for _, a := range tc.args {
				if got := codexFile(dd, ag, "exec.args"); !strings.Contains(got, a) {
					t.Errorf("the probe ran with %q; want %s", got, a)
				}
			}
			h, g := inspectRaw(t, dd, docker.HarnessName(ag)), inspectRaw(t, dd, docker.GatewayName(ag))
			if h == nil || g == nil {
				t.Fatalf("harness or gateway container missing")
			}
			for what, b := range map[string][]byte{"harness container": h, "gateway container": g, "rendered document": readConfig(t, dd, docker.GatewayName(ag))} {
				if strings.Contains(string(b), tc.secret) {
					t.Errorf("the %s holds the credential", what)
				}
			}
			var gc fullContainer
			_ = json.Unmarshal(g, &gc)
			env := map[string]string{}
			for _, kv := range gc.Config.Env {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
			if env[gateway.CodexTokenEnv] == "" || env[compute.HarnessAPIKeyEnv] != "" || env[compute.HarnessAccessTokenEnv] != "" {
				t.Errorf("gateway environment %v: want the app-server token, no model credential", gc.Config.Env)
			}
			// The harness's command line names the token's SHA-256 only
			// (its environment keeps the token for occ, as the gateway's).
			var hc fullContainer
			_ = json.Unmarshal(h, &hc)
			cmd := strings.Join(append(hc.Config.Entrypoint, hc.Config.Cmd...), " ")
			if tok := env[gateway.CodexTokenEnv]; !strings.Contains(cmd, sha256Hex(tok)) || strings.Contains(cmd, tok) || strings.Contains(string(mustJSON(hc.Config.Labels)), tok) {
				t.Errorf("the harness container's command line %q should carry the token's SHA-256 only", cmd)
			}
			var doc struct {
				Plugins struct {
					Entries map[string]struct {
						Config struct {
							AppServer struct{ Transport, URL, AuthToken string }
						}
					}
				}
			}
			_ = json.Unmarshal(readConfig(t, dd, docker.GatewayName(ag)), &doc)
			as := doc.Plugins.Entries["codex"].Config.AppServer
			if as.Transport != "websocket" || !strings.HasPrefix(as.URL, "ws://") || as.AuthToken != "${"+gateway.CodexTokenEnv+"}" {
				t.Errorf("rendered codex app-server settings %+v", as)
			}
			if got := codexFile(dd, ag, "connections"); !strings.Contains(got, "ok") {
				t.Errorf("the gateway never connected to the app-server with its token (connections %q)", got)
			}
		})
	}
}

// TestDedicatedCodexHeldFailures: a rejected credential (401 or 403 from
// the provider, a refused access token, one that is no Codex token) ends
// with the held AUTHENTICATION_FAILED (deployment
// RUNTIME_AUTHENTICATION_FAILED); a provider failure with
// MODEL_PROBE_FAILED, no answer with MODEL_PROBE_TIMEOUT. No gateway
// container is made, the harness container is removed, and the held
// answer is given again without a second login.
func TestDedicatedCodexHeldFailures(t *testing.T) {
	t.Parallel()
	dd := daemon(t)
	cases := []struct {
		name  string
		env   map[string]string
		code  string
		check string
	}{
		{"rejected", map[string]string{compute.HarnessAPIKeyEnv: "sk-rejected"}, compute.HeldAuthenticationFailed, compute.HeldCheckModelCredential},
		{"forbidden", map[string]string{compute.HarnessAPIKeyEnv: "sk-forbidden"}, compute.HeldAuthenticationFailed, compute.HeldCheckModelCredential},
		{"revoked token", map[string]string{compute.HarnessAccessTokenEnv: "at-revoked"}, compute.HeldAuthenticationFailed, compute.HeldCheckModelCredential},
		{"not a codex token", map[string]string{compute.HarnessAccessTokenEnv: "sk-not-a-token"}, compute.HeldAuthenticationFailed, compute.HeldCheckModelCredential},
		{"provider failure", map[string]string{compute.HarnessAPIKeyEnv: "sk-broken"}, compute.HeldModelProbeFailed, compute.HeldCheckModelProbe},
		{"probe timeout", map[string]string{compute.HarnessAPIKeyEnv: "sk-slow"}, compute.HeldModelProbeTimeout, compute.HeldCheckModelProbe},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := open(t, func(o *docker.Options) { o.ModelProbeTimeout = 5 * time.Second })
			spec := dedicatedAgent(t, d, tc.env)
			r := awaitReadiness(t, d, spec, func(r compute.Readiness) bool { return r.Held })
			rf := r.RuntimeFailure
			if !r.Held || rf == nil || rf.Code != tc.code || rf.Check != tc.check || rf.Component != compute.HeldComponent {
				t.Fatalf("readiness %+v (%+v); want held %s/%s", r, rf, tc.check, tc.code)
			}
			if inspectRaw(t, dd, docker.GatewayName(spec.AgentRef)) != nil || inspectRaw(t, dd, docker.HarnessName(spec.AgentRef)) != nil {
				t.Errorf("containers left for a held revision")
			}
			before := codexFile(dd, spec.AgentRef, "auth.json")
			if again, err := d.PrepareRevision(context.Background(), spec); err != nil || !again.Held || again.RuntimeFailure.Code != tc.code {
				t.Errorf("again: %+v, %v; want held %s", again, err, tc.code)
			}
			if inspectRaw(t, dd, docker.HarnessName(spec.AgentRef)) != nil || codexFile(dd, spec.AgentRef, "auth.json") != before {
				t.Errorf("held again logged in again")
			}
		})
	}
}

// TestDedicatedCodexStopReadoptDelete: a restarted occ (a new driver)
// keeps both containers and answers ready without a second login or
// probe; without its gateway container the harness goes on (no second
// login or probe) with a new gateway; stop removes both and keeps the
// volumes; the next start logs in again; delete leaves no container or
// volume of the Agent.
func TestDedicatedCodexStopReadoptDelete(t *testing.T) {
	t.Parallel()
	dd := daemon(t)
	obs := observer{d: dd}
	ctx := context.Background()
	d1 := open(t)
	spec := dedicatedAgent(t, d1, map[string]string{compute.HarnessAPIKeyEnv: "sk-dedicated-readopt"})
	ag := spec.AgentRef
	if r := awaitReadiness(t, d1, spec, isReady); !r.Ready {
		t.Fatalf("readiness: %+v", r)
	}
	ws := obs.Workloads(t, ag)
	probe, err := os.Stat(filepath.Join(dd.VolumeDir(docker.CodexVolumeName(ag)), "home", "exec.args"))
	if err != nil || len(ws) != 1 || !strings.Contains(ws[0], "+") {
		t.Fatalf("workloads %v, probe record %v; want one gateway+harness pair and a probe", ws, err)
	}

	d2 := open(t)
	if r, err := d2.PrepareRevision(ctx, spec); err != nil || !r.Ready {
		t.Fatalf("readiness after an occ restart: %+v, %v", r, err)
	}
	again, _ := os.Stat(filepath.Join(dd.VolumeDir(docker.CodexVolumeName(ag)), "home", "exec.args"))
	if got := obs.Workloads(t, ag); len(got) != 1 || got[0] != ws[0] || !again.ModTime().Equal(probe.ModTime()) {
		t.Fatalf("after an occ restart: workloads %v (were %v), probe at %v (was %v); want the same containers, no second probe",
			got, ws, again.ModTime(), probe.ModTime())
	}
	dg, err := d2.Diagnose(ctx, spec.RevisionRef)
	if err != nil {
		t.Fatal(err)
	}
	harness := map[string]string{}
	for _, c := range dg.Checks {
		if c.Component == compute.HarnessComponent {
			harness[c.Check] = c.Code
		}
	}
	if harness[docker.CheckContainer] != compute.CodeOK || harness[compute.HarnessCheckLogin] != compute.CodeOK || harness[compute.HarnessCheckAppServe] != compute.CodeOK {
		t.Errorf("harness checks %v; want container, login and app-server OK", harness)
	}

	// The gateway container gone (an occ that stopped after its harness
	// passed, or a create that timed out): the harness goes on, without a
	// second login or probe, and a new gateway is made for it.
	gwID, harnessID, _ := strings.Cut(ws[0], "+")
	dd.MustDo(t, http.MethodDelete, "/containers/"+gwID+"?force=1", nil, nil)
	if r := awaitReadiness(t, open(t), spec, isReady); !r.Ready {
		t.Fatalf("readiness without the gateway container: %+v", r)
	}
	got := obs.Workloads(t, ag)
	again, _ = os.Stat(filepath.Join(dd.VolumeDir(docker.CodexVolumeName(ag)), "home", "exec.args"))
	if len(got) != 1 || !strings.HasSuffix(got[0], "+"+harnessID) || strings.HasPrefix(got[0], gwID) || !again.ModTime().Equal(probe.ModTime()) {
		t.Fatalf("after the gateway was removed: workloads %v (were %v), probe at %v (was %v); want a new gateway for the same harness, no second probe",
			got, ws, again.ModTime(), probe.ModTime())
	}

	if err := d2.StopAgent(ctx, ag); err != nil {
		t.Fatal(err)
	}
	if got := obs.Workloads(t, ag); len(got) != 0 {
		t.Fatalf("workloads after stop: %v", got)
	}
	if len(obs.volumes(t, docker.LabelAgent+"="+ag.AgentID)) != 3 {
		t.Errorf("volumes after stop: %v; want state, workspace and codex kept", obs.volumes(t, docker.LabelAgent+"="+ag.AgentID))
	}
	if r := awaitReadiness(t, d2, spec, isReady); !r.Ready {
		t.Fatalf("readiness after stop: %+v", r)
	}
	if err := d2.DeleteAgent(ctx, ag); err != nil {
		t.Fatal(err)
	}
	if obs.AgentExists(t, ag) || obs.exists(t, "/volumes/"+docker.CodexVolumeName(ag)) {
		t.Errorf("the Agent's containers or volumes are left after delete")
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
