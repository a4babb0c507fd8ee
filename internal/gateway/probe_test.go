package gateway_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
)

func TestProbeFake(t *testing.T) {
	t.Parallel()
	slack := map[string]any{"channels": map[string]any{"slack": map[string]any{"botToken": "xoxb-1", "appToken": "xapp-1"}}}
	tests := []struct {
		name          string
		opts          gatewaytest.Options
		crash         bool
		kind          error
		live, started bool
		startup       string
		failing       string
	}{
		{name: "ready", live: true, started: true, startup: "started", failing: ""},
		{name: "starting", opts: gatewaytest.Options{StartupDelay: time.Hour}, kind: gateway.ErrNotReady, live: true, startup: "starting"},
		{name: "slack failing", opts: gatewaytest.Options{Config: slack, Slack: gatewaytest.SlackInvalidAuth},
			kind: gateway.ErrNotReady, live: true, started: true, startup: "started", failing: "slack"},
		{name: "slack offline stays ready", opts: gatewaytest.Options{Config: slack, Slack: gatewaytest.SlackOffline},
			live: true, started: true, startup: "started"},
		{name: "crashed", crash: true, kind: gateway.ErrUnreachable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := gatewaytest.Start(t, tt.opts)
			if tt.crash {
				g.Crash()
			}
			h, err := gateway.Probe(ctxT(t), g.URL)
			if tt.kind == nil && err != nil {
				t.Fatalf("Probe: %v", err)
			}
			if tt.kind != nil {
				gwErr(t, err, tt.kind)
			}
			if h.Live != tt.live || h.Started != tt.started || h.StartupStatus != tt.startup || strings.Join(h.Failing, ",") != tt.failing {
				t.Errorf("health = %+v", h)
			}
			if tt.started && (h.Version != gateway.Version || h.Ready != (tt.kind == nil)) {
				t.Errorf("health = %+v", h)
			}
		})
	}
}

func TestProbeThroughProxy(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	target, _ := url.Parse(g.URL)
	// A proxy the gateway does not trust (or one naming a loopback client)
	// is refused on every route, the probes included.
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.SetXForwarded()
	}})
	t.Cleanup(proxy.Close)
	_, err := gateway.Probe(ctxT(t), proxy.URL)
	e := gwErr(t, err, gateway.ErrUnauthorized)
	if e.Status != http.StatusForbidden || e.Code != "proxy_attribution_required" {
		t.Errorf("error %v", e)
	}
}

func TestDialRemoteGetsNoScopes(t *testing.T) {
	t.Parallel()
	// §2.2: through a trusted proxy naming a non-loopback client, the token
	// still connects but every scope is cleared; Dial says so.
	g := gatewaytest.Start(t, gatewaytest.Options{Config: map[string]any{
		"gateway": map[string]any{"auth": map[string]any{"mode": "token"}, "trustedProxies": []any{"127.0.0.1"}}}})
	target, _ := url.Parse(g.URL)
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Header.Set("X-Forwarded-For", "198.51.100.9")
	}})
	t.Cleanup(proxy.Close)
	_, err := gateway.Dial(ctxT(t), gateway.Options{URL: proxy.URL, Token: g.Token})
	if e := gwErr(t, err, gateway.ErrUnauthorized); e.Code != "SCOPES_NOT_GRANTED" {
		t.Errorf("error %v", e)
	}
	// Direct loopback on the same gateway is fine.
	dial(t, g)
}

func TestProbeAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		routes  map[string]func(w http.ResponseWriter)
		kind    error
		started bool
	}{
		{"not JSON", map[string]func(http.ResponseWriter){"/healthz": func(w http.ResponseWriter) { io.WriteString(w, "<html>") }}, gateway.ErrProtocol, false},
		{"server error", map[string]func(http.ResponseWriter){"/healthz": func(w http.ResponseWriter) { w.WriteHeader(500) }}, gateway.ErrProtocol, false},
		{"no probe routes", map[string]func(http.ResponseWriter){}, gateway.ErrProtocol, false},
		{"503 without a body", map[string]func(http.ResponseWriter){
			"/healthz":  func(w http.ResponseWriter) { io.WriteString(w, `{"ok":true,"status":"live"}`) },
			"/startupz": func(w http.ResponseWriter) { w.WriteHeader(503) },
		}, gateway.ErrNotReady, false},
		{"ready says not ready", map[string]func(http.ResponseWriter){
			"/healthz": func(w http.ResponseWriter) { io.WriteString(w, `{"ok":true,"status":"live"}`) },
			"/startupz": func(w http.ResponseWriter) {
				io.WriteString(w, `{"ok":true,"status":"started","version":"x","uptimeMs":5}`)
			},
			"/readyz": func(w http.ResponseWriter) { io.WriteString(w, `{"ready":false,"failing":["x"]}`) },
		}, gateway.ErrNotReady, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if f, ok := tt.routes[r.URL.Path]; ok {
					f(w)
					return
				}
				http.NotFound(w, r)
			}))
			t.Cleanup(srv.Close)
			h, err := gateway.Probe(ctxT(t), srv.URL)
			gwErr(t, err, tt.kind)
			if h.Started != tt.started {
				t.Errorf("health %+v", h)
			}
		})
	}
	for _, bad := range []string{"", "127.0.0.1:80", "ws://127.0.0.1:1", "http://"} {
		if _, err := gateway.Probe(ctxT(t), bad); !errors.Is(err, gateway.ErrProtocol) {
			t.Errorf("Probe(%q) = %v", bad, err)
		}
	}
}

func TestTrustedProxyGateway(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, err := gateway.RenderConfig(gateway.RenderInput{Port: 1, WorkspaceDir: dir + "/ws", LogFile: dir + "/log",
		TrustedProxy: &gateway.TrustedProxy{Proxies: []string{"127.0.0.1"}, AllowLoopback: true, DeviceAutoApprove: true,
			IdentityScopes: map[string][]string{"admin@example.com": {"operator.admin"}}, BackendPassword: true}})
	if err != nil {
		t.Fatal(err)
	}
	path := dir + "/openclaw.json"
	if err := os.WriteFile(path, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	g := gatewaytest.Start(t, gatewaytest.Options{ConfigPath: path, NoToken: true, Env: map[string]string{"OPENCLAW_GATEWAY_PASSWORD": "pw"}})

	// occ itself: the password over direct loopback.
	c, err := gateway.Dial(ctxT(t), gateway.Options{URL: g.WSURL, Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Hello().AuthMethod != "password" {
		t.Errorf("auth method %q", c.Hello().AuthMethod)
	}
	for _, o := range []gateway.Options{{URL: g.WSURL, Password: "wrong"}, {URL: g.WSURL, Token: "a-token"}} {
		if _, err := gateway.Dial(ctxT(t), o); !errors.Is(err, gateway.ErrUnauthorized) {
			t.Errorf("Dial(%+v) = %v", o, err)
		}
	}

	// A user through occ's proxy: attributed by the user header.
	target, _ := url.Parse(g.URL)
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host
		r.Out.Header.Set("X-Forwarded-For", "198.51.100.9")
		r.Out.Header.Set("X-Forwarded-User", "admin@example.com")
	}})
	t.Cleanup(proxy.Close)
	u, err := gateway.Dial(ctxT(t), gateway.Options{URL: proxy.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if h := u.Hello(); h.AuthMethod != "trusted-proxy" || !strings.Contains(strings.Join(h.Scopes, ","), "operator.admin") {
		t.Errorf("hello through the proxy: %s %v", h.AuthMethod, h.Scopes)
	}
}

// TestProbeUsesOneConnection: the three probe routes share one connection
// (through a Kubernetes port-forward each connection is a stream pair made
// over the API server), and the probe leaves none open behind it.
func TestProbeUsesOneConnection(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	opened, closed := 0, 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz":
			io.WriteString(w, `{"ok":true,"status":"live"}`)
		case "/startupz":
			io.WriteString(w, `{"ok":true,"status":"started","version":"x","uptimeMs":5}`)
		case "/readyz":
			io.WriteString(w, `{"ready":true,"failing":[]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			opened++
		case http.StateClosed, http.StateHijacked:
			closed++
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	h, err := gateway.Probe(ctxT(t), srv.URL)
	if err != nil || !h.Ready {
		t.Fatalf("Probe = %+v, %v", h, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		o, c := opened, closed
		mu.Unlock()
		if o == 1 && c == 1 {
			return
		}
		if o > 1 || time.Now().After(deadline) {
			t.Fatalf("the probe opened %d connections and %d are closed; want one, closed", o, c)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
