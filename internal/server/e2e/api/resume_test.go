package api_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestRestartResumesRunningAgents: after an occ restart, the active revision
// of an Agent desired running is prepared again (the driver re-adopts or
// restarts its gateway); the deployment result is untouched.
func TestRestartResumesRunningAgents(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		d := newDeployWorld(t, url)
		rev := d.Deploy(t, d.Agent)
		d.WaitDeployment(t, d.Agent, rev)
		// The gateway died while occ was down.
		d.Fake.Set(func(f *servertest.FakeCompute) { delete(f.Running, d.Agent) })
		cfg := *d.E.M.Config
		d.E.M.Close()
		re, err := config.Load(config.Source{Flags: map[string]string{"dataDir": cfg.DataDir, "listen": "127.0.0.1:0",
			"databaseURL": cfg.DatabaseURL, "worker.pollInterval": "20ms", "publicOrigin": servertest.Origin}})
		if err != nil {
			t.Fatal(err)
		}
		m := &server.Main{Config: re, Driver: d.Fake, Out: io.Discard, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		if err := m.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		servertest.WaitFor(t, "the active revision prepared again", func() bool {
			running := ""
			d.Fake.Get(func(f *servertest.FakeCompute) { running = f.Running[d.Agent] })
			return running == rev
		})
		dep, err := m.Store().GetDeployment(context.Background(), d.Ns, d.Agent, rev)
		if err != nil || dep.Status != "succeeded" {
			t.Fatalf("deployment after restart = %+v, %v", dep, err)
		}
	})
}
