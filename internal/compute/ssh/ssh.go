// Package ssh is the SSH Compute Driver: it runs each Agent's OpenClaw
// gateway as a systemd service on the Linux host of the Agent's Namespace
// (compute.ssh.hosts, by Namespace name), reached over SSH as root with a
// key and a known_hosts file (transport.go).
//
// Per Agent (layout.go), on its host: a system user and group of its own
// (never uid 0, never an account occ did not mark), a state tree under
// the state root with 0700/0600 modes, an immutable openclaw.json per
// revision, a gateway token file, an operator-owned environment file occ
// never reads nor writes, the lowest free port of the range, and the unit
// occ-gateway-<agent ID>.service (Type=simple, User=, Restart=always,
// NoNewPrivileges, PrivateTmp). Every operation on a host is one shell
// script run under the host lock (an flock on the host), so two occ
// replicas never interleave on one host.
//
// The runtime harness method is the only one: the operator puts the model
// credentials in the Agent's environment file on the host; occ delivers
// none. Dedicated Codex, plugins, initial workspace files and the native
// admin UI are refused at admission (Capabilities).
package ssh

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// Defaults of the options the settings do not carry.
const (
	DefaultConnectTimeout   = 10 * time.Second
	DefaultOperationTimeout = 180 * time.Second
	DefaultLockWait         = 30 * time.Second
	DefaultMaxOutput        = 64 << 10
	// DefaultModelProbeTimeout bounds the startup model probe.
	DefaultModelProbeTimeout = 60 * time.Second
	// StopSeconds is how long a gateway has to end after SIGTERM before
	// systemd kills it (TimeoutStopSec).
	StopSeconds = 30
)

// Options configure the driver (the server fills them from compute.ssh).
type Options struct {
	// IdentityFile and KnownHostsFile: occ's key and the known_hosts file
	// naming every host's key.
	IdentityFile, KnownHostsFile string
	// ConnectTimeout bounds connecting to a host; OperationTimeout one
	// operation on it.
	ConnectTimeout, OperationTimeout time.Duration
	// Hosts maps a Namespace name to its host.
	Hosts map[string]Host
	// Command starts the gateway on the host: the absolute paths of
	// Node.js and OpenClaw's entry point (or one program); occ appends
	// `gateway run --port N`.
	Command []string
	// UserPrefix begins every Agent's account name (at most 19
	// characters, lowercase).
	UserPrefix string
	// StateRoot is the directory of occ's state on every host; UnitDir
	// where occ writes the units.
	StateRoot, UnitDir string
	// PortStart and PortEnd bound the gateways' ports (inclusive).
	PortStart, PortEnd int
	// ModelProbeTimeout bounds the startup model probe.
	ModelProbeTimeout time.Duration
	Logger            *slog.Logger
}

// Driver is the SSH Compute Driver.
type Driver struct {
	o   Options
	t   *Transport
	tun *tunnels

	mu sync.Mutex
	// nsHost caches the host of a Namespace ID (its namespace.json).
	nsHost map[string]string
	// verified maps an Agent to the workload whose model credential was
	// probed once.
	verified map[compute.AgentRef]string
}

var _ compute.Driver = (*Driver)(nil)

// pathRe is what a path setting may hold (absolute, no spaces or shell
// characters).
var pathRe = regexp.MustCompile(`^/[A-Za-z0-9_./:@+-]*$`)

// userPrefixRe is what an account name prefix may hold.
var userPrefixRe = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,18}$`)

// New returns a driver; it reads the key files but contacts no host.
func New(o Options) (*Driver, error) {
	if len(o.Hosts) == 0 {
		return nil, errors.New("ssh compute driver: no hosts")
	}
	for name, h := range o.Hosts {
		if h.Address == "" || h.Port < 1 || h.Port > 65535 || h.User == "" {
			return nil, fmt.Errorf("ssh compute driver: host of Namespace %q needs an address, a port and a user", name)
		}
	}
	if len(o.Command) == 0 {
		return nil, errors.New("ssh compute driver: no gateway command")
	}
	for _, p := range append([]string{o.StateRoot, o.UnitDir}, o.Command...) {
		if !pathRe.MatchString(p) || p == "/" {
			return nil, fmt.Errorf("ssh compute driver: path %q is not an absolute path of letters, digits and _./:@+-", p)
		}
	}
	if !userPrefixRe.MatchString(o.UserPrefix) {
		return nil, fmt.Errorf("ssh compute driver: user prefix %q is not a lowercase account name of at most 19 characters", o.UserPrefix)
	}
	if o.PortStart < 1024 || o.PortEnd > 65535 || o.PortStart > o.PortEnd {
		return nil, fmt.Errorf("ssh compute driver: port range %d-%d is not within 1024-65535", o.PortStart, o.PortEnd)
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.OperationTimeout <= 0 {
		o.OperationTimeout = DefaultOperationTimeout
	}
	if o.ModelProbeTimeout <= 0 {
		o.ModelProbeTimeout = DefaultModelProbeTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	t, err := NewTransport(TransportOptions{IdentityFile: o.IdentityFile, KnownHostsFile: o.KnownHostsFile,
		ConnectTimeout: o.ConnectTimeout, OperationTimeout: o.OperationTimeout,
		LockFile: o.StateRoot + "/.compute-lock", LockWait: DefaultLockWait, MaxOutput: DefaultMaxOutput})
	if err != nil {
		return nil, fmt.Errorf("ssh compute driver: %w", err)
	}
	return &Driver{o: o, t: t, tun: newTunnels(t), nsHost: map[string]string{}, verified: map[compute.AgentRef]string{}}, nil
}

// Close stops the driver's tunnels; the gateways keep running.
func (d *Driver) Close() error {
	d.tun.close()
	d.t.Close()
	return nil
}

// Name implements compute.Driver.
func (d *Driver) Name() string { return "ssh" }

// Capabilities implements compute.Driver: embedded OpenClaw with the
// runtime harness method (credentials the operator put on the host), and
// state that survives stops and revisions.
func (d *Driver) Capabilities() compute.Capabilities {
	return compute.Capabilities{
		ExecutionModes:     []string{occ.ExecutionEmbedded},
		HarnessAuthMethods: []string{occ.HarnessRuntime},
		PersistentState:    true,
	}
}
