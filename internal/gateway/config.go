package gateway

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/openclaw/occ/internal/occ"
)

// Version is the pinned OpenClaw release occ runs.
const Version = occ.PinnedOpenClawVersion

// ConfigFileName is the name occ gives the rendered configuration file.
const ConfigFileName = "openclaw.json"

// PasswordEnvRef is the value occ writes for gateway.auth.password: a
// reference the gateway resolves from its environment, so the secret itself
// never reaches the file.
const PasswordEnvRef = "${OPENCLAW_GATEWAY_PASSWORD}"

// The gateway.bind values RenderConfig writes.
const (
	BindLoopback = "loopback"
	BindLAN      = "lan"
)

// RenderInput is what RenderConfig needs.
type RenderInput struct {
	// Document is the Configuration document (a JSON object; nil is {}).
	Document map[string]any
	// Port is gateway.port (the port the gateway listens on).
	Port int
	// Bind is gateway.bind: "" or BindLoopback (the default: loopback
	// only), or BindLAN (every interface, for a gateway in a container that
	// its clients reach through the container network; token auth is
	// required there, and occ renders nothing else).
	Bind string
	// WorkspaceDir is agents.defaults.workspace and LogFile is logging.file;
	// both must be absolute.
	WorkspaceDir string
	LogFile      string
	// TrustedProxy, when set, renders the trusted-proxy auth mode instead of
	// token auth (reference/openclaw-runtime.md §3).
	TrustedProxy *TrustedProxy
	// CodexAppServer, when set, runs the document's primary model through
	// the codex plugin's harness over WebSocket to an app-server that
	// already runs (a dedicated revision): occ owns plugins.entries.codex
	// and the primary model's agentRuntime then. The gateway gets the
	// app-server's URL and, through its environment (CodexTokenEnv), the
	// token; never the model credential.
	CodexAppServer *CodexAppServer
}

// CodexAppServer is where a dedicated gateway's harness listens.
type CodexAppServer struct {
	URL string // ws://127.0.0.1:PORT
}

// CodexTokenEnv is the variable holding the app-server's per-startup
// token in a dedicated gateway's environment; the rendered document names
// it, never its value.
const CodexTokenEnv = "CODEX_APP_SERVER_TOKEN"

// CodexPluginID is the id of the official codex plugin.
const CodexPluginID = "codex"

// renderCodex points the primary model at the codex harness over WebSocket.
func renderCodex(doc map[string]any, as *CodexAppServer) {
	setPath(doc, map[string]any{"enabled": true, "config": map[string]any{"appServer": map[string]any{
		"transport": "websocket", "url": as.URL, "authToken": "${" + CodexTokenEnv + "}"}}},
		"plugins", "entries", CodexPluginID)
	if ref := PrimaryModel(doc); ref != "" {
		setPath(doc, map[string]any{"id": CodexPluginID}, "agents", "defaults", "models", ref, "agentRuntime")
	}
}

// TrustedProxy is the gateway side of the native admin UI proxy.
type TrustedProxy struct {
	// Proxies is gateway.trustedProxies: the addresses occ's proxy connects
	// from (for a same-host proxy, "127.0.0.1"). Required.
	Proxies []string
	// UserHeader names the header carrying the user; default
	// "x-forwarded-user".
	UserHeader string
	// AllowLoopback is required for a proxy on the same host.
	AllowLoopback bool
	// DeviceAutoApprove approves the browser's device identity without a
	// separate device.pair.approve.
	DeviceAutoApprove bool
	// IdentityScopes grants extra scopes per user (e.g. operator.admin).
	IdentityScopes map[string][]string
	// AllowUsers, when set, is gateway.auth.trustedProxy.allowUsers: the
	// only identities the gateway accepts from the proxy.
	AllowUsers []string
	// AllowedOrigins is gateway.controlUi.allowedOrigins (the browser host).
	AllowedOrigins []string
	// BackendPassword adds gateway.auth.password = PasswordEnvRef, so that a
	// backend client (occ itself) can still connect with the password from
	// OPENCLAW_GATEWAY_PASSWORD; a token is not accepted in this mode.
	BackendPassword bool
}

// NativeAdminUserHeader is the header in which occ's native admin proxy
// asserts its identity to a gateway. occ authorizes each person itself
// (exact agent:administer on every request and WebSocket), so a gateway
// trusts one identity, from occ only, and grants it operator.admin for the
// session.
const NativeAdminUserHeader = "x-occ-identity"

// NativeAdminIdentity is the identity a gateway trusts from occ's proxy,
// derived from the Agent's gateway secret: as secret as that secret, and
// different for every Agent, so a process that can reach the gateway's
// loopback port cannot assert it without reading the Agent's secret (the
// gateway's trusted-proxy check only proves the request came from
// loopback).
func NativeAdminIdentity(secret string) string {
	sum := sha256.Sum256([]byte("occ native admin identity\x00" + secret))
	return "occ-" + hex.EncodeToString(sum[:16])
}

