package local_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestRealDedicatedCodexLane is the real lane of dedicated Codex: the
// pinned runtime with its Codex pieces (installed once per machine into the
// runtime cache), the real local driver, and a fake OpenAI Responses API on
// loopback. Through the HTTP API it deploys a dedicated api_key Agent: the
// real Codex CLI logs in with the key and probes the model against the
// fake provider, the real app-server listens with a capability token, the
// real gateway installs the official codex plugin and connects to it; the
// deployment succeeds, and neither the gateway's environment nor its
// openclaw.json holds the key. A second Agent whose key the provider
// rejects fails with RUNTIME_AUTHENTICATION_FAILED before any gateway
// starts. It asserts no timing; it logs how long the deploy took.
func TestRealDedicatedCodexLane(t *testing.T) {
	t.Parallel()
	cache := servertest.RuntimeWithCodex(t)

	prov := startResponsesProvider(t)
	events := &servertest.EventLog{Min: slog.LevelDebug}
	root := gatewaytest.ReachableDir(t)
	ld, err := local.Open(local.Options{Root: root, Command: local.InstalledRuntime(cache), Harness: local.InstalledHarness(cache, nil),
		UIDRange: servertest.GatewayUIDs(t), Logger: slog.New(events)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopEveryAgent(t, ld, root, events) })
	drv := &servertest.TimedDriver{Driver: ld}
	e := servertest.Boot(t, storetest.URL(t, "sqlite"), drv, func(m *server.Main) {
		m.Config.Worker.ConvergenceTimeout = config.Duration(15 * time.Minute)
	})
	ns := e.CreateNamespace("real-dedicated")
	w := &servertest.RealWorld{T: t, E: e, Ns: ns, Drv: drv, Events: events}

	newDedicated := func(name, key string) string { return w.NewDedicatedAgent(name, key, prov.URL+"/v1") }

	t.Run("api-key-succeeds", func(t *testing.T) {
		w := w.WithT(t)
		key := "sk-good-" + servertest.RandomHex(8)
		agent := newDedicated("codex", key)
		ref := compute.AgentRef{NamespaceID: ns, AgentID: agent}
		dir := drv.AgentDir(ref)
		requested := time.Now()
		rev, _ := w.Deploy(agent)
		st, at := w.WaitDeployment(agent, rev, 15*time.Minute)
		if st["status"] != "succeeded" {
			dumpDedicated(t, dir)
			t.Fatalf("dedicated deployment = %v; provider saw %v", st, prov.Requests())
		}
		t.Logf("dedicated deploy: succeeded %s after the request", at.Sub(requested).Round(time.Millisecond))
		if prov.Count(key) == 0 {
			t.Fatalf("the provider never saw the harness's key: %v", prov.Requests())
		}
		gws := servertest.ProcessesWithEnv(t, "OPENCLAW_STATE_DIR="+filepath.Join(dir, "state"))
		if len(gws) == 0 {
			t.Fatal("no gateway process after success")
		}
		for _, pid := range gws {
			env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
			if err != nil {
				continue // a child that ended meanwhile
			}
			if strings.Contains(string(env), key) {
				t.Fatalf("gateway process %d holds the model key in its environment", pid)
			}
		}
		if b, err := os.ReadFile(filepath.Join(dir, gateway.ConfigFileName)); err != nil || strings.Contains(string(b), key) {
			t.Fatalf("openclaw.json: %v, or it holds the model key", err)
		}
		if os.Geteuid() == 0 {
			// The real Codex ran as a second user of the Agent: its login
			// is that user's, not the gateway's.
			var login, gw syscall.Stat_t
			if err := syscall.Stat(filepath.Join(dir, "harness", "codex", "auth.json"), &login); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Stat(fmt.Sprintf("/proc/%d", gws[0]), &gw); err != nil {
				t.Fatal(err)
			}
			if login.Uid == 0 || login.Uid == gw.Uid || login.Mode&0o077 != 0 {
				t.Fatalf("the harness's auth.json is uid %d mode %o; the gateway runs as %d: want a user of its own, 0600", login.Uid, login.Mode&0o777, gw.Uid)
			}
		}
		w.CodexConnected(agent, rev, filepath.Join(dir, "console.log"), "harness/process")
	})

	t.Run("rejected-key-fails-authentication", func(t *testing.T) {
		w := w.WithT(t)
		agent := newDedicated("codex-bad", "sk-bad-"+servertest.RandomHex(8))
		ref := compute.AgentRef{NamespaceID: ns, AgentID: agent}
		dir := drv.AgentDir(ref)
		rev, _ := w.Deploy(agent)
		st, _ := w.WaitDeployment(agent, rev, 10*time.Minute)
		er, _ := st["error"].(map[string]any)
		if st["status"] != "failed" || er["code"] != "RUNTIME_AUTHENTICATION_FAILED" {
			dumpDedicated(t, dir)
			t.Fatalf("dedicated deployment with a rejected key = %v; provider saw %v", st, prov.Requests())
		}
		if pids := servertest.ProcessesWithEnv(t, "OPENCLAW_STATE_DIR="+filepath.Join(dir, "state")); len(pids) != 0 {
			t.Fatalf("a gateway runs (%v) although its harness was rejected", pids)
		}
	})
}

func dumpDedicated(t *testing.T, dir string) {
	for _, name := range []string{"run.json", "harness.log", "console.log", "console.prev.log"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		if len(b) > 8000 {
			b = b[len(b)-8000:]
		}
		t.Logf("%s:\n%s", name, b)
	}
}

func startResponsesProvider(t *testing.T) *servertest.ResponsesProvider {
	return servertest.StartResponsesProviderOn(t, "127.0.0.1:0")
}
