// Package fake is the fake OpenClaw gateway behind gatewaytest and the
// fakegateway binary: the HTTP probes and the WebSocket protocol subset of
// shared/design/reference/openclaw-runtime.md, with fault switches. It is
// written from the notes, not from the client in package gateway, so that
// it checks the client rather than mirroring it.
package fake

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/openclaw/occ/internal/occ"
)

// Protocol facts the fake imitates.
const (
	DefaultVersion   = occ.PinnedOpenClawVersion
	DefaultProtocol  = 4
	maxPayload       = 25 << 20 // policy.maxPayload (26214400)
	maxBufferedBytes = 50 << 20
	preConnectLimit  = 64 << 10 // pre-connect frames are capped at 64 KiB
	// DefaultTickInterval is policy.tickIntervalMs.
	DefaultTickInterval = 30 * time.Second
	// DefaultHandshakeTimeout is how long the fake waits for connect.
	DefaultHandshakeTimeout = 15 * time.Second
)

// Plugin warning kinds.
const (
	PluginInstallFailed = "install_failed"
	PluginAuthRequired  = "auth_required"
)

// PluginWarning makes one plugin fail: Kind install_failed reports it under
// health.plugins.errors, auth_required under health.plugins.unavailable; the
// gateway stays ready (the plugin is disabled, the rest works).
type PluginWarning struct {
	PluginID string
	Kind     string
}

// Slack modes.
const (
	SlackOK           = "ok"
	SlackInvalidAuth  = "invalid_auth"
	SlackOffline      = "offline"
	SlackDisconnected = "disconnected"
)

// Model auth modes.
const (
	ModelAuthOK       = "ok"
	ModelAuthRejected = "rejected"
)

// ModelProbeStatuses are the status buckets of models.probe
// (docs/cli/models.md).
var ModelProbeStatuses = []string{"ok", "auth", "rate_limit", "billing", "timeout", "format", "unknown", "no_model"}

const ()

// Config configures a fake gateway.
type Config struct {
	// Version is server.version and /startupz version (DefaultVersion).
	Version string
	// Protocol is the protocol version the fake speaks (DefaultProtocol).
	Protocol int
	// Token and Password are the shared secrets (OPENCLAW_GATEWAY_TOKEN,
	// OPENCLAW_GATEWAY_PASSWORD); gateway.auth.token/password in the file are
	// used when these are empty.
	Token    string
	Password string
	// ConfigPath is openclaw.json; it is read at start and again whenever it
	// changes (hot reload). HomeDir gives the default workspace.
	ConfigPath string
	StateDir   string
	HomeDir    string
	// AllowUnconfigured skips the gateway.mode=local guard.
	AllowUnconfigured bool
	// Env resolves ${VAR} references in the file (os.Getenv when nil).
	Env func(string) string

	// StartupDelay keeps the gateway "starting" after it listens: /startupz
	// and /readyz answer 503 and connect is refused with UNAVAILABLE
	// (startup-sidecars) and close 1013.
	StartupDelay time.Duration
	// CrashAfter makes the gateway crash that long after Start: the listener
	// and every connection are dropped without a close frame.
	CrashAfter time.Duration
	// ModelAuth "rejected" makes models.probe report status "auth" (the model
	// provider answered 401) for the configured providers.
	ModelAuth string
	// ModelProbe, when set, is the status models.probe reports for a
	// configured provider instead (one of ModelProbeStatuses: ok, auth,
	// rate_limit, billing, timeout, format, unknown, no_model).
	ModelProbe string
	// ModelProbeDelay holds every models.probe answer back that long (a
	// crash answers nothing).
	ModelProbeDelay time.Duration
	// PluginWarnings makes plugins fail (see PluginWarning).
	PluginWarnings []PluginWarning
	// Slack sets how a configured Slack channel behaves: "ok" (default),
	// "invalid_auth" (blocked, terminal disconnect, /readyz failing slack),
	// "offline" (running, not connected, probe cannot reach Slack),
	// "disconnected" (tokens accepted, the socket connection lost, /readyz
	// failing slack).
	Slack string
	// GrantedScopes, when not nil, are the scopes every connection gets
	// instead of those it asked for (e.g. [] to imitate a connection the
	// gateway does not attribute to loopback).
	GrantedScopes []string
	// TickInterval and HandshakeTimeout default to the Default* constants.
	TickInterval     time.Duration
	HandshakeTimeout time.Duration

	// OnRequest, if set, is called with the method name in each request's
	// goroutine before the request is answered (connect excluded); a test may
	// block in it to hold the answer back.
	OnRequest func(method string)

	// Console receives the console log lines (stdout of the real gateway);
	// nil discards them. logging.file, when set, gets JSON lines.
	Console io.Writer
}

