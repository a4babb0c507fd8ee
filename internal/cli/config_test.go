package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigValidate runs `occ config validate` on files: consistent ones
// pass; a native admin UI whose console host lies outside the shared cookie
// domain, bad connection, rate and timeout limits, and bad trusted
// proxies, fail naming the key.
func TestConfigValidate(t *testing.T) {
	for _, tt := range []struct {
		name, file string
		code       int
		want       string
	}{
		{"valid", "publicOrigin: http://occ.localhost:8080\nnativeAdminUI:\n  enabled: true\n  domain: admin.occ.localhost\n  cookieDomain: occ.localhost\n",
			0, "configuration is valid"},
		{"console outside the cookie domain", "publicOrigin: https://console.example.org\nnativeAdminUI:\n  enabled: true\n  domain: admin.example.com\n  cookieDomain: example.com\n",
			1, `nativeAdminUI.cookieDomain: the console host "console.example.org" (publicOrigin) must equal cookieDomain "example.com"`},
		{"no domain", "publicOrigin: https://occ.example.com\nnativeAdminUI:\n  enabled: true\n  cookieDomain: example.com\n",
			1, "nativeAdminUI.domain: required when nativeAdminUI.enabled is true"},
		{"limits", "limits:\n  maxConnections: 4096\n  requestsPerSecondPerPrincipal: 50\nhttp:\n  readTimeout: 1m\n  writeTimeout: 2m\n",
			0, "configuration is valid"},
		{"no in-flight requests", "limits:\n  maxInFlight: 0\n", 1, "limits.maxInFlight: 0 is outside 1..100000"},
		{"no client burst", "limits:\n  burstPerClient: -1\n", 1, "limits.burstPerClient: -1 is outside 1..1000000"},
		{"no write timeout", "http:\n  writeTimeout: 0s\n", 1, "http.writeTimeout: 0s is outside 10ms..1h0m0s"},
		{"header bound over the request bound", "http:\n  readTimeout: 5s\n  readHeaderTimeout: 10s\n", 1,
			"http.readHeaderTimeout: 10s must be at most http.readTimeout (5s)"},
		{"not a duration", "http:\n  idleTimeout: 5\n", 1, "http.idleTimeout"},
		{"trusted proxies", "http:\n  trustedProxies: [10.0.0.0/8, 'fd00::1']\n", 0, "configuration is valid"},
		{"a trusted proxy that is no address", "http:\n  trustedProxies: [10.0.0.0/8, proxy.internal]\n", 1,
			`http.trustedProxies: "proxy.internal" is not a CIDR`},
		{"trusting everyone", "http:\n  trustedProxies: ['::/0']\n", 1,
			`http.trustedProxies: "::/0" trusts every address: any client could then choose its own address`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "occ.yaml")
			if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			code := Main([]string{"config", "validate", "--config", path}, &out, &errOut, Server{})
			if code != tt.code || !strings.Contains(out.String()+errOut.String(), tt.want) {
				t.Fatalf("occ config validate = %d\nstdout %s\nstderr %s\nwant %d and %q", code, out.String(), errOut.String(), tt.code, tt.want)
			}
		})
	}
}
