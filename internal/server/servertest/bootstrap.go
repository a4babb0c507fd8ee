package servertest

import (
	"context"
	"io"
	"log/slog"

	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/server"
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
