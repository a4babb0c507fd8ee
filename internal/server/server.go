// Package server is the one place that wires occ together: configuration,
// store, migrations, bootstrap, worker, compute driver and HTTP API. Main is
// what `occ serve` runs and what end-to-end tests boot on port 0.
package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/riverqueue/river"
	"golang.org/x/net/netutil"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/audit"
	"github.com/openclaw/occ/internal/backends"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/credgateway"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/httpapi"
	"github.com/openclaw/occ/internal/httpapi/adminproxy"
	"github.com/openclaw/occ/internal/httpapi/limit"
	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/jobs"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/secrets"
	"github.com/openclaw/occ/internal/store"
	"github.com/openclaw/occ/internal/worker"
)

// Version is the build version the Go toolchain recorded (occ.BuildVersion).
var Version = occ.BuildVersion()

// Main runs one occ process.
type Main struct {
	Config *config.Config
	Logger *slog.Logger
	Out    io.Writer // where first-start messages go (the bootstrap password)
	// Driver overrides the configured compute driver (tests inject faults).
	Driver compute.Driver
	// BackendClient overrides the client that asks Backends for service
	// account credentials (tests shorten its timeout).
	BackendClient backends.Client

	st       *store.Store
	keyring  *secrets.Keyring
	app      *app.App
	river    *river.Client[*sql.Tx]
	http     *http.Server
	ln       net.Listener // bound at the start of Start (not by a worker)
	listener net.Listener // ln with the connection cap
	lock     *os.File
	closers  []func() error
	errc     chan error
	// retention counts the audit retention passes of this process's
	// worker, served on /metrics.
	retention *audit.RetentionMetrics
	// reg holds every metric this process serves (metrics.go).
	reg *prometheus.Registry
	// metricsLn, when metrics.listen is set, serves /metrics, /healthz and
	// /readyz without authentication on loopback (every role).
	metricsLn  net.Listener
	metricsSrv *http.Server
}

// Addr is the API's listening address once Start returned.
func (m *Main) Addr() string { return m.listener.Addr().String() }

// Store exposes the database, for tests.
func (m *Main) Store() *store.Store { return m.st }

// App exposes the use cases once the API is serving, for tests.
func (m *Main) App() *app.App { return m.app }

