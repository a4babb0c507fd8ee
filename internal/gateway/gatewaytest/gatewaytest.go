// Package gatewaytest is a protocol-faithful fake of the OpenClaw gateway
// (openclaw@2026.9.6) for tests: in process (Start) or as a standalone
// process (the fakegateway binary, BuildBinary) that the local compute driver
// runs exactly like the real one. Import it only from tests.
//
// It imitates, from shared/design/reference/openclaw-runtime.md:
//
//   - the probes: /healthz 200 {"ok":true,"status":"live"}; /startupz 200
//     {"ok":true,"status":"started","version","uptimeMs"} or 503 while
//     starting (pendingReason "startup-sidecars") or draining; /readyz 200
//     {"ready":true,"failing":[]} or 503 with failing (["startup-sidecars"]
//     while starting, ["gateway-draining"], ["slack"] for a dead Slack
//     account); any X-Forwarded-* header from a sender that is not in
//     gateway.trustedProxies, or naming a loopback client, gets 403
//     {"error":{"type":"proxy_attribution_required"}} on every route; in
//     trusted-proxy mode every page but the probes (the Control UI
//     placeholder at "/" included) also needs the userHeader identity from
//     a trusted proxy (403 proxy_attribution_required) naming a user of
//     trustedProxy.allowUsers when set (403
//     trusted_proxy_user_not_allowed); the WebSocket upgrade stays open to
//     direct loopback (occ's backend client connects with the password);
//   - two pages of its own for tests of a proxy in front of it:
//     /__fake/headers answers {host, remoteAddr, headers} as it received
//     them, /__fake/set-cookie?domain=D sets a host-only cookie and one with
//     Domain=D;
//   - the WebSocket protocol (version 4) at "/": connect.challenge first;
//     connect validated as a closed object; refusals with the error shapes
//     and close codes of §2.3 (token mismatch 1008, no credentials 1008,
//     protocol mismatch 1002, starting UNAVAILABLE 1013, first request not
//     connect 1008, no connect within the handshake timeout: closed); a
//     frame that is not a request after the handshake is answered with
//     INVALID_REQUEST under its id; the loopback backend rule (client gateway-client/backend
//     on direct loopback gets the scopes it asks for; a remote one gets none;
//     other clients need a device); hello-ok with a bootId per process,
//     features.methods, policy (maxPayload 25 MiB, tickIntervalMs) and tick
//     events; pre-connect frames capped at 64 KiB;
//   - the methods health, agents.list, agents.files.list/get/set (real files
//     in agents.defaults.workspace: hash = SHA-256 hex, expectedHash
//     conflicts with details.type agent_file_conflict and currentHash, files
//     written 0600, the workspace created on demand, the six allowed names),
//     config.get, channels.status (with probe), models.probe,
//     models.authStatus and plugins.list, each with its scope (files.set and
//     models.probe need operator.admin) and closed params;
//   - openclaw.json, read at start and again when it changes (hot reload):
//     a file that is not JSON, a wrongly typed key the fake reads (e.g.
//     gateway.port a string), gateway.mode other than "local", token auth
//     without a token, or any key starting with "bogus" (the fake's stand-in
//     for the real schema's unknown-key check) is a configuration failure
//     (the binary exits 78); logging.file gets JSON lines.
//
// Switches (Options fields in process; environment variables for the
// binary, which otherwise takes the real command line and environment:
// `fakegateway gateway run --port N`, OPENCLAW_CONFIG_PATH,
// OPENCLAW_STATE_DIR, OPENCLAW_GATEWAY_TOKEN, OPENCLAW_GATEWAY_PASSWORD,
// HOME):
//
//	Options.StartupDelay    FAKEGATEWAY_STARTUP_DELAY=2s       listening but "starting" for that long:
//	                                                           /startupz and /readyz 503, connect refused
//	                                                           UNAVAILABLE (startup-sidecars, retryAfterMs 500), close 1013
//	(binary only)           FAKEGATEWAY_LISTEN_DELAY=3s        CLI bootstrap before the port opens (connection refused)
//	Options.CrashAfter      FAKEGATEWAY_CRASH_AFTER=5s         crash that long after start: connections dropped
//	                                                           without a close frame; the binary exits
//	                        FAKEGATEWAY_CRASH_EXIT_CODE=1      with this code (default 1)
//	Options.ModelAuth       FAKEGATEWAY_MODEL_AUTH=rejected    the model provider rejects the credential (401):
//	                                                           models.probe of a configured provider (models.providers
//	                                                           or agents.defaults.model.primary) answers status "auth",
//	                                                           error "Authentication failed." (§5); default ok
//	Options.ModelProbe      FAKEGATEWAY_MODEL_PROBE=rate_limit  models.probe of a configured provider reports this
//	                                                           status bucket (ok, auth, rate_limit, billing, timeout,
//	                                                           format, unknown, no_model) instead
//	Options.ModelProbeDelay FAKEGATEWAY_MODEL_PROBE_DELAY=5s   models.probe answers that late
//	Options.PluginWarnings  FAKEGATEWAY_PLUGIN_WARNINGS=a:install_failed,b:auth_required
//	                                                           failed plugins, disabled, gateway still ready:
//	                                                           install_failed in health.plugins.unavailable
//	                                                           {id,state,diagnostic{kind,reason,detail}}, auth_required
//	                                                           in health.plugins.errors {id,origin,activated,
//	                                                           failurePhase:"service",error:"…authentication required…"};
//	                                                           plugins.list state error / auth-required
//	Options.Slack           FAKEGATEWAY_SLACK=invalid_auth     a configured channels.slack is ok (default: running,
//	                                                           connected, probe ok), invalid_auth (not running,
//	                                                           lastError invalid_auth, account blocked, terminal
//	                                                           disconnect, /readyz failing ["slack"]), offline
//	                                                           (running, not connected, probe ENOTFOUND slack.com) or
//	                                                           disconnected (tokens accepted, probe ok, the socket lost:
//	                                                           not connected, lifecycle reconnecting, /readyz failing
//	                                                           ["slack"]); a channels.slack without both tokens is not
//	                                                           configured (not running, no probe) whatever the switch
//	Options.GrantedScopes   FAKEGATEWAY_SCOPES=operator.read   grant exactly these scopes ("none" for []), as a
//	                                                           gateway that does not see direct loopback does
//	Options.TickInterval    FAKEGATEWAY_TICK_INTERVAL=30s      policy.tickIntervalMs and the tick period
//	Options.Protocol        FAKEGATEWAY_PROTOCOL=4             the protocol version the fake speaks
//	Options.Version         FAKEGATEWAY_VERSION=2026.9.6       server.version and /startupz version
//	(binary only)           FAKEGATEWAY_ECHO=A,B               print "environment A=<value>" for each at start (a
//	                                                           careless gateway printing secrets, for redaction tests)
//
// Each models.probe of a configured provider is logged ("model probe of
// provider P: STATUS"), one line per provider call.
//
// The binary exits 0 after SIGTERM or SIGINT (connections get a shutdown
// event and close 1012), 78 on a configuration failure, 1 when the port is
// taken ("another gateway instance is already listening on ws://…"), 2 on a
// bad command line or switch.
package gatewaytest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/gateway/gatewaytest/internal/fake"
)