// Server is one fake gateway.
type Server struct {
	cfg     Config
	bootID  string
	started time.Time

	mu       sync.Mutex
	fc       *fileConfig
	fcStamp  time.Time
	phase    string // starting, started, draining, crashed
	conns    map[*websocket.Conn]struct{}
	modelOK  bool
	plugins  []PluginWarning
	slack    string
	logFile  *os.File
	requests atomic.Int64

	httpSrv  *http.Server
	handlers sync.WaitGroup // WebSocket connections and requests in flight
	crashed  chan struct{}
	timers   []*time.Timer
	writeMu  sync.Mutex // serializes workspace file writes
}

// New checks the configuration file and returns a server ready to Serve.
// A *ConfigError is a configuration-class failure (exit 78).
func New(cfg Config) (*Server, error) {
	if cfg.Version == "" {
		cfg.Version = DefaultVersion
	}
	if cfg.Protocol == 0 {
		cfg.Protocol = DefaultProtocol
	}
	if cfg.TickInterval <= 0 {
		cfg.TickInterval = DefaultTickInterval
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if cfg.Env == nil {
		cfg.Env = os.Getenv
	}
	if cfg.Console == nil {
		cfg.Console = io.Discard
	}
	switch cfg.ModelAuth {
	case "", ModelAuthOK, ModelAuthRejected:
	default:
		return nil, fmt.Errorf("model auth %q: want ok or rejected", cfg.ModelAuth)
	}
	if cfg.ModelProbe != "" && !slices.Contains(ModelProbeStatuses, cfg.ModelProbe) {
		return nil, fmt.Errorf("model probe %q: want one of %v", cfg.ModelProbe, ModelProbeStatuses)
	}
	switch cfg.Slack {
	case "", SlackOK, SlackInvalidAuth, SlackOffline, SlackDisconnected:
	default:
		return nil, fmt.Errorf("slack %q: want ok, invalid_auth, offline or disconnected", cfg.Slack)
	}
	for _, w := range cfg.PluginWarnings {
		if w.PluginID == "" || (w.Kind != PluginInstallFailed && w.Kind != PluginAuthRequired) {
			return nil, fmt.Errorf("plugin warning %+v: want a plugin ID and kind install_failed or auth_required", w)
		}
	}
	fc, err := loadConfig(cfg.ConfigPath, cfg.HomeDir, cfg.Env)
	if err != nil {
		return nil, err
	}
	if issues := fc.startIssues(firstNonEmpty(cfg.Token, fc.authToken), firstNonEmpty(cfg.Password, fc.authPassword), cfg.AllowUnconfigured); len(issues) > 0 {
		return nil, &ConfigError{Path: cfg.ConfigPath, Issues: issues}
	}
	s := &Server{
		cfg:     cfg,
		bootID:  newUUID(),
		fc:      fc,
		phase:   "starting",
		conns:   map[*websocket.Conn]struct{}{},
		modelOK: cfg.ModelAuth != ModelAuthRejected,
		plugins: slices.Clone(cfg.PluginWarnings),
		slack:   firstNonEmpty(cfg.Slack, SlackOK),
		crashed: make(chan struct{}),
		started: time.Now(),
	}
	s.httpSrv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	if st, err := os.Stat(cfg.ConfigPath); err == nil {
		s.fcStamp = st.ModTime()
	}
	if fc.logFile != "" {
		f, err := os.OpenFile(fc.logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("open logging.file: %w", err)
		}
		s.logFile = f
	}
	if cfg.StateDir != "" {
		if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
			return nil, fmt.Errorf("state directory: %w", err)
		}
	}
	return s, nil
}

