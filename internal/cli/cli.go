// Package cli is the occ command line: the server-side commands `occ serve`,
// `occ migrate`, `occ config validate`, `occ secrets rotate-key`,
// `occ runtime install` and `occ version`, and the client commands that talk
// to a running occ over its HTTP API: `occ login`, `occ context`, the nouns
// (namespaces, secrets, configurations, presets, service-accounts,
// credential-sources, service-keys, agents, deployments, workspace, iam,
// audit) with the same verbs, and `occ completion` (see api.go). Output
// formats are decided in output.go, exit codes in exit.go.
package cli

import (
	"context"
	"errors"
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
	Serve func(ctx context.Context, cfg *config.Config, log *slog.Logger, out io.Writer) error
	// Migrate applies the database migrations, naming each it applied on
	// out.
	Migrate func(ctx context.Context, cfg *config.Config, out io.Writer) error
	// RotateSecretsKey adds a key to the secrets keyset and re-encrypts
	// every Secret under it, writing a summary to out.
	RotateSecretsKey func(ctx context.Context, cfg *config.Config, out io.Writer) error
	// InstallRuntime installs the pinned agent runtime (OpenClaw and
	// Node.js) into the configured runtime directory, or finds it there,
	// writing progress lines to progress.
	InstallRuntime func(ctx context.Context, cfg *config.Config, progress io.Writer) error
	// BuildImage builds the OpenClaw gateway image from the installed
	// runtime (or, with o.OCC, the image of occ itself), writes or pushes
	// it as o says, writing progress lines to progress and the result
	// (name, digest, size, where it went) to out.
	BuildImage func(ctx context.Context, cfg *config.Config, o ImageBuild, out, progress io.Writer) error
	// ImportSecretsKeyset copies the keyset file from into the configured
	// secrets.keysetFile (mode 0600), saying what it did on out.
	ImportSecretsKeyset func(ctx context.Context, cfg *config.Config, from string, out io.Writer) error
	// CreateSecretsKeyset writes a new keyset file at path (never over
	// an existing one), saying what it did on out.
	CreateSecretsKeyset func(path string, out io.Writer) error
	Version             string
}

// ImageBuild is what `occ runtime image build` asks for.
type ImageBuild struct {
	// OCC builds occ's own image from OCCBinary (empty: the running
	// executable) instead of the gateway image.
	OCC       bool
	OCCBinary string
	// Output is an OCI layout directory, or a tarball when it ends in
	// .tar; Push a registry reference. At least one is set.
	Output string
	Push   string
	// Load is the Engine API address (unix:///path or tcp://host:port)
	// of a Docker engine or Podman service to load the image into.
	Load string
	// Name is the image's name in the output (tag of a tarball, ref.name
	// of a layout); empty means the image's default name.
	Name string
}

// Main runs the command line and returns the process exit code (exit.go).
func Main(args []string, stdout, stderr io.Writer, srv Server) int {
	root := newRoot(ioStreams{In: os.Stdin, Out: stdout, ErrOut: stderr}, srv, os.Getenv)
	root.SetArgs(args)
	return runRoot(root, stderr)
}

// newRoot returns the whole command tree, the client commands reading
// getenv.
func newRoot(streams ioStreams, srv Server, getenv func(string) string) *cobra.Command {
	root := &cobra.Command{Use: "occ", Short: "occ, the OpenClaw Enterprise control plane", SilenceUsage: true, SilenceErrors: true}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.AddCommand(serveCmd(streams.Out, srv), migrateCmd(streams.Out, srv), configCmd(streams.Out), secretsCmd(streams.Out, srv), runtimeCmd(streams.Out, srv))
	addClientCommands(root, streams, getenv)
	root.AddCommand(versionCmd(newAPIOptions(streams, getenv), srv.Version), healthcheckCmd(streams.Out))
	root.InitDefaultHelpCmd() // cobra's `occ help`, here so that it gets its example
	addExamples(root)
	return root
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

// action runs fn with the loaded configuration, writing to out and
// stopping on an interrupt or SIGTERM; a nil fn (a build without it) fails
// with missing.
func (f *serverFlags) action(out io.Writer, fn func(ctx context.Context, cfg *config.Config, out io.Writer) error, missing string) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		cfg, err := f.load(cmd)
		if err != nil {
			return err
		}
		if fn == nil {
			return errors.New(missing)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return fn(ctx, cfg, out)
	}
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

// serverCmd is a server-side command without arguments, with the
// serverFlags f.
func serverCmd(f *serverFlags, use, short string, runE func(*cobra.Command, []string) error) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs, RunE: runE}
	f.register(cmd)
	return cmd
}

// groupCmd is a noun command holding verbs.
func groupCmd(use, short string, verbs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short}
	cmd.AddCommand(verbs...)
	return cmd
}

func serveCmd(stdout io.Writer, srv Server) *cobra.Command {
	f := &serverFlags{}
	return serverCmd(f, "serve", "Run the API and the worker (embedded SQLite and local compute by default)",
		func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.load(cmd)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return srv.Serve(ctx, cfg, logger(cfg, os.Stderr), stdout)
		})
}

func migrateCmd(stdout io.Writer, srv Server) *cobra.Command {
	f := &serverFlags{}
	return serverCmd(f, "migrate", "Apply database migrations and exit, naming each applied",
		f.action(stdout, srv.Migrate, "this build cannot migrate"))
}