// NativeAdminProxy is the gateway side of the native admin UI for a gateway
// whose Control UI is served on origin through occ's proxy on the same host
// (reference/openclaw-runtime.md §3): trusted-proxy auth trusting only
// loopback (with allowLoopback), the one identity occ sends (see
// NativeAdminIdentity) and only it,
// operator.admin for that identity's sessions, automatic approval of the
// browser's device, the Control UI enabled for exactly origin, and
// gateway.auth.password for occ's own backend client (a shared token is
// refused at start in this mode).
func NativeAdminProxy(origin, identity string) *TrustedProxy {
	return &TrustedProxy{
		Proxies:           []string{"127.0.0.1"},
		UserHeader:        NativeAdminUserHeader,
		AllowLoopback:     true,
		DeviceAutoApprove: true,
		IdentityScopes:    map[string][]string{identity: {"operator.admin"}},
		AllowUsers:        []string{identity},
		AllowedOrigins:    []string{origin},
		BackendPassword:   true,
	}
}

// RenderConfig produces openclaw.json: the document without any key the
// owned-keys table refuses (KeyRules: the table's owned and forbidden keys
// are removed whatever their value; Configurations that set them are
// refused long before), with occ's own values laid over it:
//
//	gateway.mode                      "local"
//	gateway.bind                      "loopback", or Bind
//	gateway.port                      Port
//	gateway.auth                      replaced whole: {"mode":"token"}, or the trusted-proxy block
//	gateway.trustedProxies            removed, or TrustedProxy.Proxies
//	gateway.controlUi.enabled         true (trusted-proxy mode with allowed origins only)
//	gateway.controlUi.allowedOrigins  TrustedProxy.AllowedOrigins (trusted-proxy mode only)
//	agents.defaults.workspace         WorkspaceDir
//	logging.file                      LogFile
//	models.catalogRefresh.enabled     false
//	update.checkOnStart               false
//
// No secret is written: the token reaches the gateway through
// OPENCLAW_GATEWAY_TOKEN (LaunchEnv), the password through a reference.
// The output is deterministic: keys sorted at every level, two-space indent,
// no HTML escaping, one trailing newline.
func RenderConfig(in RenderInput) ([]byte, error) {
	if in.Port < 1 || in.Port > 65535 {
		return nil, fmt.Errorf("render openclaw.json: port %d out of range", in.Port)
	}
	if !filepath.IsAbs(in.WorkspaceDir) {
		return nil, fmt.Errorf("render openclaw.json: workspace directory %q is not absolute", in.WorkspaceDir)
	}
	if !filepath.IsAbs(in.LogFile) {
		return nil, fmt.Errorf("render openclaw.json: log file %q is not absolute", in.LogFile)
	}
	bind := in.Bind
	switch bind {
	case "":
		bind = BindLoopback
	case BindLoopback:
	case BindLAN:
		if in.TrustedProxy != nil {
			return nil, errors.New("render openclaw.json: a gateway bound beyond loopback renders token auth only")
		}
	default:
		return nil, fmt.Errorf("render openclaw.json: bind %q is not %s or %s", in.Bind, BindLoopback, BindLAN)
	}
	doc, err := normalize(in.Document)
	if err != nil {
		return nil, fmt.Errorf("render openclaw.json: %w", err)
	}
	removeRefused(doc)

	setPath(doc, "local", "gateway", "mode")
	setPath(doc, bind, "gateway", "bind")
	setPath(doc, json.Number(strconv.Itoa(in.Port)), "gateway", "port")
	gw := doc["gateway"].(map[string]any)
	if tp := in.TrustedProxy; tp != nil {
		if len(tp.Proxies) == 0 {
			return nil, errors.New("render openclaw.json: trusted proxy without proxy addresses")
		}
		header := tp.UserHeader
		if header == "" {
			header = "x-forwarded-user"
		}
		trusted := map[string]any{"userHeader": header}
		if tp.AllowLoopback {
			trusted["allowLoopback"] = true
		}
		if tp.DeviceAutoApprove {
			trusted["deviceAutoApprove"] = map[string]any{"enabled": true}
		}
		if len(tp.AllowUsers) > 0 {
			trusted["allowUsers"] = stringsAny(tp.AllowUsers)
		}
		auth := map[string]any{"mode": "trusted-proxy", "trustedProxy": trusted}
		if len(tp.IdentityScopes) > 0 {
			scopes := map[string]any{}
			for user, s := range tp.IdentityScopes {
				scopes[user] = stringsAny(s)
			}
			auth["identityScopes"] = scopes
		}
		if tp.BackendPassword {
			auth["password"] = PasswordEnvRef
		}
		gw["auth"] = auth
		gw["trustedProxies"] = stringsAny(tp.Proxies)
		if len(tp.AllowedOrigins) > 0 {
			setPath(doc, true, "gateway", "controlUi", "enabled")
			setPath(doc, stringsAny(tp.AllowedOrigins), "gateway", "controlUi", "allowedOrigins")
		}
	} else {
		gw["auth"] = map[string]any{"mode": "token"}
		delete(gw, "trustedProxies")
	}
	setPath(doc, in.WorkspaceDir, "agents", "defaults", "workspace")
	setPath(doc, in.LogFile, "logging", "file")
	setPath(doc, false, "models", "catalogRefresh", "enabled")
	setPath(doc, false, "update", "checkOnStart")
	if in.CodexAppServer != nil {
		renderCodex(doc, in.CodexAppServer)
	}

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("render openclaw.json: %w", err)
	}
	return buf.Bytes(), nil
}

