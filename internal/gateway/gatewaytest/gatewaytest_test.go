package gatewaytest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/openclaw/occ/internal/gateway/gatewaytest"
)

const wait = 20 * time.Second

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// frame is any frame the fake sends.
type frame struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	OK      bool            `json:"ok"`
	Event   string          `json:"event"`
	Payload json.RawMessage `json:"payload"`
	Error   *struct {
		Code    string          `json:"code"`
		Message string          `json:"message"`
		Details json.RawMessage `json:"details"`
	} `json:"error"`
}

// raw opens a WebSocket to g and reads the challenge.
func raw(t *testing.T, g *gatewaytest.Gateway) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(ctxT(t), g.WSURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(32 << 20)
	t.Cleanup(func() { c.CloseNow() })
	f := read(t, c)
	var ch struct {
		Nonce        string   `json:"nonce"`
		TS           int64    `json:"ts"`
		Capabilities []string `json:"capabilities"`
	}
	if f.Type != "event" || f.Event != "connect.challenge" || json.Unmarshal(f.Payload, &ch) != nil || ch.Nonce == "" || ch.TS <= 0 {
		t.Fatalf("first frame %+v", f)
	}
	return c
}

func read(t *testing.T, c *websocket.Conn) frame {
	t.Helper()
	_, b, err := c.Read(ctxT(t))
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var f frame
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("frame %s: %v", b, err)
	}
	return f
}