// Start opens everything and begins serving; Close stops it.
func (m *Main) Start(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	cfg := m.Config
	if m.Logger == nil {
		m.Logger = slog.Default()
	}
	if m.Out == nil {
		m.Out = os.Stdout
	}
	if cfg.Role != "worker" {
		// Listen before anything else: a taken port stops occ before it
		// opens the database, so a first start's once-shown password is
		// never printed for a server that does not run.
		if m.ln, err = net.Listen("tcp", cfg.Listen); err != nil {
			return fmt.Errorf("listen on %s (listen): %w", cfg.Listen, err)
		}
	}
	if cfg.Metrics.Listen != "" {
		if m.metricsLn, err = net.Listen("tcp", cfg.Metrics.Listen); err != nil {
			return fmt.Errorf("listen on %s (metrics.listen): %w", cfg.Metrics.Listen, err)
		}
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if m.keyring, err = secrets.Open(cfg.Secrets.KeysetFile); err != nil {
		return fmt.Errorf("cannot open the secrets keyset (secrets.keysetFile): %w", err)
	}
	if strings.HasPrefix(cfg.DatabaseURL, "sqlite://") {
		// One process per SQLite file: River's orphan rescue relies on it.
		// Taken before migrating, so a second process started at the same
		// moment stops here rather than inside a migration.
		if m.lock, err = lockFile(filepath.Join(cfg.DataDir, "occ.lock")); err != nil {
			return err
		}
	}
	if m.st, err = Open(ctx, cfg); err != nil {
		return err
	}
	driver, err := m.driver()
	if err != nil {
		return err
	}
	wopts := worker.Options{MaxAttempts: cfg.Worker.MaxAttempts, PollInterval: cfg.Worker.PollInterval.D(),
		ConvergenceTimeout: cfg.Worker.ConvergenceTimeout.D(), Concurrency: cfg.WorkerConcurrency(), Logger: m.Logger,
		JobTimeout: cfg.Worker.JobTimeout.D(), RescueAfter: cfg.Worker.RescueAfter.D(), StraySweepEvery: cfg.Worker.StraySweepInterval.D(), Secrets: appSecrets{m},
		NativeAdminOrigin: func(nsID, agentID string) string { return m.app.NativeAdminGatewayOrigin(nsID, agentID) },
		Backends:          backendTypes(cfg), BackendWorkspaces: backendWorkspaces(cfg), PluginCatalog: pluginCatalogOf(cfg), WorkspaceDefaultsID: gateway.PinnedDefaultsID}
	if cfg.CredentialGateway.URL != "" {
		wopts.CredentialGateway = credgateway.New(cfg.CredentialGateway.URL)
	}
	m.retention = audit.NewRetentionMetrics()
	wopts.AuditRetention = &audit.Retention{Store: m.st, Keep: cfg.Audit.Retention.D(), Dir: cfg.Audit.ExportDir,
		Log: m.Logger.With("component", "audit-retention"), Metrics: m.retention}
	working := cfg.Role != "api"
	caps, worked := driver.Capabilities(), driver
	if !working {
		worked = nil
	}
	// What reaches gateways for the API (live workspace files, the native
	// admin UI, diagnostics, logs): the worker's driver, or in an API-only
	// process the driver when its endpoints are reachable from anywhere.
	reach := worked
	if !working && caps.SharedEndpoints {
		reach = driver
	}
	if m.river, err = worker.NewClient(m.st, worked, wopts); err != nil {
		return err
	}
	m.reg = m.registry()
	if working {
		observeJobs(m.river, m.reg)
	}
	if m.metricsLn != nil {
		m.serveMetrics()
	}
	enq := jobs.NewEnqueuer(m.river)
	boot, err := app.Bootstrap(ctx, m.st, enq, app.BootstrapOptions{DataDir: cfg.DataDir, AdminEmail: "admin@occ.local",
		AdminPassword: cfg.Auth.BootstrapAdminPassword, APIKey: cfg.Auth.BootstrapAPIKey})
	if err != nil {
		return err
	}
	if boot.Created {
		m.announce(boot)
	}
	if m.app, err = app.New(ctx, m.st, enq, app.Options{Backends: backendsOf(cfg), Presets: presetsOf(cfg), ComputeDriver: driver.Name(), Compute: caps,
		WorkspaceDefaultsID: gateway.PinnedDefaultsID, MaxAttempts: cfg.Worker.MaxAttempts, SessionLifetime: cfg.Auth.SessionLifetime.D(),
		SignInFailuresPerAccount: cfg.Auth.SignInFailuresPerAccount, SignInFailuresPerClient: cfg.Auth.SignInFailuresPerClient,
		SignInConcurrency: cfg.Auth.SignInConcurrency,
		Secrets:           m.keyring, BackendClient: m.BackendClient, CredentialGateway: gatewayOf(cfg), Gateways: gatewaysOf(reach),
		Diagnose: diagnoserOf(reach), RuntimeLogs: runtimeLogsOf(reach),
		Streams: app.StreamOptions{MaxPerPrincipal: cfg.Streams.MaxPerPrincipal, RecheckInterval: cfg.Streams.RecheckInterval.D(),
			PollInterval: cfg.Streams.PollInterval.D()},
		NativeAdmin: app.NativeAdmin{Enabled: cfg.NativeAdminUI.Enabled, Domain: cfg.NativeAdminUI.Domain,
			CookieDomain: cfg.NativeAdminUI.CookieDomain, PublicOrigin: cfg.PublicOrigin}}); err != nil {
		return err
	}
	if working {
		if n, err := worker.RescueOrphans(ctx, m.st); err != nil {
			return err
		} else if n > 0 {
			m.Logger.Info("made work left running by a previous process available again", "jobs", n)
		}
		if err := m.river.Start(context.WithoutCancel(ctx)); err != nil {
			return fmt.Errorf("start worker: %w", err)
		}
		if n, err := m.app.ResumeRunningAgents(ctx); err != nil {
			return fmt.Errorf("resume running agents: %w", err)
		} else if n > 0 {
			m.Logger.Info("resuming the gateways of running Agents", "agents", n)
		}
	}
	if cfg.Role == "worker" {
		return nil
	}
	return m.serveAPI(ctx)
}

// Serve runs occ until ctx ends: what `occ serve` does.
func Serve(ctx context.Context, cfg *config.Config, log *slog.Logger, out io.Writer) error {
	m := &Main{Config: cfg, Logger: log, Out: out}
	if err := m.Start(ctx); err != nil {
		return err
	}
	if cfg.Role == "worker" {
		log.Info("occ worker is running", "database", string(m.st.Dialect()), "compute", cfg.Compute.Driver, "metrics", m.MetricsAddr())
	}
	err := m.Wait(ctx)
	log.Info("occ is stopping: finishing requests and running jobs (up to 10 s each); gateways keep running", "role", cfg.Role)
	m.Close()
	log.Info("occ stopped")
	return err
}

// Migrate applies the migrations and exits, saying which it applied:
// what `occ migrate` does.
func Migrate(ctx context.Context, cfg *config.Config, out io.Writer) error {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return err
	}
	st, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	applied, err := st.MigrateReport(ctx, jobs.Migrate(st))
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		fmt.Fprintln(out, "occ: the database schema is current; nothing to apply")
	}
	for _, name := range applied {
		fmt.Fprintln(out, "occ: applied migration", name)
	}
	return nil
}

