// Package local is the embedded default Compute Driver: it runs gateways as
// supervised processes on this host, one directory per Namespace and Agent
// under its root.
//
// Layout (0700/0600 and occ's user throughout when occ is not root; as root
// each gateway runs as a user of its own, and the modes and owners are
// those shown, see users.go):
//
//	<root>/                 0711: gateways pass through, cannot list
//	  ports.json ports.lock every Agent's port (an index of run.json); the
//	                        lock serializes port and user allocation
//	  uids.json             where the next gateway user is looked for
//	  namespaces/<ns>/agents/      0711 each
//	  namespaces/<ns>/agents/<agent>/   root:G 0710 (G: the gateway's group)
//	    openclaw.json   root:G 0640, rendered by gateway.RenderConfig: the
//	                    revision's document with the occ-owned keys
//	                    (loopback port, token auth, workspace, log file);
//	                    never a secret; a gateway of its own user is told
//	                    it is read-only (OPENCLAW_CONFIG_READONLY=1)
//	    token           0600, the gateway token (OPENCLAW_GATEWAY_TOKEN), one
//	                    per Agent, given to the gateway in its environment
//	    run.json        0600, revision, desired state, port, gateway user, PID
//	                    and start time of the process, whether the initial
//	                    files were applied
//	    lock            0600, flock: one operation on the Agent at a time,
//	                    across driver instances and occ processes
//	    state/ workspace/ home/ logs/   the gateway's user's, 0700: all the
//	                    gateway may write
//	    logs/gateway.log  the gateway's own log (logging.file), rotated by
//	                    the gateway beside itself
//	    console.log     0600, the gateway's stdout and stderr since its last
//	                    start (console.prev.log: the run before)
//	    harness/        a dedicated revision's harness (harness.go): its
//	                    HOME, with harness/codex its CODEX_HOME (0700; the
//	                    Codex login, auth.json 0600); as root the harness
//	                    user's (H:H 0700, a second user of the Agent), so
//	                    the gateway's user cannot enter it
//	    harness.log     0600, the output of every Codex command (login,
//	                    model probe, app-server) and of the codex plugin
//	                    install
//
// The secret environment of a revision (RevisionSpec.Env) reaches the gateway
// through its process environment only. It is kept in memory to restart a
// gateway that died; after an occ restart it is read back from the running
// gateway's /proc/<pid>/environ when the gateway is re-adopted.
//
// Processes: one per Agent, in its own process group so that it outlives
// occ; a gateway that dies while it should run is restarted with backoff
// (1 s doubling to 60 s); a stop sends SIGTERM to the main PID, then SIGKILL
// after StopTimeout, and waits for it. run.json is written before and after
// every start and stop, so a new driver on the same root (occ restarted)
// re-adopts a live gateway (same PID and start time) instead of starting a
// second one, finishes an interrupted stop, and kills a gateway whose start
// was interrupted before its PID was recorded.
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// Driver is the local Compute Driver.
type Driver struct {
	root string
	cmd  Command
	// harness runs dedicated revisions; nil: the driver runs none.
	harness     *Harness
	stopTimeout time.Duration
	// modelProbeTimeout bounds the startup model probe.
	modelProbeTimeout time.Duration
	firstPort         int
	claimDir          string // "" when port claims are off
	// separate: gateways run as users of their own from uids (users.go).
	separate bool
	uids     UIDRange
	log      *slog.Logger

	mu        sync.Mutex
	agents    map[string]*agent
	closed    chan struct{}
	closeOnce sync.Once
}

var _ compute.Driver = (*Driver)(nil)

// Capabilities implements compute.Driver: what the local driver runs is
// embedded OpenClaw with an API key delivered in the gateway's
// environment, no plugins (it installs none yet), initial workspace files,
// the native admin UI, and state kept under the Agent's directory across
// stops and revisions. With a Harness (Options.Harness) it also runs
// dedicated Codex (harness.go), delivering api_key, codex_pat,
// chatgpt_service_account (the issued credential, by the login of its kind,
// and the Backend's workspace) and credential_source (a Credential
// Gateway's placeholder and base URL) to the harness only; without a Harness
// a dedicated revision is refused (EXECUTION_MODE_UNSUPPORTED), never
// started as an embedded gateway. Every call returns new slices, so a
// caller cannot change what the driver declares.
func (d *Driver) Capabilities() compute.Capabilities {
	c := compute.Capabilities{
		ExecutionModes:     []string{occ.ExecutionEmbedded},
		HarnessAuthMethods: []string{occ.HarnessAPIKey},
		WorkspaceSetup:     true,
		NativeAdmin:        true,
		PersistentState:    true,
		SecretEnvironment:  true,
	}
	if d.harness != nil {
		c.ExecutionModes = append(c.ExecutionModes, occ.ExecutionDedicated)
		c.HarnessAuthMethods = append(c.HarnessAuthMethods, occ.HarnessCodexPAT, occ.HarnessChatGPTServiceAccount, occ.HarnessCredentialSource)
	}
	return c
}