// PluginWarning makes one plugin fail (Kind PluginInstallFailed or
// PluginAuthRequired).
type PluginWarning = fake.PluginWarning

// Plugin warning kinds.
const (
	PluginInstallFailed = fake.PluginInstallFailed
	PluginAuthRequired  = fake.PluginAuthRequired
)

// Slack modes.
const (
	SlackOK           = fake.SlackOK
	SlackInvalidAuth  = fake.SlackInvalidAuth
	SlackOffline      = fake.SlackOffline
	SlackDisconnected = fake.SlackDisconnected
)

// Options configures Start. The zero value is a ready gateway with a random
// token and an empty workspace in a temporary directory.
type Options struct {
	// Token is the shared gateway token; empty means a random one. Password,
	// if set, is the gateway password.
	Token    string
	Password string
	// NoToken starts the gateway without a shared token (for a
	// trusted-proxy or password gateway); Token is then empty.
	NoToken bool
	// Config is the openclaw.json document to write. When nil a minimal one
	// is used (gateway.mode local, bind loopback, token auth). In either,
	// agents.defaults.workspace defaults to WorkspaceDir and gateway.mode to
	// "local" when absent.
	Config map[string]any
	// ConfigPath uses an existing file instead of Config (for example one
	// made by gateway.RenderConfig), as is.
	ConfigPath string
	// WorkspaceDir defaults to a fresh temporary directory.
	WorkspaceDir string
	// Env resolves ${VAR} references in the configuration.
	Env map[string]string
	// Console receives the gateway's console log; nil discards it.
	Console io.Writer
	// OnRequest, if set, is called with the method name before each request
	// (connect excluded) is answered, in that request's goroutine; a test may
	// block in it to hold the answer back (no timing needed to test
	// cancellation or a connection lost mid-request). It must return by the
	// end of the test: the cleanup waits for requests in flight.
	OnRequest func(method string)

	// The switches (see the package documentation).
	StartupDelay     time.Duration
	CrashAfter       time.Duration
	ModelAuth        string
	ModelProbe       string
	ModelProbeDelay  time.Duration
	PluginWarnings   []PluginWarning
	Slack            string
	GrantedScopes    []string
	TickInterval     time.Duration
	HandshakeTimeout time.Duration
	Protocol         int
	Version          string
}