// Open opens and migrates the configured database.
func Open(ctx context.Context, cfg *config.Config) (*store.Store, error) {
	st, err := store.Open(ctx, cfg.DatabaseURL, store.WithConnections(cfg.PostgresConnections()))
	if err != nil {
		return nil, err
	}
	if err := st.Migrate(ctx, jobs.Migrate(st)); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

func (m *Main) driver() (compute.Driver, error) {
	if m.Driver != nil {
		return m.Driver, nil
	}
	switch m.Config.Compute.Driver {
	case "local":
		progress := logLines{m.Logger.With("component", "runtime")}
		command := local.InstallingRuntime(m.Config.RuntimeDir, progress)
		// Dedicated Codex runs with the pinned runtime's Codex pieces; a
		// configured gateway command (a test's fake gateway) runs it only
		// with a configured harness command (the fake Codex).
		harness := local.InstalledHarness(m.Config.RuntimeDir, progress)
		if gw := m.Config.Compute.GatewayCommand; gw != "" {
			command, harness = local.BinaryCommand(gw), nil
			if codex := m.Config.Compute.HarnessCommand; codex != "" {
				harness = local.BinaryHarness(codex, gw)
			}
		}
		first, last, err := m.Config.Compute.Local.UIDs()
		if err != nil {
			return nil, fmt.Errorf("compute.local.uidRange: %w", err)
		}
		if local.SeparateUsers() {
			if err := passThrough(m.Config.DataDir); err != nil {
				return nil, err
			}
		}
		d, err := local.Open(local.Options{Root: filepath.Join(m.Config.DataDir, "compute"), Command: command, Harness: harness,
			UIDRange: local.UIDRange{First: first, Last: last}, Logger: m.Logger.With("component", "compute")})
		if err != nil {
			return nil, fmt.Errorf("local compute driver: %w", err)
		}
		m.closers = append(m.closers, d.Close)
		if err := d.Adopt(context.Background()); err != nil {
			m.Logger.Warn("re-adopting gateways left by a previous process", "error", err)
		}
		return d, nil
	case "kubernetes":
		return m.kubernetesDriver()
	case "docker":
		return m.dockerDriver()
	case "ssh":
		return m.sshDriver()
	}
	return nil, fmt.Errorf("compute driver %q is not one of local, ssh, docker, kubernetes", m.Config.Compute.Driver)
}

func (m *Main) serveAPI(ctx context.Context) error {
	cfg := m.Config
	a := m.app
	if err := a.SeedInstallationPresets(ctx); err != nil {
		return fmt.Errorf("seed installation presets: %w", err)
	}
	requests := httpapi.NewRequestMetrics()
	m.reg.MustRegister(requests.Collectors()...)
	h, err := httpapi.New(httpapi.Options{App: a, Authn: iam.NewAuthenticator(m.st), DefaultBodyLimit: cfg.Limits.DefaultBodyBytes,
		BodyLimits: map[string]int64{"createAgent": cfg.Limits.AgentCreateBodyBytes, "putWorkspaceFile": cfg.Limits.WorkspaceFileBodyBytes},
		Version:    Version, OpenClawVersion: cfg.Runtime.OpenClawVersion, WorkspaceDefaultsID: gateway.PinnedDefaultsID, ComputeDriver: cfg.Compute.Driver,
		Metrics: promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}), Logger: m.Logger, RequestMetrics: requests, AccessLog: cfg.Logging.AccessLog,
		PublicOrigin: cfg.PublicOrigin, SessionLifetime: cfg.Auth.SessionLifetime.D(), NativeAdminCookieDomain: nativeAdminCookieDomain(cfg),
		PerPrincipal:       limit.Rate{PerSecond: cfg.Limits.RequestsPerSecondPerPrincipal, Burst: cfg.Limits.BurstPerPrincipal},
		MaxInFlight:        cfg.Limits.MaxInFlight,
		StreamWriteTimeout: cfg.HTTP.WriteTimeout.D()})
	if err != nil {
		return err
	}
	if h, err = m.console(h); err != nil { // the web console: / and /console/…
		return err
	}
	var proxy *adminproxy.Proxy
	if cfg.NativeAdminUI.Enabled {
		// Hosts below the admin domain are Agents' native admin UIs: they
		// go to the proxy before anything else.
		proxy = adminproxy.New(adminproxy.Options{App: a, Domain: cfg.NativeAdminUI.Domain, PublicOrigin: cfg.PublicOrigin,
			RecheckInterval: cfg.NativeAdminUI.RecheckInterval.D(), Logger: m.Logger.With("component", "adminproxy")})
		h = proxy.Route(h)
	}
	trusted, err := cfg.HTTP.TrustedProxyPrefixes()
	if err != nil {
		return err
	}
	h = limit.Edge(limit.Rate{PerSecond: cfg.Limits.RequestsPerSecondPerClient, Burst: cfg.Limits.BurstPerClient}, trusted, h)
	// Connections over the cap wait to be accepted; the timeouts free the
	// slots of clients that stall.
	m.listener = netutil.LimitListener(m.ln, cfg.Limits.MaxConnections)
	m.http = &http.Server{Handler: h, ReadHeaderTimeout: cfg.HTTP.ReadHeaderTimeout.D(), ReadTimeout: cfg.HTTP.ReadTimeout.D(),
		WriteTimeout: cfg.HTTP.WriteTimeout.D(), IdleTimeout: cfg.HTTP.IdleTimeout.D(), MaxHeaderBytes: cfg.HTTP.MaxHeaderBytes,
		ErrorLog: slog.NewLogLogger(m.Logger.Handler(), slog.LevelWarn)}
	if proxy != nil {
		m.http.RegisterOnShutdown(proxy.Close) // relayed WebSockets are hijacked: Shutdown does not close them
	}
	m.errc = make(chan error, 1)
	go func() { m.errc <- m.http.Serve(m.listener) }()
	m.Logger.Info("occ is serving", "addr", m.Addr(), "database", string(m.st.Dialect()), "compute", cfg.Compute.Driver, "role", cfg.Role)
	return nil
}