// New returns a local driver keeping its state under root (created 0700),
// without a gateway command: it manages Namespaces only. Open configures
// everything.
func New(root string) (*Driver, error) { return Open(Options{Root: root}) }

// Open returns a local driver. Gateways already running under the root are
// re-adopted lazily by each method, or at once by Adopt.
func Open(o Options) (*Driver, error) {
	if o.Root == "" {
		return nil, errors.New("local compute root: empty path")
	}
	root, err := filepath.Abs(o.Root)
	if err != nil {
		return nil, fmt.Errorf("local compute root: %w", err)
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("local compute root: %w", err)
	}
	d := &Driver{root: root, cmd: o.Command, harness: o.Harness, stopTimeout: o.StopTimeout, modelProbeTimeout: o.ModelProbeTimeout,
		firstPort: o.FirstPort, log: o.Logger, agents: map[string]*agent{}, closed: make(chan struct{})}
	if d.stopTimeout <= 0 {
		d.stopTimeout = DefaultStopTimeout
	}
	if d.modelProbeTimeout <= 0 {
		d.modelProbeTimeout = DefaultModelProbeTimeout
	}
	if d.firstPort <= 0 {
		d.firstPort = DefaultFirstPort
	}
	switch d.claimDir = o.PortClaimDir; d.claimDir {
	case "":
		d.claimDir = DefaultPortClaimDir()
	case "-":
		d.claimDir = ""
	}
	if d.log == nil {
		d.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if d.cmd == nil {
		return d, nil
	}
	if !SeparateUsers() {
		d.log.Info("gateways run as occ's own user: occ is not root", "uid", os.Geteuid())
		return d, nil
	}
	d.separate, d.uids = true, o.UIDRange
	if err := d.checkUsers(); err != nil {
		return nil, err
	}
	d.log.Info("gateways run as users of their own", "uidRange", d.uids.String())
	return d, nil
}

// Close stops supervising: no gateway is restarted any more and no method
// may be called afterwards. Running gateways keep running (occ's shutdown
// never stops Agents); a new driver on the same root re-adopts them.
func (d *Driver) Close() error {
	d.closeOnce.Do(func() { close(d.closed) })
	return nil
}

// errClosed is returned by the methods of a closed driver.
var errClosed = errors.New("local compute driver is closed")

func (d *Driver) isClosed() bool {
	select {
	case <-d.closed:
		return true
	default:
		return false
	}
}

// Name implements compute.Driver.
func (d *Driver) Name() string { return "local" }

// Root is the directory the driver keeps everything under.
func (d *Driver) Root() string { return d.root }

// NamespaceDir is where a Namespace's Agents live.
func (d *Driver) NamespaceDir(id string) string { return filepath.Join(d.root, "namespaces", id) }

// AgentDir is the directory of an Agent (see the package documentation).
func (d *Driver) AgentDir(a compute.AgentRef) string {
	return filepath.Join(d.NamespaceDir(a.NamespaceID), "agents", a.AgentID)
}

// EnsureNamespace creates the Namespace's directory.
func (d *Driver) EnsureNamespace(ctx context.Context, ns compute.NamespaceRef) (compute.NamespaceObservation, error) {
	if err := ns.Validate(); err != nil {
		return compute.NamespaceObservation{}, err
	}
	if err := os.MkdirAll(d.NamespaceDir(ns.ID), d.dirMode()); err != nil {
		return compute.NamespaceObservation{}, fmt.Errorf("create namespace directory: %w", err)
	}
	return compute.NamespaceObservation{Done: true}, nil
}

// DeleteNamespace stops every gateway of the Namespace and removes its
// directory and all it holds.
func (d *Driver) DeleteNamespace(ctx context.Context, ns compute.NamespaceRef) (compute.NamespaceObservation, error) {
	if err := ns.Validate(); err != nil {
		return compute.NamespaceObservation{}, err
	}
	entries, err := os.ReadDir(filepath.Join(d.NamespaceDir(ns.ID), "agents"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return compute.NamespaceObservation{}, fmt.Errorf("list agents of namespace: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() || !occ.ValidID(occ.PrefixAgent, e.Name()) {
			continue
		}
		if err := d.DeleteAgent(ctx, compute.AgentRef{NamespaceID: ns.ID, AgentID: e.Name()}); err != nil {
			return compute.NamespaceObservation{}, err
		}
	}
	if err := os.RemoveAll(d.NamespaceDir(ns.ID)); err != nil {
		return compute.NamespaceObservation{}, fmt.Errorf("remove namespace directory: %w", err)
	}
	return compute.NamespaceObservation{Done: true}, nil
}
