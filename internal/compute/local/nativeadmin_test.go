package local_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/openclaw/occ/internal/gateway"
)

// TestNativeAdminTrustedProxy: a revision with a native admin origin runs
// its gateway in trusted-proxy mode (the rendering of
// gateway.NativeAdminProxy), with the Agent's secret as the password in
// its environment and no token, and occ's client works with that
// password. (The endpoint of either mode is the conformance suite's
// NativeAdmin obligation.)
func TestNativeAdminTrustedProxy(t *testing.T) {
	d, _ := open(t, "")
	ag := newAgent(t, d)
	const origin = "http://agent-0123456789abcdef0123456789abcdef.admin.occ.localhost:8080"
	spec := newSpec(ag, 1)
	spec.NativeAdminOrigin = origin
	ready(t, d, spec)

	ep, ok := d.GatewayEndpoint(context.Background(), ag)
	if !ok || ep.Token != "" || ep.Password == "" || ep.NativeAdminOrigin != origin || ep.RevisionID != spec.RevisionID {
		t.Fatalf("endpoint = %+v, %v", ep, ok)
	}
	env := environ(t, onlyPID(t, d, ag))
	if _, has := env["OPENCLAW_GATEWAY_TOKEN"]; has || env["OPENCLAW_GATEWAY_PASSWORD"] != ep.Password {
		t.Errorf("gateway env: token present %v, password matches %v", has, env["OPENCLAW_GATEWAY_PASSWORD"] == ep.Password)
	}
	raw, err := os.ReadFile(filepath.Join(d.AgentDir(ag), gateway.ConfigFileName))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Gateway struct {
			Auth struct {
				Mode         string
				Password     string
				TrustedProxy struct {
					UserHeader string
					AllowUsers []string
				}
			}
			TrustedProxies []string
			ControlUI      struct{ AllowedOrigins []string } `json:"controlUi"`
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	g := doc.Gateway
	if g.Auth.Mode != "trusted-proxy" || g.Auth.Password != gateway.PasswordEnvRef || g.Auth.TrustedProxy.UserHeader != gateway.NativeAdminUserHeader ||
		len(g.TrustedProxies) != 1 || g.TrustedProxies[0] != "127.0.0.1" || len(g.ControlUI.AllowedOrigins) != 1 || g.ControlUI.AllowedOrigins[0] != origin {
		t.Fatalf("openclaw.json = %s", raw)
	}
	// occ's own client works with the password (workspace files).
	c, err := gateway.Dial(context.Background(), gateway.Options{URL: ep.URL, Password: ep.Password})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetAgentFile(context.Background(), "", "AGENTS.md"); err != nil {
		t.Fatal(err)
	}
	c.Close()
}