// Wait blocks until ctx ends or the HTTP server fails.
func (m *Main) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-m.errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// Close stops serving and working, and closes the database.
func (m *Main) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if m.http != nil {
		_ = m.http.Shutdown(ctx)
	} else if m.ln != nil {
		_ = m.ln.Close()
	}
	if m.metricsSrv != nil {
		_ = m.metricsSrv.Shutdown(ctx)
	} else if m.metricsLn != nil {
		_ = m.metricsLn.Close()
	}
	if m.river != nil {
		_ = m.river.Stop(ctx)
	}
	for _, c := range m.closers {
		_ = c()
	}
	if m.st != nil {
		_ = m.st.Close()
	}
	if m.lock != nil {
		_ = m.lock.Close()
	}
	return nil
}

func (m *Main) announce(b app.BootstrapResult) {
	fmt.Fprintf(m.Out, "occ: first start: created the installation, the default Namespace and an administrator.\n")
	fmt.Fprintf(m.Out, "occ: service key (installation admin) written to %s (mode 0600)\n", b.KeyFile)
	if b.GeneratedPassword != "" {
		fmt.Fprintf(m.Out, "occ: console sign-in %s / %s at %s/  (shown once; set OCC_BOOTSTRAP_ADMIN_PASSWORD to choose it)\n",
			b.AdminEmail, b.GeneratedPassword, m.Config.PublicOrigin)
	}
}