// BootID is server.bootId of this process.
func (s *Server) BootID() string { return s.bootID }

// Requests counts the method calls answered so far (connect included).
func (s *Server) Requests() int64 { return s.requests.Load() }

// Crashed is closed when the server crashed (CrashAfter or Crash).
func (s *Server) Crashed() <-chan struct{} { return s.crashed }

// Serve serves on l until Shutdown or a crash; it starts the startup and
// crash timers. After Shutdown or Crash it returns at once.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.phase != "starting" {
		s.mu.Unlock()
		l.Close()
		return nil
	}
	s.started = time.Now()
	srv := s.httpSrv
	if s.cfg.StartupDelay > 0 {
		s.timers = append(s.timers, time.AfterFunc(s.cfg.StartupDelay, s.markStarted))
	} else {
		s.phase = "started"
	}
	if s.cfg.CrashAfter > 0 {
		s.timers = append(s.timers, time.AfterFunc(s.cfg.CrashAfter, s.Crash))
	}
	s.mu.Unlock()
	s.logf("INFO", "listening on ws://%s (PID %d)", l.Addr(), os.Getpid())
	if s.cfg.StartupDelay <= 0 {
		s.logf("INFO", "gateway ready")
	}
	err := srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (s *Server) markStarted() {
	s.mu.Lock()
	if s.phase == "starting" {
		s.phase = "started"
	}
	s.mu.Unlock()
	s.logf("INFO", "gateway ready")
}

// Shutdown drains: probes say draining, every connection gets a shutdown
// event and close 1012, then the listener closes.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.phase == "crashed" || s.phase == "draining" {
		s.mu.Unlock()
		return nil
	}
	s.phase = "draining"
	for _, t := range s.timers {
		t.Stop()
	}
	conns := make([]*websocket.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	srv := s.httpSrv
	s.mu.Unlock()
	s.logf("INFO", "signal received: shutting down")
	for _, c := range conns {
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		_ = writeJSON(wctx, c, map[string]any{"type": "event", "event": "shutdown", "payload": map[string]any{"reason": "gateway stopping"}})
		cancel()
		go c.Close(websocket.StatusServiceRestart, "gateway stopping")
	}
	err := srv.Shutdown(ctx)
	s.closeLog()
	return err
}

// Crash drops everything at once, as a killed process would.
func (s *Server) Crash() {
	s.mu.Lock()
	if s.phase == "crashed" {
		s.mu.Unlock()
		return
	}
	s.phase = "crashed"
	for _, t := range s.timers {
		t.Stop()
	}
	conns := s.conns
	s.conns = map[*websocket.Conn]struct{}{}
	srv := s.httpSrv
	close(s.crashed) // before Serve returns, so its caller sees a crash
	s.mu.Unlock()
	s.logf("ERROR", "fake crash")
	srv.Close()
	for c := range conns {
		c.CloseNow()
	}
	s.closeLog()
}

// Wait waits for the connections and requests still being handled (after
// Shutdown or Crash, so that nothing writes to the workspace afterwards).
func (s *Server) Wait() { s.handlers.Wait() }

func (s *Server) closeLog() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.logFile != nil {
		s.logFile.Close()
		s.logFile = nil
	}
}

// SetModelAuth switches the model credential between accepted and rejected.
func (s *Server) SetModelAuth(rejected bool) {
	s.mu.Lock()
	s.modelOK = !rejected
	s.mu.Unlock()
}

// SetSlack changes the Slack mode (ok, invalid_auth, offline, disconnected).
func (s *Server) SetSlack(mode string) {
	s.mu.Lock()
	s.slack = mode
	s.mu.Unlock()
}