func configCmd(stdout io.Writer) *cobra.Command {
	f := &serverFlags{}
	validate := serverCmd(f, "validate", "Check the installation configuration without starting", func(cmd *cobra.Command, _ []string) error {
		if _, err := f.load(cmd); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "configuration is valid")
		return nil
	})
	return groupCmd("config", "Installation configuration", validate)
}

func secretsCmd(stdout io.Writer, srv Server) *cobra.Command {
	f := &serverFlags{}
	rotate := serverCmd(f, "rotate-key", "Add a new primary key to the secrets keyset and re-encrypt every Secret (servers keep running)",
		f.action(stdout, srv.RotateSecretsKey, "this build cannot rotate the secrets key"))
	g := &serverFlags{}
	var from string
	imp := serverCmd(g, "import-keyset", "Copy a secrets keyset file (for example a Kubernetes Secret's) into secrets.keysetFile with mode 0600; an identical one is kept, a different one refused",
		func(cmd *cobra.Command, args []string) error {
			if from == "" {
				return usageError{errors.New("--from is required: the keyset file to import")}
			}
			return g.action(stdout, func(ctx context.Context, cfg *config.Config, out io.Writer) error {
				if srv.ImportSecretsKeyset == nil {
					return errors.New("this build cannot import a secrets keyset")
				}
				return srv.ImportSecretsKeyset(ctx, cfg, from, out)
			}, "")(cmd, args)
		})
	imp.Flags().StringVar(&from, "from", "", "the keyset file to import (required)")
	imp.Example = "  occ secrets import-keyset --from /etc/occ-keyset/secrets.keyset --data-dir /var/lib/occ"
	var output string
	create := &cobra.Command{Use: "create-keyset --output FILE", Args: cobra.NoArgs,
		Short: "Write a new secrets keyset file (mode 0600, never over an existing file), for an installation that imports it, such as the Helm chart's keyset Secret",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output == "" {
				return usageError{errors.New("--output is required: the keyset file to write")}
			}
			if srv.CreateSecretsKeyset == nil {
				return errors.New("this build cannot create a secrets keyset")
			}
			return srv.CreateSecretsKeyset(output, stdout)
		}}
	create.Flags().StringVar(&output, "output", "", "the keyset file to write (required)")
	create.Example = "  occ secrets create-keyset --output secrets.keyset\n  kubectl -n occ-system create secret generic occ-keyset --from-file=secrets.keyset=./secrets.keyset"
	return groupCmd("secrets", "Secrets (values are write-only: never shown) and their encryption at rest", rotate, imp, create)
}

func runtimeCmd(stdout io.Writer, srv Server) *cobra.Command {
	f := &serverFlags{}
	install := serverCmd(f, "install", "Install the pinned OpenClaw and Node.js from the npm registry into the runtime directory (reused when present)",
		f.action(stdout, srv.InstallRuntime, "this build cannot install the agent runtime"))
	return groupCmd("runtime", "The agent runtime the compute drivers run, and its container images", install, imageCmd(stdout, srv))
}

// imageCmd is `occ runtime image build`.
func imageCmd(stdout io.Writer, srv Server) *cobra.Command {
	f := &serverFlags{}
	var o ImageBuild
	build := serverCmd(f, "build", "Build the OCI image of the installed OpenClaw gateway and Node.js (or, with --occ, of occ itself) without pulling anything, and write or push it",
		func(cmd *cobra.Command, _ []string) error {
			if o.Output == "" && o.Push == "" && o.Load == "" {
				return errors.New("nothing to do: name --output (an OCI layout directory, or a .tar file), --push (a registry reference) or --load (a Docker engine), or several")
			}
			if o.OCCBinary != "" && !o.OCC {
				return errors.New("--occ-binary needs --occ")
			}
			cfg, err := f.load(cmd)
			if err != nil {
				return err
			}
			if srv.BuildImage == nil {
				return errors.New("this build cannot build images")
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return srv.BuildImage(ctx, cfg, o, stdout, cmd.ErrOrStderr())
		})
	build.Example = `  occ runtime install && occ runtime image build --output openclaw-gateway.tar
  occ runtime image build --load unix:///var/run/docker.sock   # then compute.docker.images.gateway: the "loaded:" reference
  occ runtime image build --output ./openclaw-gateway-oci --push registry.example.com/occ/openclaw-gateway:2026.9.6
  CGO_ENABLED=0 go build -o occ ./cmd/occ && ./occ runtime image build --occ --push registry.example.com/occ/occ:v1`
	fl := build.Flags()
	fl.BoolVar(&o.OCC, "occ", false, "build the image of occ itself (its static binary) instead of the gateway image")
	fl.StringVar(&o.OCCBinary, "occ-binary", "", "with --occ: the static occ binary to put in the image (default: this occ)")
	fl.StringVar(&o.Output, "output", "", "write the image to this OCI layout directory, or to this tarball when it ends in .tar (docker load, ctr images import); never overwritten")
	fl.StringVar(&o.Push, "push", "", "push the image to this registry reference (REGISTRY/REPO:TAG), with the credentials docker and podman use")
	fl.StringVar(&o.Load, "load", "", "load the image into the Docker engine (or Podman service) at this Engine API address, unix:///PATH or tcp://HOST:PORT, as docker load does, and print the loaded reference")
	fl.StringVar(&o.Name, "name", "", "the image's name in the output (default openclaw-gateway:<openclaw>-node<node>, or occ:<version>)")
	return groupCmd("image", "Container images of the agent runtime and of occ", build)
}