func send(t *testing.T, c *websocket.Conn, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	if err := c.Write(ctxT(t), websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
}

// closeCode reads until the connection closes and returns the close code.
func closeCode(t *testing.T, c *websocket.Conn) websocket.StatusCode {
	t.Helper()
	for {
		if _, _, err := c.Read(ctxT(t)); err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

func connectParams(token string) map[string]any {
	return map[string]any{"minProtocol": 4, "maxProtocol": 4,
		"client": map[string]any{"id": "gateway-client", "version": "0.1.0", "platform": "linux", "mode": "backend"},
		"role":   "operator", "scopes": []string{"operator.read", "operator.write", "operator.admin"},
		"auth": map[string]any{"token": token}}
}

// connected returns a raw connection past hello-ok.
func connected(t *testing.T, g *gatewaytest.Gateway) *websocket.Conn {
	t.Helper()
	c := raw(t, g)
	send(t, c, map[string]any{"type": "req", "id": "c", "method": "connect", "params": connectParams(g.Token)})
	if f := read(t, c); f.Type != "res" || f.ID != "c" || !f.OK {
		t.Fatalf("connect: %+v", f)
	}
	return c
}

func TestHandshakeRefusals(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	withClient := func(id, mode string) map[string]any {
		p := connectParams(g.Token)
		p["client"] = map[string]any{"id": id, "version": "1", "platform": "linux", "mode": mode}
		return p
	}
	extra := connectParams(g.Token)
	extra["expectedProfileId"] = "x"
	tests := []struct {
		name    string
		req     map[string]any
		code    string
		message string
		close   websocket.StatusCode
	}{
		{"first request not connect", map[string]any{"type": "req", "id": "1", "method": "health", "params": map[string]any{}},
			"INVALID_REQUEST", "invalid handshake: first request must be connect", websocket.StatusPolicyViolation},
		{"client other than the backend", map[string]any{"type": "req", "id": "1", "method": "connect", "params": withClient("cli", "cli")},
			"NOT_PAIRED", "device identity required", websocket.StatusPolicyViolation},
		{"unknown connect field", map[string]any{"type": "req", "id": "1", "method": "connect", "params": extra},
			"INVALID_REQUEST", "invalid connect params", websocket.StatusPolicyViolation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := raw(t, g)
			send(t, c, tt.req)
			f := read(t, c)
			if f.Type != "res" || f.ID != "1" || f.OK || f.Error == nil || f.Error.Code != tt.code || !strings.Contains(f.Error.Message, tt.message) {
				t.Errorf("answer %+v %+v", f, f.Error)
			}
			if code := closeCode(t, c); code != tt.close {
				t.Errorf("close %v, want %v", code, tt.close)
			}
		})
	}
}

func TestPreConnectFrameLimit(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := raw(t, g)
	_ = c.Write(ctxT(t), websocket.MessageText, []byte(`{"type":"req","id":"1","method":"connect","params":{"x":"`+strings.Repeat("a", 70<<10)+`"}}`))
	if code := closeCode(t, c); code != websocket.StatusMessageTooBig {
		t.Errorf("close %v, want 1009", code)
	}
}

func TestHandshakeTimeout(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{HandshakeTimeout: 50 * time.Millisecond})
	c := raw(t, g)
	if code := closeCode(t, c); code != websocket.StatusNormalClosure {
		t.Errorf("close %v, want 1000", code)
	}
}

func TestMethodRefusals(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := connected(t, g)
	tests := []struct {
		name    string
		method  string
		params  any
		message string
	}{
		{"unknown method", "no.such.method", map[string]any{}, "unknown method"},
		{"connect again", "connect", connectParams(g.Token), "connect"},
		{"extra param", "agents.files.get", map[string]any{"agentId": "main", "name": "AGENTS.md", "expectedMissing": true}, "invalid agents.files.get params"},
		{"no agent", "agents.files.get", map[string]any{"name": "AGENTS.md"}, "agentId"},
		{"unsupported file", "agents.files.get", map[string]any{"agentId": "main", "name": "TOOLS.md"}, `unsupported file "TOOLS.md"`},
		{"unknown agent", "agents.files.set", map[string]any{"agentId": "x", "name": "AGENTS.md", "content": ""}, `agent "x" not found`},
		{"empty expected hash", "agents.files.set", map[string]any{"agentId": "main", "name": "AGENTS.md", "content": "", "expectedHash": ""}, "expectedHash"},
		{"no content", "agents.files.set", map[string]any{"agentId": "main", "name": "AGENTS.md"}, "content"},
		{"probe without provider", "models.probe", map[string]any{}, "provider"},
		{"negative probe timeout", "channels.status", map[string]any{"probe": true, "timeoutMs": -1}, "timeoutMs"},
	}
	for i, tt := range tests {
		id := string(rune('a' + i))
		send(t, c, map[string]any{"type": "req", "id": id, "method": tt.method, "params": tt.params})
		f := read(t, c)
		for f.Type == "event" {
			f = read(t, c)
		}
		if f.ID != id || f.OK || f.Error == nil || f.Error.Code != "INVALID_REQUEST" || !strings.Contains(f.Error.Message, tt.message) {
			t.Errorf("%s: answer %+v %+v", tt.name, f, f.Error)
		}
	}
	// A frame that is not a request (a cancel frame) is answered under its
	// id; the connection stays open.
	send(t, c, map[string]any{"type": "cancel", "id": "z"})
	if f := read(t, c); f.ID != "z" || f.OK || f.Error == nil || !strings.Contains(f.Error.Message, "invalid request frame") {
		t.Errorf("cancel frame answer %+v", f)
	}
	send(t, c, map[string]any{"type": "req", "id": "y", "method": "health", "params": map[string]any{}})
	if f := read(t, c); f.ID != "y" || !f.OK {
		t.Errorf("health after a cancel frame: %+v", f)
	}
	if _, err := os.Stat(g.WorkspaceDir); !os.IsNotExist(err) {
		t.Errorf("a refused request touched the workspace: %v", err)
	}
}

func TestFilesList(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	os.MkdirAll(g.WorkspaceDir, 0o700)
	os.WriteFile(g.WorkspaceDir+"/IDENTITY.md", []byte("x"), 0o600)
	os.WriteFile(g.WorkspaceDir+"/AGENTS.md", []byte("agents"), 0o600)
	c := connected(t, g)
	send(t, c, map[string]any{"type": "req", "id": "l", "method": "agents.files.list", "params": map[string]any{"agentId": "main"}})
	f := read(t, c)
	var r struct {
		Files []struct {
			Name    string `json:"name"`
			Missing bool   `json:"missing"`
			Size    int    `json:"size"`
		} `json:"files"`
	}
	if !f.OK || json.Unmarshal(f.Payload, &r) != nil {
		t.Fatalf("answer %+v", f)
	}
	var names []string
	for _, e := range r.Files {
		names = append(names, e.Name)
		if (e.Name == "AGENTS.md") == e.Missing || (e.Name == "AGENTS.md" && e.Size != 6) {
			t.Errorf("entry %+v", e)
		}
	}
	if strings.Join(names, ",") != "AGENTS.md,SOUL.md,USER.md,BOOTSTRAP.md,MEMORY.md" {
		t.Errorf("listed %v (IDENTITY.md is never listed)", names)
	}
}

func TestHotReload(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := connected(t, g)
	status := func(id string) string {
		send(t, c, map[string]any{"type": "req", "id": id, "method": "channels.status", "params": map[string]any{}})
		f := read(t, c)
		var r struct {
			ChannelOrder []string `json:"channelOrder"`
		}
		if !f.OK || json.Unmarshal(f.Payload, &r) != nil {
			t.Fatalf("answer %+v", f)
		}
		return strings.Join(r.ChannelOrder, ",")
	}
	if got := status("1"); got != "" {
		t.Fatalf("channels before: %q", got)
	}
	doc := `{"gateway":{"mode":"local","auth":{"mode":"token"}},"agents":{"defaults":{"workspace":"` + g.WorkspaceDir + `"}},` +
		`"channels":{"slack":{"botToken":"xoxb-1","appToken":"xapp-1"}}}`
	if err := os.WriteFile(g.ConfigPath, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour)
	os.Chtimes(g.ConfigPath, future, future)
	if got := status("2"); got != "slack" {
		t.Errorf("channels after the edit: %q", got)
	}
}

func TestHTTPRoutes(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{StartupDelay: time.Hour})
	get := func(path string, header ...string) (int, string) {
		req, _ := http.NewRequestWithContext(ctxT(t), http.MethodGet, g.URL+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	tests := []struct {
		path   string
		header []string
		status int
		body   string
	}{
		{"/healthz", nil, 200, `"status":"live"`},
		{"/startupz", nil, 503, `"status":"starting"`},
		{"/readyz", nil, 503, `"failing":["startup-sidecars"]`},
		{"/startupz", nil, 503, `"pendingReason":"startup-sidecars"`},
		{"/", nil, 200, "<title>"},
		{"/nope", nil, 404, ""},
		{"/healthz", []string{"X-Forwarded-For", "198.51.100.9"}, 403, `"type":"proxy_attribution_required"`},
		{"/", []string{"X-Forwarded-Proto", "https"}, 403, "proxy_attribution_required"},
	}
	for _, tt := range tests {
		status, body := get(tt.path, tt.header...)
		if status != tt.status || !strings.Contains(body, tt.body) {
			t.Errorf("GET %s %v = %d %s", tt.path, tt.header, status, body)
		}
	}
}

// TestTrustedProxyControlUI: in trusted-proxy mode the Control UI and every
// other page need the identity header from a trusted proxy (with a
// non-loopback client address) and an allowed user; the probes stay open;
// /__fake/headers echoes what arrived and /__fake/set-cookie sets a
// host-only and a Domain cookie.
func TestTrustedProxyControlUI(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{NoToken: true, Password: "pw-1", Config: map[string]any{
		"gateway": map[string]any{"mode": "local", "trustedProxies": []any{"127.0.0.1"},
			"auth": map[string]any{"mode": "trusted-proxy", "password": "${OPENCLAW_GATEWAY_PASSWORD}",
				"trustedProxy": map[string]any{"userHeader": "x-occ-identity", "allowLoopback": true, "allowUsers": []any{"occ"}}}}}})
	get := func(path string, header ...string) (int, http.Header, string) {
		req, _ := http.NewRequestWithContext(ctxT(t), http.MethodGet, g.URL+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	proxied := []string{"X-Forwarded-For", "198.51.100.9", "X-Occ-Identity", "occ"}
	tests := []struct {
		path   string
		header []string
		status int
		body   string
	}{
		{"/healthz", nil, 200, `"status":"live"`},
		{"/", nil, 403, `"type":"proxy_attribution_required"`},
		{"/", []string{"X-Occ-Identity", "occ"}, 403, "proxy_attribution_required"},
		{"/", []string{"X-Forwarded-For", "127.0.0.1", "X-Occ-Identity", "occ"}, 403, "proxy_attribution_required"},
		{"/", []string{"X-Forwarded-For", "198.51.100.9", "X-Occ-Identity", "someone"}, 403, "trusted_proxy_user_not_allowed"},
		{"/", proxied, 200, "<title>OpenClaw Control (fake)</title>"},
		{"/__fake/headers", append(proxied, "X-Probe", "seen"), 200, `"X-Probe":["seen"]`},
	}
	for _, tt := range tests {
		status, _, body := get(tt.path, tt.header...)
		if status != tt.status || !strings.Contains(body, tt.body) {
			t.Errorf("GET %s %v = %d %s", tt.path, tt.header, status, body)
		}
	}
	_, h, _ := get("/__fake/set-cookie?domain=example.com", proxied...)
	if got := h.Values("Set-Cookie"); len(got) != 2 || !strings.Contains(got[1], "Domain=example.com") {
		t.Errorf("set-cookie = %q", got)
	}
}