// SetPluginWarnings replaces the failing plugins.
func (s *Server) SetPluginWarnings(w []PluginWarning) {
	s.mu.Lock()
	s.plugins = slices.Clone(w)
	s.mu.Unlock()
}

// config returns the configuration, reloading the file when it changed.
// A file that became invalid keeps the last good configuration, as the
// real gateway's watcher does.
func (s *Server) config() *fileConfig {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.ConfigPath == "" {
		return s.fc
	}
	st, err := os.Stat(s.cfg.ConfigPath)
	if err != nil || st.ModTime().Equal(s.fcStamp) {
		return s.fc
	}
	if fc, err := loadConfig(s.cfg.ConfigPath, s.cfg.HomeDir, s.cfg.Env); err == nil {
		s.fc, s.fcStamp = fc, st.ModTime()
	}
	return s.fc
}

// phaseNow returns the lifecycle phase.
func (s *Server) phaseNow() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phase
}

// logf writes one console line and one JSON line to logging.file.
func (s *Server) logf(level, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	now := time.Now()
	fmt.Fprintf(s.cfg.Console, "%s [gateway] %s\n", now.Format(time.RFC3339), msg)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.logFile != nil {
		b, _ := json.Marshal(map[string]any{"time": now.Format(time.RFC3339Nano), "message": msg, "_meta": map[string]any{"logLevelName": level}})
		s.logFile.Write(append(b, '\n'))
	}
}

// ServeHTTP serves the probes, the control UI placeholder and the WebSocket.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	attr, ok := s.attribute(r)
	if !ok {
		writeHTTPJSON(w, http.StatusForbidden, map[string]any{"error": map[string]any{"type": "proxy_attribution_required", "message": "request carries proxy headers the gateway cannot attribute"}})
		return
	}
	if r.Header.Get("Upgrade") != "" && r.URL.Path == "/" {
		s.serveWS(w, r, attr)
		return
	}
	fc := s.config()
	if !probePath(r.URL.Path) && fc.authMode == "trusted-proxy" {
		// The Control UI and everything but the probes need the trusted
		// identity from a trusted proxy (§3), and an allowed user.
		if !attr.proxied || attr.user == "" {
			writeHTTPJSON(w, http.StatusForbidden, map[string]any{"error": map[string]any{"type": "proxy_attribution_required", "message": "trusted-proxy auth needs the identity header from a trusted proxy"}})
			return
		}
		if len(fc.allowUsers) > 0 && !slices.Contains(fc.allowUsers, attr.user) {
			writeHTTPJSON(w, http.StatusForbidden, map[string]any{"error": map[string]any{"type": "trusted_proxy_user_not_allowed", "message": "the proxy identity is not allowed"}})
			return
		}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	phase := s.phaseNow()
	uptime := time.Since(s.started).Milliseconds()
	switch r.URL.Path {
	case "/healthz":
		writeHTTPJSON(w, http.StatusOK, map[string]any{"ok": true, "status": "live"})
	case "/startupz":
		switch phase {
		case "started":
			writeHTTPJSON(w, http.StatusOK, map[string]any{"ok": true, "status": "started", "version": s.cfg.Version, "uptimeMs": uptime})
		case "starting":
			writeHTTPJSON(w, http.StatusServiceUnavailable, map[string]any{"ok": false, "status": phase, "version": s.cfg.Version, "uptimeMs": uptime,
				"pendingReason": "startup-sidecars"})
		default:
			writeHTTPJSON(w, http.StatusServiceUnavailable, map[string]any{"ok": false, "status": phase, "version": s.cfg.Version, "uptimeMs": uptime})
		}
	case "/readyz":
		var failing []string
		switch phase {
		case "starting":
			failing = []string{"startup-sidecars"}
		case "started":
			failing = s.failing()
		default:
			failing = []string{"gateway-draining"}
		}
		if len(failing) == 0 {
			writeHTTPJSON(w, http.StatusOK, map[string]any{"ready": true, "failing": []string{}, "uptimeMs": uptime})
		} else {
			writeHTTPJSON(w, http.StatusServiceUnavailable, map[string]any{"ready": false, "failing": failing, "uptimeMs": uptime})
		}
	case "/":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><title>OpenClaw Control (fake)</title><p>fake gateway "+s.cfg.Version+"</p>\n")
	case "/__fake/headers":
		// What reached the gateway, for tests of a proxy in front of it.
		writeHTTPJSON(w, http.StatusOK, map[string]any{"host": r.Host, "remoteAddr": r.RemoteAddr, "headers": r.Header})
	case "/__fake/set-cookie":
		// A host-only cookie and one for ?domain=, for tests of a proxy
		// that must drop the latter.
		http.SetCookie(w, &http.Cookie{Name: "fake_host", Value: "1", Path: "/"})
		if d := r.URL.Query().Get("domain"); d != "" {
			w.Header().Add("Set-Cookie", "fake_domain=1; Path=/; Domain="+d)
		}
		writeHTTPJSON(w, http.StatusOK, map[string]any{"ok": true})
	default:
		http.NotFound(w, r)
	}
}

