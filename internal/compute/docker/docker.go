// Package docker is the Docker Compute Driver: it runs each Agent's OpenClaw
// gateway as a hardened container of a Docker Engine (or an engine that
// serves the Docker Engine API), through the Engine API over its socket.
//
// Per occ Namespace (namespaces.go): a bridge network oce-<h12(nsID)>. Per
// Agent (agents.go): two volumes, the gateway's state and its workspace
// (kept across stops and revisions, removed with the Agent), and one
// gateway container joined only to its Namespace's network, its port
// published on 127.0.0.1 only, running as 1000:1000 with a read-only root
// filesystem, every capability dropped, no-new-privileges, tmpfs for /tmp
// and memory and CPU limits. A new revision recreates the container. The
// rendered openclaw.json (no secret) is copied into the state volume before
// the container starts; the gateway token (new per container) and the
// revision's secret environment are only in the container's environment.
//
// A dedicated revision (harness.go) adds a harness container, the Codex
// app-server holding the model credential, with a Codex volume of its own;
// the login and the model probe run as execs in it (the secret on the
// exec's stdin), and the gateway container reaches its app-server over the
// Namespace's network with a per-container token.
//
// Every object carries occ's labels (LabelManaged, LabelDriver and the raw
// IDs); an object under one of occ's names without them is refused with
// CodeOwnershipConflict, never adopted, and deletion removes only objects
// that carry them.
package docker

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// Setting names the driver's errors cite (compute.docker in occ's
// configuration).
const (
	SettingHost         = "compute.docker.host"
	SettingGatewayImage = "compute.docker.images.gateway"
)

// Defaults of the options the settings do not carry.
const (
	DefaultRequestTimeout = 10 * time.Second
	// DefaultModelProbeTimeout bounds the startup model probe.
	DefaultModelProbeTimeout = 60 * time.Second
	// StopSeconds is how long a gateway has to end after SIGTERM before
	// the engine kills it.
	StopSeconds = 10
)

// Options configure the driver (the server fills them from
// compute.docker).
type Options struct {
	// Host is the engine's address: unix:///path or tcp://host:port.
	Host string
	// RequestTimeout bounds every request; 0 is DefaultRequestTimeout.
	RequestTimeout time.Duration
	// GatewayImage is the gateway image: its entry point is the OpenClaw
	// CLI (the container runs `node -e <wrapper> … <entrypoint> gateway run
	// --port N`), it has node on PATH, and user 1000:1000 owns DataDir and
	// DataDir/workspace in it.
	GatewayImage string
	// GatewayPort is the gateway's port inside its container (loopback);
	// the relay listens on GatewayPort+1, the port the engine publishes.
	GatewayPort int
	// MemoryBytes and NanoCPUs limit each gateway container (0: none).
	MemoryBytes int64
	NanoCPUs    int64
	// OpenFiles and Processes, when not 0, are the container's nofile and
	// nproc limits (soft and hard); 0 leaves the engine's default (Podman's
	// is above the hard limit of some hosts, where it cannot start a
	// container without them).
	OpenFiles int64
	Processes int64
	// ModelProbeTimeout bounds the startup model probe; 0 is
	// DefaultModelProbeTimeout.
	ModelProbeTimeout time.Duration
	Logger            *slog.Logger
}

// Driver is the Docker Compute Driver.
type Driver struct {
	o Options
	e engine
	// podman is set by Preflight for Podman's service (its tmpfs options
	// differ).
	podman bool
	// dedicated is set by Preflight when the gateway image runs dedicated
	// Codex (LabelDedicatedCodex); npmCache to its LabelNPMCache.
	dedicated bool
	npmCache  string

	mu sync.Mutex
	// verified maps an Agent to the container whose model credential was
	// probed once (the probe is not repeated for the same container).
	verified map[compute.AgentRef]string
	// held maps an Agent to its dedicated revision held by the harness's
	// login or probe (answered again without a second one).
	held map[compute.AgentRef]heldRevision
	// opened is when the driver was made: a container started before
	// then may have been probed by an earlier occ (probedBefore).
	opened time.Time
}