// Gateway is a running in-process fake gateway.
type Gateway struct {
	// URL is the HTTP base (http://127.0.0.1:PORT), WSURL the WebSocket URL
	// (ws://127.0.0.1:PORT/), Port the port.
	URL   string
	WSURL string
	Port  int
	// Token is the shared token clients must present.
	Token string
	// ConfigPath, StateDir and WorkspaceDir are the gateway's files.
	ConfigPath   string
	StateDir     string
	WorkspaceDir string

	srv  *fake.Server
	done chan struct{}
}

// Start runs a fake gateway on a loopback port until the test ends.
func Start(t testing.TB, o Options) *Gateway {
	t.Helper()
	dir := t.TempDir()
	g := &Gateway{Token: o.Token, StateDir: filepath.Join(dir, "state"), WorkspaceDir: o.WorkspaceDir, done: make(chan struct{})}
	if g.Token == "" && !o.NoToken {
		g.Token = randomToken()
	}
	if g.WorkspaceDir == "" {
		g.WorkspaceDir = filepath.Join(dir, "workspace")
	}
	g.ConfigPath = o.ConfigPath
	if g.ConfigPath == "" {
		g.ConfigPath = filepath.Join(dir, "openclaw.json")
		if err := writeConfig(g.ConfigPath, o.Config, g.WorkspaceDir); err != nil {
			t.Fatalf("gatewaytest: %v", err)
		}
	}
	env := func(k string) string { return o.Env[k] }
	srv, err := fake.New(fake.Config{
		Version: o.Version, Protocol: o.Protocol, Token: g.Token, Password: o.Password,
		ConfigPath: g.ConfigPath, StateDir: g.StateDir, HomeDir: filepath.Join(dir, "home"), Env: env,
		StartupDelay: o.StartupDelay, CrashAfter: o.CrashAfter, ModelAuth: o.ModelAuth,
		ModelProbe: o.ModelProbe, ModelProbeDelay: o.ModelProbeDelay,
		PluginWarnings: o.PluginWarnings, Slack: o.Slack, GrantedScopes: o.GrantedScopes,
		TickInterval: o.TickInterval, HandshakeTimeout: o.HandshakeTimeout, Console: o.Console, OnRequest: o.OnRequest,
	})
	if err != nil {
		t.Fatalf("gatewaytest: start: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("gatewaytest: listen: %v", err)
	}
	g.srv = srv
	g.Port = l.Addr().(*net.TCPAddr).Port
	g.URL = fmt.Sprintf("http://127.0.0.1:%d", g.Port)
	g.WSURL = fmt.Sprintf("ws://127.0.0.1:%d/", g.Port)
	go func() {
		defer close(g.done)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-g.done
		srv.Wait()
	})
	return g
}

