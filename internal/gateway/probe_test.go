package gateway_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
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