var _ compute.Driver = (*Driver)(nil)

// Codes of the permanent errors of the driver.
const (
	// CodeOwnershipConflict: an object exists under a name occ uses but
	// without occ's labels (or for another occ ID).
	CodeOwnershipConflict = occ.DockerOwnershipConflict
	// CodeRequestInvalid: the engine refused a request as invalid (400).
	CodeRequestInvalid = occ.DockerRequestInvalid
	// CodeForeignObjects: a Namespace's network has containers occ did
	// not create, so occ does not remove it.
	CodeForeignObjects = occ.DockerForeignObjects
)

// New returns a driver; it does not contact the engine (Preflight does).
func New(o Options) (*Driver, error) {
	if o.Host == "" {
		return nil, fmt.Errorf("docker compute driver: %s is required", SettingHost)
	}
	if o.GatewayImage == "" {
		return nil, fmt.Errorf("docker compute driver: %s is required", SettingGatewayImage)
	}
	if o.GatewayPort < 1024 || o.GatewayPort > 65534 {
		return nil, fmt.Errorf("docker compute driver: gateway port %d is out of range", o.GatewayPort)
	}
	if o.MemoryBytes < 0 || o.NanoCPUs < 0 || o.OpenFiles < 0 || o.Processes < 0 {
		return nil, errors.New("docker compute driver: negative resource limits")
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.ModelProbeTimeout <= 0 {
		o.ModelProbeTimeout = DefaultModelProbeTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	a, err := newAPI(o.Host, o.RequestTimeout)
	if err != nil {
		return nil, fmt.Errorf("docker compute driver: %w", err)
	}
	return &Driver{o: o, e: engine{a}, verified: map[compute.AgentRef]string{}, held: map[compute.AgentRef]heldRevision{}, opened: time.Now()}, nil
}

// Name implements compute.Driver.
func (d *Driver) Name() string { return "docker" }

// LabelDedicatedCodex, on a gateway image, says it runs dedicated Codex: its
// value is the codex plugin spec its OpenClaw CLI installs (`plugins install
// <spec> --pin`, CodexPluginSpec) and `codex` is on its PATH. Preflight
// reads it; without it the driver does not declare dedicated.
const LabelDedicatedCodex = "dev.openclaw.occ.dedicated-codex"

// LabelNPMCache, on a gateway image, names an npm cache in it holding
// everything the codex plugin's install fetches: the plugin install then
// runs offline from a copy of it (the Namespace's network may have no
// route to the registry).
const LabelNPMCache = "dev.openclaw.occ.npm-cache"

// Capabilities implements compute.Driver: embedded OpenClaw with an API key
// delivered in the container's environment; when the gateway image says it
// can (LabelDedicatedCodex, read by Preflight before serving), dedicated
// Codex (harness.go), its harness container getting api_key, codex_pat,
// chatgpt_service_account or credential_source, the gateway container none
// of them; and gateway state on volumes that survive stops and revisions.
// The runtime harness method (the seed: Docker rejects it), plugins,
// initial workspace files and the native admin UI are not run here and are
// refused at admission. Every call returns new slices.
func (d *Driver) Capabilities() compute.Capabilities {
	c := compute.Capabilities{
		ExecutionModes:     []string{occ.ExecutionEmbedded},
		HarnessAuthMethods: []string{occ.HarnessAPIKey},
		PersistentState:    true,
		SecretEnvironment:  true,
	}
	if d.dedicated {
		c.ExecutionModes = append(c.ExecutionModes, occ.ExecutionDedicated)
		c.HarnessAuthMethods = append(c.HarnessAuthMethods, occ.HarnessCodexPAT, occ.HarnessChatGPTServiceAccount, occ.HarnessCredentialSource)
	}
	return c
}

// Close releases idle connections; gateways keep running.
func (d *Driver) Close() error {
	d.e.http.CloseIdleConnections()
	return nil
}