// writeConfig writes the document (or a minimal one) with the defaults.
func writeConfig(path string, doc map[string]any, workspace string) error {
	m := map[string]any{}
	if doc != nil {
		b, err := json.Marshal(doc)
		if err != nil {
			return fmt.Errorf("config: %w", err)
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("config: %w", err)
		}
	} else {
		m["gateway"] = map[string]any{"bind": "loopback", "auth": map[string]any{"mode": "token"}}
	}
	gw, _ := m["gateway"].(map[string]any)
	if gw == nil {
		gw = map[string]any{}
		m["gateway"] = gw
	}
	if _, ok := gw["mode"]; !ok {
		gw["mode"] = "local"
	}
	agents, _ := m["agents"].(map[string]any)
	if agents == nil {
		agents = map[string]any{}
		m["agents"] = agents
	}
	defaults, _ := agents["defaults"].(map[string]any)
	if defaults == nil {
		defaults = map[string]any{}
		agents["defaults"] = defaults
	}
	if _, ok := defaults["workspace"]; !ok {
		defaults["workspace"] = workspace
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

// BootID is the hello-ok server.bootId of this gateway.
func (g *Gateway) BootID() string { return g.srv.BootID() }

// Requests counts the requests answered so far (connect included).
func (g *Gateway) Requests() int64 { return g.srv.Requests() }

// Crash drops the listener and every connection without a close frame.
func (g *Gateway) Crash() {
	g.srv.Crash()
	<-g.done
}

// Stop shuts the gateway down gracefully (shutdown event, close 1012).
func (g *Gateway) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = g.srv.Shutdown(ctx)
	<-g.done
}

// SetModelAuthRejected switches the model credential between accepted and
// rejected (models.probe status ok / auth).
func (g *Gateway) SetModelAuthRejected(rejected bool) { g.srv.SetModelAuth(rejected) }

// SetSlack changes how the configured Slack channel behaves.
func (g *Gateway) SetSlack(mode string) { g.srv.SetSlack(mode) }

// SetPluginWarnings replaces the failing plugins.
func (g *Gateway) SetPluginWarnings(w []PluginWarning) { g.srv.SetPluginWarnings(w) }

// BinaryPackage is the import path of the fake gateway binary.
const BinaryPackage = "github.com/openclaw/occ/internal/gateway/gatewaytest/cmd/fakegateway"

// BuildBinary builds the fakegateway binary into a temporary directory of
// the test (a ReachableDir: gateways of a local driver running as root run
// it as users of their own) and returns its path. It needs the go command on PATH; the build
// cache makes repeated builds cheap.
func BuildBinary(t testing.TB) string {
	t.Helper()
	return build(t, "fakegateway", BinaryPackage)
}

// BuildStaticBinary builds the fakegateway binary like BuildBinary, but
// statically linked (CGO_ENABLED=0), for an image without a C library.
func BuildStaticBinary(t testing.TB) string {
	t.Helper()
	return build(t, "fakegateway", BinaryPackage, "CGO_ENABLED=0")
}

// CodexBinaryPackage is the import path of the fake Codex CLI.
const CodexBinaryPackage = "github.com/openclaw/occ/internal/gateway/gatewaytest/cmd/fakecodex"

// BuildCodexBinary builds the fake Codex CLI (cmd/fakecodex) like
// BuildBinary and returns its path.
func BuildCodexBinary(t testing.TB) string {
	t.Helper()
	return build(t, "fakecodex", CodexBinaryPackage)
}

// BuildStaticCodexBinary builds the fake Codex CLI statically linked
// (CGO_ENABLED=0), for an image without a C library.
func BuildStaticCodexBinary(t testing.TB) string {
	t.Helper()
	return build(t, "fakecodex", CodexBinaryPackage, "CGO_ENABLED=0")
}

func build(t testing.TB, name, pkg string, env ...string) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		if root := os.Getenv("GOROOT"); root != "" {
			goCmd = filepath.Join(root, "bin", "go")
		} else {
			t.Fatalf("gatewaytest: go command not found: %v", err)
		}
	}
	out := filepath.Join(ReachableDir(t), name)
	cmd := exec.Command(goCmd, "build", "-o", out, pkg)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gatewaytest: go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// ReachableDir is a new temporary directory (removed with the test) that
// every user may pass through, not list: where a local compute driver
// running as root keeps Agents whose gateways run as users of their own,
// and where their program may live.
func ReachableDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func randomToken() string {
	var b [24]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