// probePath reports whether path is an unauthenticated probe.
func probePath(path string) bool {
	return path == "/healthz" || path == "/startupz" || path == "/readyz"
}

// failing lists what /readyz reports as failing.
func (s *Server) failing() []string {
	fc := s.config()
	if mode := s.slackMode(fc); fc.slack && (mode == SlackInvalidAuth || mode == SlackDisconnected) {
		return []string{"slack"}
	}
	return nil
}

// attribution is who the gateway thinks a request comes from.
type attribution struct {
	loopback bool   // direct loopback, or through a trusted proxy for a loopback client
	proxied  bool   // came through a trusted proxy
	user     string // trusted-proxy user header
}

// attribute applies the proxy rules of §1.3 and §3: any X-Forwarded-*
// header from a sender that is not a trusted proxy is refused (403), and a
// trusted proxy must name a non-loopback client.
func (s *Server) attribute(r *http.Request) (attribution, bool) {
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	remote := net.ParseIP(host)
	forwarded := false
	for k := range r.Header {
		if strings.HasPrefix(strings.ToLower(k), "x-forwarded-") {
			forwarded = true
		}
	}
	fc := s.config()
	fromProxy := remote != nil && slices.ContainsFunc(fc.trustedProxies, func(p string) bool { return net.ParseIP(p).Equal(remote) })
	if fromProxy && remote.IsLoopback() && fc.authMode == "trusted-proxy" && !fc.allowLoopback {
		fromProxy = false
	}
	if !forwarded {
		if fromProxy && fc.authMode == "trusted-proxy" && r.Header.Get(fc.userHeader) != "" {
			return attribution{}, false // user header without the client address
		}
		return attribution{loopback: remote != nil && remote.IsLoopback()}, true
	}
	if !fromProxy {
		return attribution{}, false
	}
	xff := strings.TrimSpace(strings.Split(r.Header.Get("X-Forwarded-For"), ",")[0])
	client := net.ParseIP(xff)
	if client == nil || client.IsLoopback() {
		return attribution{}, false
	}
	return attribution{proxied: true, user: r.Header.Get(fc.userHeader)}, true
}

// writeHTTPJSON answers with a JSON body.
func writeHTTPJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	b, _ := json.Marshal(v)
	w.Write(append(b, '\n'))
}

// originPatterns turns gateway.controlUi.allowedOrigins into host patterns.
func originPatterns(origins []string) []string {
	var out []string
	for _, o := range origins {
		if u, err := url.Parse(o); err == nil && u.Host != "" {
			out = append(out, u.Host)
		}
	}
	return out
}

// writeJSON sends one frame.
func writeJSON(ctx context.Context, c *websocket.Conn, v any) error {
	b, err := marshal(v)
	if err != nil {
		return err
	}
	return c.Write(ctx, websocket.MessageText, b)
}

// marshal encodes like JSON.stringify would: no HTML escaping.
func marshal(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// secretEqual compares secrets in constant time.
func secretEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
