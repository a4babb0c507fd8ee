package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigValidateNativeAdminUI runs `occ config validate` on files that
// enable the native admin UI: a consistent one passes, and one whose console
// host lies outside the shared cookie domain fails naming the key.
func TestConfigValidateNativeAdminUI(t *testing.T) {
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
