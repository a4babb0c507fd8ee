package fake

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNewConfigFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		file              string // "" means no file
		token             string
		allowUnconfigured bool
		want              string // "" means success
	}{
		{name: "minimal", file: `{"gateway":{"mode":"local","auth":{"mode":"token"}}}`, token: "t"},
		{name: "token in the file", file: `{"gateway":{"mode":"local","auth":{"mode":"token","token":"t"}}}`},
		{name: "no file", token: "t", want: `gateway.mode`},
		{name: "no file but allowed", token: "t", allowUnconfigured: true},
		{name: "not JSON", file: `{"gateway":`, token: "t", want: "JSON parse error"},
		{name: "remote mode", file: `{"gateway":{"mode":"remote"}}`, token: "t", want: "gateway.mode"},
		{name: "port as a string", file: `{"gateway":{"mode":"local","port":"19401"}}`, token: "t",
			want: "gateway.port: Invalid input: expected number, received string"},
		{name: "unknown key", file: `{"gateway":{"mode":"local","bogusKey":1}}`, token: "t", want: `gateway: Unrecognized key: "bogusKey"`},
		{name: "unknown key in an array", file: `{"gateway":{"mode":"local"},"x":[{"bogus":1}]}`, token: "t", want: `x.0: Unrecognized key: "bogus"`},
		{name: "no token", file: `{"gateway":{"mode":"local","auth":{"mode":"token"}}}`, want: "OPENCLAW_GATEWAY_TOKEN"},
		{name: "bad auth mode", file: `{"gateway":{"mode":"local","auth":{"mode":"magic"}}}`, token: "t", want: "gateway.auth.mode"},
		{name: "trusted proxy with a token", file: `{"gateway":{"mode":"local","trustedProxies":["127.0.0.1"],"auth":{"mode":"trusted-proxy"}}}`,
			token: "t", want: "shared token"},
		{name: "trusted proxy without proxies", file: `{"gateway":{"mode":"local","auth":{"mode":"trusted-proxy"}}}`, want: "trustedProxies"},
		{name: "trusted proxy", file: `{"gateway":{"mode":"local","trustedProxies":["127.0.0.1"],"auth":{"mode":"trusted-proxy"}}}`},
		{name: "workspace not a string", file: `{"gateway":{"mode":"local"},"agents":{"defaults":{"workspace":5}}}`, token: "t",
			want: "agents.defaults.workspace: Invalid input: expected string, received number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "openclaw.json")
			if tt.file != "" {
				if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := New(Config{ConfigPath: path, Token: tt.token, HomeDir: dir, AllowUnconfigured: tt.allowUnconfigured})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "Invalid config at "+path+":") {
				t.Errorf("error %v, want a ConfigError mentioning %q", err, tt.want)
			}
		})
	}
}

func TestNewSwitchValidation(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "openclaw.json")
	os.WriteFile(path, []byte(`{"gateway":{"mode":"local"}}`), 0o600)
	for _, cfg := range []Config{
		{ModelAuth: "maybe"},
		{Slack: "down"},
		{PluginWarnings: []PluginWarning{{PluginID: "", Kind: PluginInstallFailed}}},
		{PluginWarnings: []PluginWarning{{PluginID: "x", Kind: "broken"}}},
	} {
		cfg.ConfigPath, cfg.Token = path, "t"
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

func TestDecodeUTF8(t *testing.T) {
	t.Parallel()
	if got := decodeUTF8([]byte("a\xff\xfeb")); got != "a\uFFFD\uFFFDb" {
		t.Errorf("decodeUTF8 = %q", got)
	}
}
