package server_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestRestartResumesRunningAgents: after an occ restart, the active revision
// of an Agent desired running is prepared again (the driver re-adopts or
// restarts its gateway); the deployment result is untouched.
func TestRestartResumesRunningAgents(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, url string) {
		d := newDeployWorld(t, url)
		rev := d.deploy(t, d.agent)
		d.waitDeployment(t, d.agent, rev)
		// The gateway died while occ was down.
		d.fake.set(func(f *fakeCompute) { delete(f.running, d.agent) })
		cfg := *d.e.m.Config
		d.e.m.Close()
		re, err := config.Load(config.Source{Flags: map[string]string{"dataDir": cfg.DataDir, "listen": "127.0.0.1:0",
			"databaseURL": cfg.DatabaseURL, "worker.pollInterval": "20ms", "publicOrigin": origin}})
		if err != nil {
			t.Fatal(err)
		}
		m := &server.Main{Config: re, Driver: d.fake, Out: io.Discard, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		if err := m.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		waitFor(t, "the active revision prepared again", func() bool {
			running := ""
			d.fake.get(func(f *fakeCompute) { running = f.running[d.agent] })
			return running == rev
		})
		dep, err := m.Store().GetDeployment(context.Background(), d.ns, d.agent, rev)
		if err != nil || dep.Status != "succeeded" {
			t.Fatalf("deployment after restart = %+v, %v", dep, err)
		}
	})
}