// normalize deep-copies a document through JSON, so that every object is a
// map (sorted on output) and numbers keep their exact text.
func normalize(doc map[string]any) (map[string]any, error) {
	if doc == nil {
		return map[string]any{}, nil
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("document is not JSON: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out map[string]any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// setPath sets m[path...] = v, replacing any non-object on the way.
func setPath(m map[string]any, v any, path ...string) {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

func stringsAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// ModelProvider returns the provider of the document's primary model
// (agents.defaults.model, either "provider/model" or {"primary":
// "provider/model"}), or "" when none is set. It is the provider
// models.probe checks.
func ModelProvider(doc map[string]any) string {
	provider, _, ok := strings.Cut(PrimaryModel(doc), "/")
	if !ok {
		return ""
	}
	return provider
}

// PrimaryModel is the document's primary model reference
// ("openai/gpt-5.4"), or "".
func PrimaryModel(doc map[string]any) string {
	agents, _ := doc["agents"].(map[string]any)
	defaults, _ := agents["defaults"].(map[string]any)
	var ref string
	switch m := defaults["model"].(type) {
	case string:
		ref = m
	case map[string]any:
		ref, _ = m["primary"].(string)
	}
	return ref
}

// LaunchInput is what LaunchEnv needs.
type LaunchInput struct {
	// Home, ConfigPath and StateDir give the instance its own HOME,
	// OPENCLAW_CONFIG_PATH and OPENCLAW_STATE_DIR.
	Home       string
	ConfigPath string
	StateDir   string
	// Token is OPENCLAW_GATEWAY_TOKEN, Password OPENCLAW_GATEWAY_PASSWORD;
	// empty ones are left out.
	Token    string
	Password string
	// SkipChannels sets OPENCLAW_SKIP_CHANNELS=1 (no channel starts).
	SkipChannels bool
	// ConfigReadOnly sets OPENCLAW_CONFIG_READONLY=1: the gateway may not
	// write its configuration file, so it refuses configuration writes
	// itself and keeps no last-known-good copy beside the file.
	ConfigReadOnly bool
}

// LaunchEnv returns the gateway's environment, sorted, without PATH: the
// instance's own directories, its secrets, and the embedding preset
// (OPENCLAW_NO_RESPAWN=1 keeps restarts in the same process,
// OPENCLAW_DISABLE_BONJOUR=1, OPENCLAW_EXEC_SHELL_SNAPSHOT=0,
// OPENCLAW_NO_AUTO_UPDATE=1).
func LaunchEnv(in LaunchInput) []string {
	env := []string{
		"HOME=" + in.Home,
		"OPENCLAW_CONFIG_PATH=" + in.ConfigPath,
		"OPENCLAW_STATE_DIR=" + in.StateDir,
		"OPENCLAW_NO_RESPAWN=1",
		"OPENCLAW_DISABLE_BONJOUR=1",
		"OPENCLAW_EXEC_SHELL_SNAPSHOT=0",
		"OPENCLAW_NO_AUTO_UPDATE=1",
	}
	if in.Token != "" {
		env = append(env, "OPENCLAW_GATEWAY_TOKEN="+in.Token)
	}
	if in.Password != "" {
		env = append(env, "OPENCLAW_GATEWAY_PASSWORD="+in.Password)
	}
	if in.SkipChannels {
		env = append(env, "OPENCLAW_SKIP_CHANNELS=1")
	}
	if in.ConfigReadOnly {
		env = append(env, "OPENCLAW_CONFIG_READONLY=1")
	}
	slices.Sort(env)
	return env
}

// LaunchArgs returns the arguments after the entry point (<pkg>/openclaw.mjs
// for the real gateway, nothing for the fake binary): gateway run --port N.
func LaunchArgs(port int) []string {
	return []string{"gateway", "run", "--port", strconv.Itoa(port)}
}
