package ssh_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/cachetest"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/ssh"
	"github.com/openclaw/occ/internal/compute/ssh/sshtest"
	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestRealOpenClawSSHLane is the real lane of the ssh driver: a real host
// (sshtest: its own systemd and sshd) with the pinned runtime
// (OCC_TEST_RUNTIME_CACHE) bound read-only into it, occ on SQLite with
// --compute ssh, and a fake model provider on loopback (the host shares
// this machine's network). The Agent's harness method is runtime: the
// operator writes the provider key into the Agent's environment file on
// the host before the first deploy; occ never holds it and runs no model
// probe (the seed). Through the HTTP API the Agent deploys to succeeded
// (the gateway's process readiness; its environment holds the operator's
// key, the provider saw no request), its workspace files are written and read live through
// occ (and are in its workspace on the host), it stops (unit inactive,
// tree kept), deploys again with its workspace, and is deleted (account,
// tree and unit gone from the host). No file occ wrote on the host (the
// unit, agent.json, the gateway token's file, the revision's
// openclaw.json) holds the operator's key. It asserts no timing.
// (internal/compute/ssh has no real-gateway test of its own: this lane is
// the one that starts OpenClaw on a host; the driver's obligations are
// proven there with the fake gateway.)
func TestRealOpenClawSSHLane(t *testing.T) {
	t.Parallel()
	cache := cachetest.Runtime(t)
	rt, err := agentruntime.Install(t.Context(), agentruntime.Options{Dir: cache, Progress: servertest.LineLogger(t)})
	if err != nil {
		t.Fatalf("install the pinned runtime into %s: %v", cache, err)
	}
	h := sshtest.Start(t, sshtest.BindReadOnly(cache))
	prov := gatewaytest.StartProvider(t, "127.0.0.1:0")
	const stateRoot = "/var/lib/occ-ssh"
	settings := config.SSHCompute{IdentityFile: h.IdentityFile, KnownHostsFile: h.KnownHostsFile,
		ConnectTimeout: config.Duration(10 * time.Second), OperationTimeout: config.Duration(3 * time.Minute),
		Hosts: map[string]config.SSHHost{"default": {Address: h.Address, Port: h.Port}, "real-ssh": {Address: h.Address, Port: h.Port}},
		Runtime: config.SSHRuntime{NodePath: rt.Node, OpenClawPath: rt.Entry(), User: "occ-agent", StateRoot: stateRoot,
			UnitDirectory: "/etc/systemd/system"},
		PortRange: config.SSHPortRange{Start: 17800, End: 17899}}
	serverLog := &servertest.EventLog{Min: slog.LevelInfo}
	e := servertest.Boot(t, storetest.URL(t, "sqlite"), nil, func(m *server.Main) {
		m.Config.Compute.Driver = "ssh"
		m.Config.Compute.SSH = settings
		m.Config.Worker.ConvergenceTimeout = config.Duration(8 * time.Minute)
		m.Logger = slog.New(serverLog)
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("occ's log:\n%s", serverLog)
		}
	})
	w := &servertest.RealWorld{T: t, E: e, Ns: e.CreateNamespace("real-ssh"), Prov: prov}

	// The Agent, on a Configuration whose provider key is a reference to
	// the gateway's environment, and the runtime harness method.
	doc := w.ProviderDocument("${FAKEPROV_API_KEY}")
	r := e.Call("POST", w.Path("/configurations"), e.Admin, map[string]any{"name": "ssh-bot", "kind": "agent", "values": doc})
	if r.Status != 201 {
		t.Fatalf("create configuration = %d %v", r.Status, r.Body)
	}
	r = e.Call("POST", w.Path("/agents"), e.Admin, map[string]any{"name": "bot", "configurationId": r.Data()["id"],
		"harnessAuth": map[string]any{"method": "runtime"}})
	if r.Status != 201 {
		t.Fatalf("create agent = %d %v", r.Status, r.Body)
	}
	agent := r.Data()["id"].(string)
	ref := compute.AgentRef{NamespaceID: w.Ns, AgentID: agent}
	paths, user := driverPaths(t, settings, ref)
	// The operator's part: the model key in the Agent's environment file.
	const key = "sk-good"
	if _, err := h.Run("mkdir -p " + paths.Dir + " && umask 077 && printf 'FAKEPROV_API_KEY=" + key + "\\n' > " + paths.Dir + "/env"); err != nil {
		t.Fatal(err)
	}

	// occ delivers no Secret to an SSH host: an Agent whose Configuration
	// binds one is refused at deploy, naming the setting, with nothing
	// admitted.
	r = e.Call("POST", w.Path("/secrets"), e.Admin, map[string]any{"name": "slack-token", "value": "xoxb-never-delivered"})
	if r.Status != 201 {
		t.Fatalf("create secret = %d %v", r.Status, r.Body)
	}
	r = e.Call("POST", w.Path("/configurations"), e.Admin, map[string]any{"name": "ssh-bound", "kind": "agent", "values": doc,
		"secretBindings": map[string]any{"SLACK_BOT_TOKEN": map[string]any{"source": map[string]any{"kind": "secret", "namespaceId": w.Ns, "id": r.Data()["id"]}}}})
	if r.Status != 201 {
		t.Fatalf("create configuration with a Secret binding = %d %v", r.Status, r.Body)
	}
	r = e.Call("POST", w.Path("/agents"), e.Admin, map[string]any{"name": "bound", "configurationId": r.Data()["id"],
		"harnessAuth": map[string]any{"method": "runtime"}})
	if r.Status != 201 {
		t.Fatalf("create agent = %d %v", r.Status, r.Body)
	}
	bound := r.Data()["id"].(string)
	r = e.Call("POST", w.Path("/agents/"+bound+"/deploy"), e.Admin, nil)
	if details, _ := r.Body["error"].(map[string]any)["details"].([]any); r.Status != 400 || len(details) != 1 ||
		details[0].(map[string]any)["code"] != "SECRET_ENVIRONMENT_UNSUPPORTED" || details[0].(map[string]any)["path"] != "/secretBindings" {
		t.Fatalf("deploy of an Agent whose Configuration binds a Secret = %d %v; want 400 SECRET_ENVIRONMENT_UNSUPPORTED at /secretBindings", r.Status, r.Body)
	}
	if r := e.Call("GET", w.Path("/agents/"+bound+"/revisions"), e.Admin, nil); r.Status != 200 || len(r.Body["data"].([]any)) != 0 {
		t.Fatalf("revisions after the refused deploy = %d %v; want none", r.Status, r.Body)
	}

	began := time.Now()
	rev1, _ := w.Deploy(agent)
	if st, _ := w.WaitDeployment(agent, rev1, 8*time.Minute); st["status"] != "succeeded" || st["error"] != nil {
		t.Fatalf("first deployment = %v; provider saw %v", st, prov.Requests())
	}
	t.Logf("revision 1 succeeded %s after the request", time.Since(began).Round(time.Millisecond))
	// The runtime method: occ ran no model probe (the seed), so the
	// provider saw nothing; the operator's key is in the gateway's
	// environment, from the host's file.
	if n := len(prov.Requests()); n != 0 {
		t.Errorf("the provider saw %d requests during a runtime-method deploy; want none (no model probe): %v", n, prov.Requests())
	}
	unit := ssh.UnitName(ref)
	if out, err := h.Run("systemctl is-active " + unit); err != nil || strings.TrimSpace(out) != "active" {
		t.Fatalf("unit %s: %q, %v", unit, out, err)
	}
	if out, err := h.Run("tr '\\0' '\\n' < /proc/$(systemctl show -p MainPID --value " + unit + ")/environ"); err != nil ||
		!strings.Contains("\n"+out, "\nFAKEPROV_API_KEY="+key+"\n") {
		t.Fatalf("the gateway's environment lacks the operator's key (%v)", err)
	}
	for _, f := range []string{"/etc/systemd/system/" + unit, paths.Dir + "/agent.json", paths.Dir + "/gateway-token.env", paths.Dir + "/revisions/" + rev1 + "/openclaw.json"} {
		b, err := os.ReadFile(filepath.Join(h.Root(), f))
		if err != nil || strings.Contains(string(b), key) {
			t.Fatalf("%s (a file occ wrote): %v, or it holds the operator's key", f, err)
		}
	}

	const initial = "Answer support questions.\n"
	if r := e.Call("PUT", w.Path("/agents/"+agent+"/workspace/files/AGENTS.md"), e.Admin, map[string]any{"content": initial}); r.Status != 200 {
		t.Fatalf("PUT AGENTS.md = %d %v", r.Status, r.Body)
	}
	w.LiveFiles(agent, filepath.Join(h.Root(), paths.Dir), initial)
	w.Diagnose(agent, rev1, "succeeded")
	logs := e.Call("GET", w.Path("/agents/"+agent+"/deployments/"+rev1+"/runtime/logs"), e.Admin, nil)
	if lines, _ := logs.Data()["lines"].([]any); logs.Status != 200 || logs.Data()["found"] != true || len(lines) == 0 {
		t.Fatalf("runtime logs = %d %v", logs.Status, logs.Body)
	}

	// Stop: the unit inactive, the tree kept.
	if r := e.Call("POST", w.Path("/agents/"+agent+"/stop"), e.Admin, nil); r.Status != 202 {
		t.Fatalf("stop = %d %v", r.Status, r.Body)
	}
	w.WaitUntil("activeRevisionId cleared", 2*time.Minute, func() bool { return w.AgentGET(agent).Data()["activeRevisionId"] == nil })
	if out, _ := h.Run("systemctl is-active " + unit + " || true"); strings.TrimSpace(out) != "inactive" {
		t.Fatalf("unit after stop: %q", out)
	}
	servertest.CheckWorkspaceFile(t, filepath.Join(h.Root(), paths.Dir), initial)

	// Deploy again: the workspace as it was.
	rev2, _ := w.Deploy(agent)
	if st, _ := w.WaitDeployment(agent, rev2, 8*time.Minute); st["status"] != "succeeded" {
		t.Fatalf("second deployment = %v", st)
	}
	servertest.CheckWorkspaceFile(t, filepath.Join(h.Root(), paths.Dir), initial)

	// Delete: 404, and nothing of the Agent on the host: its tree, its
	// unit, its account.
	if _, err := h.Run("getent passwd " + user); err != nil {
		t.Fatalf("the Agent's account %s before the deletion: %v", user, err)
	}
	if r := e.Call("DELETE", w.Path("/agents/"+agent), e.Admin, nil); r.Status != 202 {
		t.Fatalf("delete = %d %v", r.Status, r.Body)
	}
	w.WaitUntil("the Agent gone (404)", 3*time.Minute, func() bool { return w.AgentGET(agent).Status == 404 })
	for _, p := range []string{paths.Dir, "/etc/systemd/system/" + unit} {
		if _, err := os.Lstat(filepath.Join(h.Root(), p)); !os.IsNotExist(err) {
			t.Fatalf("%s left after the Agent's deletion: %v", p, err)
		}
	}
	if out, _ := h.Run("pgrep -af '[o]penclaw' || true"); strings.TrimSpace(out) != "" {
		t.Fatalf("gateway processes left after the deletion: %s", out)
	}
	if out, err := h.Run("getent passwd " + user + " || echo absent"); err != nil || strings.TrimSpace(out) != "absent" {
		t.Fatalf("the Agent's account after the deletion: %q, %v", out, err)
	}
}

// driverPaths are where the ssh driver keeps an Agent's files, and the
// Agent's account name.
func driverPaths(t *testing.T, s config.SSHCompute, ref compute.AgentRef) (ssh.AgentPaths, string) {
	t.Helper()
	d, err := ssh.New(ssh.Options{IdentityFile: s.IdentityFile, KnownHostsFile: s.KnownHostsFile,
		Hosts: map[string]ssh.Host{"x": {Address: "127.0.0.1", Port: 22, User: "root"}}, Command: []string{s.Runtime.NodePath, s.Runtime.OpenClawPath},
		UserPrefix: s.Runtime.User, StateRoot: s.Runtime.StateRoot, UnitDir: s.Runtime.UnitDirectory, PortStart: s.PortRange.Start, PortEnd: s.PortRange.End})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	return d.Paths(ref), d.User(ref)
}