// passThrough lets every user pass through the data directory (search,
// not list): the local driver's gateways run as users of their own when occ
// is root and reach their Agents' trees under compute/ through it. Nothing
// else in it is theirs: occ.db, its journal, the keyset, the bootstrap key
// and occ.lock are 0600, compute/ lets gateways through to their own trees
// only, runtime/ is the public runtime they run.
func passThrough(dataDir string) error {
	fi, err := os.Stat(dataDir)
	if err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if fi.Mode().Perm()&0o011 == 0o011 {
		return nil
	}
	if err := os.Chmod(dataDir, fi.Mode().Perm()|0o011); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	return nil
}

// lockFile takes an exclusive, non-blocking lock on path.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another occ process uses this data directory (%s): %w", path, err)
	}
	return f, nil
}

// pluginCatalogOf is the set of plugin IDs the configured catalogs list.
func pluginCatalogOf(cfg *config.Config) map[string]bool {
	ids := map[string]bool{}
	for _, c := range cfg.PluginCatalogs {
		for _, id := range c.Plugins {
			ids[id] = true
		}
	}
	return ids
}

// gatewayOf is the configured Credential Gateway's client, or nil.
func gatewayOf(cfg *config.Config) credgateway.Client {
	if cfg.CredentialGateway.URL == "" {
		return nil
	}
	return credgateway.New(cfg.CredentialGateway.URL)
}

func backendsOf(cfg *config.Config) []app.Backend {
	var out []app.Backend
	for _, b := range cfg.Backends {
		out = append(out, app.Backend{ID: b.ID, Type: b.Type, URL: b.URL})
	}
	return out
}

func presetsOf(cfg *config.Config) []app.PresetTemplate {
	var out []app.PresetTemplate
	for _, p := range cfg.Presets {
		t := app.PresetTemplate{Name: p.Name, ExecutionMode: p.ExecutionMode, BackendID: p.BackendID, Plugins: map[string]string{}}
		for id, sel := range p.Plugins {
			t.Plugins[id] = sel.ApprovalPolicy
		}
		out = append(out, t)
	}
	return out
}

// appSecrets resolves Secrets for the worker through the use cases, which
// exist only once the worker's client (their enqueuer) does.
type appSecrets struct{ m *Main }

func (s appSecrets) ResolveSecret(ctx context.Context, nsID, id string) ([]byte, error) {
	return s.m.app.ResolveSecret(ctx, nsID, id)
}

