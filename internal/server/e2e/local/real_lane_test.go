package local_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/cachetest"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestRealOpenClawLane is the real lane of the deploy path: the pinned
// OpenClaw runtime (installed once per machine into OCC_TEST_RUNTIME_CACHE),
// occ on SQLite with the real local compute driver, and a fake
// OpenAI-compatible model provider on loopback that the gateway's
// models.probe calls. Through the HTTP API it deploys an Agent to succeeded,
// stops it, deploys it again, deletes it, and deploys a second Agent whose
// model credential the provider rejects (RUNTIME_AUTHENTICATION_FAILED). It
// logs how long the gateway took to start and how much of a deploy was
// occ's own work (docs/PERFORMANCE.md). It asserts no timing.
//
// A gateway takes 15-80 s to start (more on a busy machine) and about
// 1.3 GB of memory; the Agents run one after the other, and every wait is
// bounded in minutes.
func TestRealOpenClawLane(t *testing.T) {
	t.Parallel()
	cache := cachetest.Runtime(t)
	began := time.Now()
	rt, err := agentruntime.Install(t.Context(), agentruntime.Options{Dir: cache, Progress: servertest.LineLogger(t)})
	if err != nil {
		t.Fatalf("install the pinned runtime into %s: %v", cache, err)
	}
	t.Logf("runtime %s (node %s) ready in %s", rt.Dir, rt.NodeVersion, time.Since(began).Round(time.Millisecond))

	prov := servertest.StartFakeProvider(t)
	events := &servertest.EventLog{Min: slog.LevelDebug}
	root := gatewaytest.ReachableDir(t)
	ld, err := local.Open(local.Options{Root: root, Command: local.InstalledRuntime(cache), UIDRange: servertest.GatewayUIDs(t), Logger: slog.New(events)})
	if err != nil {
		t.Fatal(err)
	}
	// Registered before boot, so it runs after occ closed: occ's shutdown
	// never stops gateways, so stop whatever still runs (a failed test
	// must not leave 1 GB processes behind), then close the driver.
	t.Cleanup(func() { stopEveryAgent(t, ld, root, events) })
	drv := &servertest.TimedDriver{Driver: ld}
	serverLog := &servertest.EventLog{Min: slog.LevelWarn}
	e := servertest.Boot(t, storetest.URL(t, "sqlite"), drv, func(m *server.Main) {
		m.Config.Worker.ConvergenceTimeout = config.Duration(5 * time.Minute)
		m.Logger = slog.New(serverLog)
	})
	t.Cleanup(func() {
		if s := serverLog.String(); s != "" {
			t.Logf("occ warnings and errors:\n%s", s)
		}
	})

	ns := e.CreateNamespace("real")
	w := &servertest.RealWorld{T: t, E: e, Ns: ns, Drv: drv, Prov: prov, Events: events}
	canary := "sk-occ-real-lane-canary-" + servertest.RandomHex(8)
	r := e.Call("POST", w.Path("/secrets"), e.Admin, map[string]any{"name": "provider-key", "value": canary})
	if r.Status != 201 {
		t.Fatalf("create secret = %d %v", r.Status, r.Body)
	}
	w.Secret = r.Data()["id"].(string)

	t.Run("deploy-stop-redeploy-delete", func(t *testing.T) { w.WithT(t).Lifecycle(canary) })
	t.Run("rejected-model-credential", func(t *testing.T) { w.WithT(t).RejectedCredential() })
}

// stopEveryAgent stops whatever still runs under the local driver's root
// (a failed test must not leave 1 GB processes behind), closes the driver
// and logs its events.
func stopEveryAgent(t *testing.T, ld *local.Driver, root string, events *servertest.EventLog) {
	dirs, _ := filepath.Glob(filepath.Join(root, "namespaces", "*", "agents", "*"))
	for _, dir := range dirs {
		ref := compute.AgentRef{NamespaceID: filepath.Base(filepath.Dir(filepath.Dir(dir))), AgentID: filepath.Base(dir)}
		if err := ld.StopAgent(context.Background(), ref); err != nil {
			t.Errorf("cleanup: stop %s: %v", ref.AgentID, err)
		}
	}
	ld.Close()
	t.Logf("local driver events:\n%s", events)
}
