package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/occ"
)

// Command returns the command line (argv, program first) that starts one
// gateway in the foreground, listening on port. The driver adds the
// environment; the command must not daemonize. An error is retryable (for
// example: the runtime is not installed yet).
type Command func(port int) ([]string, error)

// RuntimeCommand starts the real gateway of an installed runtime:
// <Node> <OpenClawPkg>/openclaw.mjs gateway run --port N.
func RuntimeCommand(rt agentruntime.Runtime) Command {
	return func(port int) ([]string, error) {
		return append([]string{rt.Node, rt.Entry()}, gateway.LaunchArgs(port)...), nil
	}
}

// InstalledRuntime starts the real gateway of the pinned runtime installed
// under runtimeDir, looked up at every start, so that an install made after
// the driver was opened is picked up.
func InstalledRuntime(runtimeDir string) Command {
	return func(port int) ([]string, error) {
		rt, ok := agentruntime.Find(runtimeDir, agentruntime.Pinned())
		if !ok {
			return nil, fmt.Errorf("the pinned OpenClaw runtime %s is not installed in %s (occ runtime install)", agentruntime.Pinned().Name(), runtimeDir)
		}
		return RuntimeCommand(rt)(port)
	}
}

// InstallingRuntime is InstalledRuntime that, on a machine that lacks the
// pinned runtime, installs it first (the first deploy), writing progress
// lines to progress. The install runs in the background, outliving the
// deploy attempt that started it: until it is done the command fails with
// *compute.InstallingError (its phase and bytes on disk), which
// PrepareRevision reports as pending readiness; a failed install fails one
// start with a permanent error that names the cause (no npm, or the phase
// npm failed in), and the next start tries again. Concurrent installs of
// other processes wait for one another (the install is locked).
func InstallingRuntime(runtimeDir string, progress io.Writer) Command {
	in := &installer{dir: runtimeDir, progress: progress}
	return func(port int) ([]string, error) {
		rt, ok := agentruntime.Find(runtimeDir, agentruntime.Pinned())
		if !ok {
			return nil, in.poll()
		}
		return RuntimeCommand(rt)(port)
	}
}

// installer runs one background install of the pinned runtime at a time.
type installer struct {
	dir      string
	progress io.Writer

	mu      sync.Mutex
	running bool
	at      compute.InstallProgress
	err     error
}

// poll starts the install unless it runs, and says where it is:
// *compute.InstallingError while it runs (and right after it succeeded:
// the next start finds the runtime), its failure once.
func (in *installer) poll() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	switch {
	case in.err != nil:
		err := in.err
		in.err = nil
		return err
	case !in.running:
		in.running, in.at = true, compute.InstallProgress{Phase: occ.InstallPhaseResolving}
		go in.run()
	}
	return &compute.InstallingError{Progress: in.at}
}

// installTimeout bounds one background install.
const installTimeout = 15 * time.Minute

func (in *installer) run() {
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	v := agentruntime.Pinned()
	_, err := agentruntime.Install(ctx, agentruntime.Options{Dir: in.dir, OpenClawVersion: v.OpenClaw, NodeVersion: v.NodeMajor, Progress: in.progress,
		OnPhase: func(phase string, bytes int64) {
			in.mu.Lock()
			in.at = compute.InstallProgress{Phase: phase, Bytes: bytes}
			in.mu.Unlock()
		}})
	in.mu.Lock()
	defer in.mu.Unlock()
	in.running = false
	if err == nil {
		return
	}
	err = fmt.Errorf("install the pinned OpenClaw runtime into %s: %w", in.dir, err)
	if errors.Is(err, agentruntime.ErrNPMNotFound) {
		in.err = compute.Permanent(occ.DeployRuntimeNPMNotFound, err)
		return
	}
	in.err = compute.PermanentWith(occ.DeployRuntimeInstallFailed, map[string]any{"phase": in.at.Phase}, err)
}

// BinaryCommand starts a gateway binary that takes the gateway's own
// command line (the fake gateway of gatewaytest): <path> gateway run --port N.
func BinaryCommand(path string) Command {
	return func(port int) ([]string, error) {
		return append([]string{path}, gateway.LaunchArgs(port)...), nil
	}
}

// Options configures Open.
type Options struct {
	// Root is the directory the driver keeps everything under (created
	// 0700): namespaces/<ns>/agents/<agent>/ per Agent.
	Root string
	// Command starts a gateway. Without one the driver manages Namespaces
	// only and PrepareRevision fails.
	Command Command
	// Harness runs the Codex pieces of dedicated revisions (harness.go);
	// without one the driver does not declare dedicated.
	Harness *Harness
	// StopTimeout is how long a gateway gets to exit after SIGTERM before it
	// is sent SIGKILL; default DefaultStopTimeout.
	StopTimeout time.Duration
	// ModelProbeTimeout bounds the startup model probe of a new gateway;
	// default DefaultModelProbeTimeout. No answer in time is a held
	// MODEL_PROBE_TIMEOUT.
	ModelProbeTimeout time.Duration
	// FirstPort is the lowest loopback port given to a gateway; default
	// DefaultFirstPort. Gateways get ports PortSpacing apart from there up.
	FirstPort int
	// PortClaimDir is the directory, shared by every local driver on the
	// machine, where each claims its gateways' ports (see claims.go);
	// default DefaultPortClaimDir(). "-" turns claims off.
	PortClaimDir string
	// UIDRange is where the user and group IDs of the gateways come from
	// when occ runs as root (users.go): required then, with a Command;
	// ignored otherwise (gateways run as occ's user).
	UIDRange UIDRange
	// Logger receives the driver's events (starts, exits, restarts, stops),
	// never a secret; nil discards them.
	Logger *slog.Logger
}

// Defaults of Options.
const (
	// DefaultStopTimeout is the SIGTERM grace of a stopping gateway (a real
	// gateway busy starting took more than 10 s to honour SIGTERM).
	DefaultStopTimeout = 30 * time.Second
	// DefaultModelProbeTimeout bounds the startup model probe (a fresh
	// gateway's first probe took 9-30 s on a busy 2-core machine).
	DefaultModelProbeTimeout = 90 * time.Second
	// DefaultFirstPort is the lowest port a gateway gets.
	DefaultFirstPort = 20000
	// PortSpacing is the distance between two gateways' ports: a gateway
	// derives ports up to its own + 110 (reference/openclaw-runtime.md §1.1).
	PortSpacing = 120
)

// Restart backoff of a gateway that died while it should run.
const (
	minBackoff = time.Second
	maxBackoff = 60 * time.Second
)

// errNoCommand is returned by PrepareRevision of a driver without Command.
var errNoCommand = errors.New("local compute driver has no gateway command configured")