func (s appSecrets) ServiceAccountCredential(ctx context.Context, nsID, id string) ([]byte, error) {
	return s.m.app.ServiceAccountCredential(ctx, nsID, id)
}

// backendTypes maps each configured Backend ID to its type.
func backendTypes(cfg *config.Config) map[string]string {
	out := map[string]string{}
	for _, b := range backendsOf(cfg) {
		out[b.ID] = b.Type
	}
	return out
}

// backendWorkspaces maps each Backend that names a ChatGPT workspace to it.
func backendWorkspaces(cfg *config.Config) map[string]string {
	out := map[string]string{}
	for _, b := range cfg.Backends {
		if b.WorkspaceID != "" {
			out[b.ID] = b.WorkspaceID
		}
	}
	return out
}

// logLines turns written lines (install progress) into log records.
type logLines struct{ log *slog.Logger }

func (l logLines) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if line != "" {
			l.log.Info(line)
		}
	}
	return len(p), nil
}

// diagnoserOf runs deployment diagnostics through the compute driver (nil
// when it cannot: the route then answers 503).
func diagnoserOf(rd compute.Driver) app.Diagnoser {
	if rd == nil {
		return nil
	}
	return func(ctx context.Context, nsID, agentID, revisionID string) (app.Diagnosis, error) {
		dg, err := rd.Diagnose(ctx, compute.RevisionRef{AgentRef: compute.AgentRef{NamespaceID: nsID, AgentID: agentID}, RevisionID: revisionID})
		if err != nil {
			return app.Diagnosis{}, err
		}
		out := app.Diagnosis{RevisionID: dg.RevisionID, Checks: make([]app.DiagnosticCheck, 0, len(dg.Checks))}
		for _, c := range dg.Checks {
			out.Checks = append(out.Checks, app.DiagnosticCheck{Component: c.Component, Check: c.Check, Status: c.Status, Code: c.Code, Message: c.Message})
		}
		return out, nil
	}
}

// runtimeLogsOf reads a revision's gateway output through the compute
// driver (nil when there is none: the route then answers 501).
func runtimeLogsOf(rd compute.Driver) app.RuntimeLogReader {
	if rd == nil {
		return nil
	}
	return func(ctx context.Context, nsID, agentID, revisionID string, tailLines int) (app.RuntimeLogs, error) {
		l, err := rd.Logs(ctx, compute.RevisionRef{AgentRef: compute.AgentRef{NamespaceID: nsID, AgentID: agentID}, RevisionID: revisionID},
			compute.LogOptions{TailLines: tailLines})
		if errors.Is(err, compute.ErrLogsUnsupported) {
			return app.RuntimeLogs{}, app.ErrRuntimeLogsUnsupported
		}
		if err != nil {
			return app.RuntimeLogs{}, err
		}
		return app.RuntimeLogs{Found: l.Found, Lines: l.Lines, Truncated: l.Truncated, Credentials: l.Credentials}, nil
	}
}

// gatewaysOf finds a running Agent's gateway through the compute driver.
func gatewaysOf(rd compute.Driver) app.GatewayEndpoint {
	if rd == nil {
		return nil
	}
	return func(ctx context.Context, nsID, agentID string) (app.GatewayTarget, bool) {
		ep, ok := rd.GatewayEndpoint(ctx, compute.AgentRef{NamespaceID: nsID, AgentID: agentID})
		return app.GatewayTarget{URL: ep.URL, Token: ep.Token, Password: ep.Password, RevisionID: ep.RevisionID,
			NativeAdminOrigin: ep.NativeAdminOrigin, ProxyIdentity: ep.ProxyIdentity}, ok
	}
}

// nativeAdminCookieDomain is the shared cookie's domain, or "" when the
// native admin UI is off.
func nativeAdminCookieDomain(cfg *config.Config) string {
	if !cfg.NativeAdminUI.Enabled {
		return ""
	}
	return cfg.NativeAdminUI.CookieDomain
}
