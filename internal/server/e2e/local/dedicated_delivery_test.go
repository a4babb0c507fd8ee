package local_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/credgateway/credgatewaytest"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestDedicatedCodexCredentialSourceEndToEnd (fake lane): through the HTTP
// API, a dedicated Agent bound to a Credential Source deploys on the real
// local driver with the fake Codex CLI and the fake Credential Gateway:
// the worker asks the gateway for a delivery, the harness logs in with the
// gateway's placeholder and its model probe reaches the gateway's relay,
// which inserts the source's credential. The credential is in no
// response, log, audit event, nor in the harness's login, the gateway's
// environment or its openclaw.json (the placeholder is in neither of the
// gateway's). A source whose credential the provider rejects fails the
// deployment with RUNTIME_AUTHENTICATION_FAILED before any gateway starts.
func TestDedicatedCodexCredentialSourceEndToEnd(t *testing.T) {
	t.Parallel()
	cgw := credgatewaytest.New(t)
	logs := &servertest.LockedBuffer{}
	root := gatewaytest.ReachableDir(t)
	gw := servertest.FakeGatewayBinary(t)
	ld, err := local.Open(local.Options{Root: root, Command: local.BinaryCommand(gw), Harness: local.BinaryHarness(gatewaytest.BuildCodexBinary(t), gw),
		UIDRange: servertest.GatewayUIDs(t), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopEveryAgent(t, ld, root, &servertest.EventLog{}) })
	e := servertest.Boot(t, storetest.URL(t, "sqlite"), ld, servertest.RecordLogs(logs), func(m *server.Main) { m.Config.CredentialGateway.URL = cgw.URL })
	d := &servertest.DeployWorld{AgentWorld: &servertest.AgentWorld{E: e, Ns: e.CreateNamespace("codex-sources")}}
	d.Cfg = e.Call("POST", d.Path("/configurations"), e.Admin, map[string]any{"name": "c", "kind": "agent", "values": map[string]any{
		"agents": map[string]any{"defaults": map[string]any{"model": map[string]any{"primary": "openai/gpt-5.4"}}}}}).Data()["id"].(string)

	sourceAgent := func(name, credential string) string {
		sec := d.NewSecret(t, name, credential)
		r := e.Call("POST", d.Path("/credential-sources"), e.Admin, map[string]any{"name": name, "type": "openai",
			"secrets": map[string]any{"api_key": map[string]any{"kind": "secret", "namespaceId": d.Ns, "id": sec}}})
		if r.Status != 201 {
			t.Fatalf("credential source = %d %v", r.Status, r.Body)
		}
		r = d.Create(e.Admin, map[string]any{"name": name, "executionMode": "dedicated",
			"harnessAuth": map[string]any{"method": "credential_source", "sourceId": r.Data()["id"]}})
		if r.Status != 201 {
			t.Fatalf("agent = %d %v", r.Status, r.Body)
		}
		return r.Data()["id"].(string)
	}

	canary := "sk-source-canary-" + servertest.RandomHex(8)
	agent := sourceAgent("good", canary)
	rev := d.Deploy(t, agent)
	if st := d.WaitDeployment(t, agent, rev); st["status"] != "succeeded" {
		t.Fatalf("deployment = %v", servertest.ToJSON(st))
	}
	if len(cgw.Relayed()) == 0 {
		t.Fatal("the harness's probe did not go through the gateway's relay")
	}
	for _, dl := range cgw.Deliveries() {
		if dl.NamespaceID != d.Ns || dl.AgentID != agent || dl.RevisionID != rev {
			t.Fatalf("a delivery for %+v; want the revision's only", dl)
		}
	}
	dir := ld.AgentDir(compute.AgentRef{NamespaceID: d.Ns, AgentID: agent})
	login, err := os.ReadFile(filepath.Join(dir, "harness", "codex", "auth.json"))
	if err != nil {
		t.Fatal(err)
	}
	placeholder := ""
	if i := strings.Index(string(login), "cgw-"); i >= 0 {
		placeholder = string(login[i : i+len("cgw-")+32])
	}
	if placeholder == "" || strings.Contains(string(login), canary) {
		t.Fatalf("the harness's login %s; want the gateway's placeholder only", login)
	}
	gws := servertest.ProcessesWithEnv(t, "OPENCLAW_STATE_DIR="+filepath.Join(dir, "state"))
	if len(gws) == 0 {
		t.Fatal("no gateway process after success")
	}
	for _, pid := range gws {
		env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
		if err == nil && (strings.Contains(string(env), canary) || strings.Contains(string(env), placeholder)) {
			t.Fatalf("gateway process %d holds the credential or the placeholder in its environment", pid)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, gateway.ConfigFileName)); err != nil || strings.Contains(string(b), canary) || strings.Contains(string(b), placeholder) {
		t.Fatalf("openclaw.json: %v, or it holds the credential or the placeholder", err)
	}
	for _, p := range []string{"/agents/" + agent, "/agents/" + agent + "/revisions/" + rev, "/agents/" + agent + "/deployments/" + rev} {
		if r := e.Call("GET", d.Path(p), e.Admin, nil); strings.Contains(servertest.ToJSON(r.Body), canary) || strings.Contains(servertest.ToJSON(r.Body), placeholder) {
			t.Fatalf("GET %s shows the credential or the placeholder", p)
		}
	}
	servertest.NoCanaryAtRest(t, e, logs, canary)
	servertest.NoCanaryAtRest(t, e, logs, placeholder)

	bad := sourceAgent("bad", "sk-rejected-"+servertest.RandomHex(8))
	rev = d.Deploy(t, bad)
	st := d.WaitDeployment(t, bad, rev)
	if er, _ := st["error"].(map[string]any); st["status"] != "failed" || er["code"] != "RUNTIME_AUTHENTICATION_FAILED" {
		t.Fatalf("a source the provider rejects: %v", servertest.ToJSON(st))
	}
	badDir := ld.AgentDir(compute.AgentRef{NamespaceID: d.Ns, AgentID: bad})
	if pids := servertest.ProcessesWithEnv(t, "OPENCLAW_STATE_DIR="+filepath.Join(badDir, "state")); len(pids) != 0 {
		t.Fatalf("a gateway runs (%v) although its harness was rejected", pids)
	}
}
