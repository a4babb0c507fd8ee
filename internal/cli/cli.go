// Package cli is the occ command line: the server-side commands `occ serve`,
// `occ migrate`, `occ config validate`, `occ secrets rotate-key`,
// `occ runtime install` and `occ version`, and the client commands that talk
// to a running occ over its HTTP API (`occ namespaces|agents|deployments|
// configurations …`, `occ secrets create|list`; see api.go).
package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/config"
)

// Server is what the server-side commands run; cmd/occ supplies it, so this
// package never imports server-side code.
type Server struct {
	Serve   func(ctx context.Context, cfg *config.Config, log *slog.Logger, out io.Writer) error
	Migrate func(ctx context.Context, cfg *config.Config) error
	// RotateSecretsKey adds a key to the secrets keyset and re-encrypts
	// every Secret under it, writing a summary to out.
	RotateSecretsKey func(ctx context.Context, cfg *config.Config, out io.Writer) error
	// InstallRuntime installs the pinned agent runtime (OpenClaw and
	// Node.js) into the configured runtime directory, or finds it there,
	// writing progress lines to progress.
	InstallRuntime func(ctx context.Context, cfg *config.Config, progress io.Writer) error
	Version        string
}

// Main runs the command line and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer, srv Server) int {
	root := &cobra.Command{Use: "occ", Short: "occ, the OpenClaw Enterprise control plane", SilenceUsage: true, SilenceErrors: true}
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(serveCmd(stdout, srv), migrateCmd(srv), configCmd(stdout), secretsCmd(stdout, srv), runtimeCmd(stdout, srv), versionCmd(stdout, srv))
	addClientCommands(root, ioStreams{In: os.Stdin, Out: stdout, ErrOut: stderr}, os.Getenv)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(stderr, "occ:", err)
		return 1
	}
	return 0
}

// serverFlags are the settings a first run needs, each also an OCC_*
// variable and a configuration key.
type serverFlags struct {
	file  string
	flags map[string]*string
}

var flagKeys = []struct{ flag, key, usage string }{
	{"data-dir", "dataDir", "data directory (OCC_DATA_DIR, default ./occ-data)"},
	{"listen", "listen", "API listen address (OCC_LISTEN, default 127.0.0.1:8080)"},
	{"database-url", "databaseURL", "sqlite://PATH or postgres://… (OCC_DATABASE_URL)"},
	{"compute", "compute.driver", "compute driver: local, ssh, docker, kubernetes (OCC_COMPUTE)"},
	{"runtime-dir", "runtimeDir", "where the pinned Node.js and OpenClaw live (OCC_RUNTIME_DIR)"},
	{"role", "role", "all, api or worker (OCC_ROLE)"},
}

func (f *serverFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.file, "config", os.Getenv("OCC_CONFIG"), "installation configuration file (OCC_CONFIG)")
	f.flags = map[string]*string{}
	for _, k := range flagKeys {
		f.flags[k.key] = cmd.Flags().String(k.flag, "", k.usage)
	}
}

func (f *serverFlags) load(cmd *cobra.Command) (*config.Config, error) {
	set := map[string]string{}
	for _, k := range flagKeys {
		if cmd.Flags().Changed(k.flag) {
			set[k.key] = *f.flags[k.key]
		}
	}
	return config.Load(config.Source{File: f.file, Env: os.Environ(), Flags: set})
}

func logger(cfg *config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.Logging.Level))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.Logging.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func serveCmd(stdout io.Writer, srv Server) *cobra.Command {
	var f serverFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the API and the worker (embedded SQLite and local compute by default)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.load(cmd)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return srv.Serve(ctx, cfg, logger(cfg, os.Stderr), stdout)
		},
	}
	f.register(cmd)
	return cmd
}

func migrateCmd(srv Server) *cobra.Command {
	var f serverFlags
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply database migrations and exit",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.load(cmd)
			if err != nil {
				return err
			}
			return srv.Migrate(cmd.Context(), cfg)
		},
	}
	f.register(cmd)
	return cmd
}

func configCmd(stdout io.Writer) *cobra.Command {
	var f serverFlags
	validate := &cobra.Command{
		Use:   "validate",
		Short: "Check the installation configuration without starting",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := f.load(cmd); err != nil {
				return err
			}
			fmt.Fprintln(stdout, "configuration is valid")
			return nil
		},
	}
	f.register(validate)
	cmd := &cobra.Command{Use: "config", Short: "Installation configuration"}
	cmd.AddCommand(validate)
	return cmd
}

func secretsCmd(stdout io.Writer, srv Server) *cobra.Command {
	var f serverFlags
	rotate := &cobra.Command{
		Use:   "rotate-key",
		Short: "Add a new primary key to the secrets keyset and re-encrypt every Secret (servers keep running)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.load(cmd)
			if err != nil {
				return err
			}
			if srv.RotateSecretsKey == nil {
				return fmt.Errorf("this build cannot rotate the secrets key")
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return srv.RotateSecretsKey(ctx, cfg, stdout)
		},
	}
	f.register(rotate)
	cmd := &cobra.Command{Use: "secrets", Short: "Secrets at rest"}
	cmd.AddCommand(rotate)
	return cmd
}

func runtimeCmd(stdout io.Writer, srv Server) *cobra.Command {
	var f serverFlags
	install := &cobra.Command{
		Use:   "install",
		Short: "Install the pinned OpenClaw and Node.js from the npm registry into the runtime directory (reused when present)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.load(cmd)
			if err != nil {
				return err
			}
			if srv.InstallRuntime == nil {
				return fmt.Errorf("this build cannot install the agent runtime")
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return srv.InstallRuntime(ctx, cfg, stdout)
		},
	}
	f.register(install)
	cmd := &cobra.Command{Use: "runtime", Short: "The agent runtime the local compute driver runs"}
	cmd.AddCommand(install)
	return cmd
}

func versionCmd(stdout io.Writer, srv Server) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run:   func(*cobra.Command, []string) { fmt.Fprintln(stdout, "occ", srv.Version) },
	}
}
