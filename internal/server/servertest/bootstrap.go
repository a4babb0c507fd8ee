package servertest

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/store/storetest"
)

// startMain starts occ on a data directory and database; opt (may be nil)
// adjusts it first.
func StartMain(dir, dbURL, role string, opt func(*server.Main), env ...string) (*server.Main, error) {
	cfg, err := config.Load(config.Source{Env: env, Flags: map[string]string{"dataDir": dir, "listen": "127.0.0.1:0",
		"databaseURL": dbURL, "worker.pollInterval": "20ms", "publicOrigin": Origin, "role": role}})
	if err != nil {
		return nil, err
	}
	m := &server.Main{Config: cfg, Out: io.Discard, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if opt != nil {
		opt(m)
	}
	return m, m.Start(context.Background())
}

// WantStart starts occ (role all, on SQLite, in a data directory gateways
// reach) with env added to its environment and wants it to start (want "")
// or to be refused with an error containing want: what a driver's start
// checks show the operator.
func WantStart(t *testing.T, want string, env ...string) {
	t.Helper()
	m, err := StartMain(gatewaytest.ReachableDir(t), storetest.URL(t, "sqlite"), "all", nil, env...)
	if m != nil {
		t.Cleanup(func() { m.Close() })
	}
	switch {
	case want == "" && err != nil:
		t.Fatalf("start: %v", err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Fatalf("start: %v, want a refusal containing %q", err, want)
	}
}
