package gateway_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/gateway"
)

func TestRenderConfig(t *testing.T) {
	t.Parallel()
	base := gateway.RenderInput{Port: 19401, WorkspaceDir: "/data/agt/workspace", LogFile: "/data/agt/openclaw.log"}
	with := func(mut func(*gateway.RenderInput)) gateway.RenderInput {
		in := base
		mut(&in)
		return in
	}
	tests := []struct {
		name string
		in   gateway.RenderInput
		want string
	}{
		{name: "no document", in: base, want: `{
  "agents": {
    "defaults": {
      "workspace": "/data/agt/workspace"
    }
  },
  "gateway": {
    "auth": {
      "mode": "token"
    },
    "bind": "loopback",
    "mode": "local",
    "port": 19401
  },
  "logging": {
    "file": "/data/agt/openclaw.log"
  },
  "models": {
    "catalogRefresh": {
      "enabled": false
    }
  },
  "update": {
    "checkOnStart": false
  }
}
`},
		{name: "owned keys are occ's whole, the rest is kept", in: with(func(in *gateway.RenderInput) {
			in.Document = map[string]any{
				"gateway": map[string]any{"mode": "remote", "bind": "lan", "port": "80", "trustedProxies": []any{"10.0.0.1"},
					"auth":      map[string]any{"mode": "none", "token": "leaked-secret", "password": "pw"},
					"controlUi": map[string]any{"enabled": true}},
				"agents":   map[string]any{"defaults": map[string]any{"workspace": "/elsewhere", "model": map[string]any{"primary": "openai/gpt-x"}}},
				"logging":  map[string]any{"file": "/tmp/x.log", "level": "debug"},
				"models":   map[string]any{"catalogRefresh": map[string]any{"enabled": true, "intervalMs": 5}},
				"update":   map[string]any{"checkOnStart": true, "channel": "stable"},
				"channels": map[string]any{"slack": map[string]any{"botToken": "${SLACK_BOT_TOKEN}", "note": "<a&b>"}},
			}
		}), want: `{
  "agents": {
    "defaults": {
      "model": {
        "primary": "openai/gpt-x"
      },
      "workspace": "/data/agt/workspace"
    }
  },
  "channels": {
    "slack": {
      "botToken": "${SLACK_BOT_TOKEN}",
      "note": "<a&b>"
    }
  },
  "gateway": {
    "auth": {
      "mode": "token"
    },
    "bind": "loopback",
    "mode": "local",
    "port": 19401
  },
  "logging": {
    "file": "/data/agt/openclaw.log",
    "level": "debug"
  },
  "models": {
    "catalogRefresh": {
      "enabled": false,
      "intervalMs": 5
    }
  },
  "update": {
    "checkOnStart": false
  }
}
`},
		{name: "non-objects on owned paths are replaced; numbers kept exactly", in: with(func(in *gateway.RenderInput) {
			in.Document = map[string]any{"gateway": "x", "agents": []any{1}, "models": 5, "update": nil, "logging": true,
				"big": json.Number("12345678901234567890"), "f": 1.5}
		}), want: `{
  "agents": {
    "defaults": {
      "workspace": "/data/agt/workspace"
    }
  },
  "big": 12345678901234567890,
  "f": 1.5,
  "gateway": {
    "auth": {
      "mode": "token"
    },
    "bind": "loopback",
    "mode": "local",
    "port": 19401
  },
  "logging": {
    "file": "/data/agt/openclaw.log"
  },
  "models": {
    "catalogRefresh": {
      "enabled": false
    }
  },
  "update": {
    "checkOnStart": false
  }
}
`},
		{name: "trusted proxy", in: with(func(in *gateway.RenderInput) {
			in.Document = map[string]any{"gateway": map[string]any{"controlUi": map[string]any{"allowedOrigins": []any{"http://evil"}, "basePath": "/"}}}
			in.TrustedProxy = gateway.NativeAdminProxy("http://agent-abc.admin.localhost:8443", "occ-0123456789abcdef0123456789abcdef")
		}), want: `{
  "agents": {
    "defaults": {
      "workspace": "/data/agt/workspace"
    }
  },
  "gateway": {
    "auth": {
      "identityScopes": {
        "occ-0123456789abcdef0123456789abcdef": [
          "operator.admin"
        ]
      },
      "mode": "trusted-proxy",
      "password": "${OPENCLAW_GATEWAY_PASSWORD}",
      "trustedProxy": {
        "allowLoopback": true,
        "allowUsers": [
          "occ-0123456789abcdef0123456789abcdef"
        ],
        "deviceAutoApprove": {
          "enabled": true
        },
        "userHeader": "x-occ-identity"
      }
    },
    "bind": "loopback",
    "controlUi": {
      "allowedOrigins": [
        "http://agent-abc.admin.localhost:8443"
      ],
      "enabled": true
    },
    "mode": "local",
    "port": 19401,
    "trustedProxies": [
      "127.0.0.1"
    ]
  },
  "logging": {
    "file": "/data/agt/openclaw.log"
  },
  "models": {
    "catalogRefresh": {
      "enabled": false
    }
  },
  "update": {
    "checkOnStart": false
  }
}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := gateway.RenderConfig(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("RenderConfig =\n%s\nwant\n%s", got, tt.want)
			}
			again, _ := gateway.RenderConfig(tt.in)
			if !bytes.Equal(got, again) {
				t.Error("RenderConfig is not deterministic")
			}
			if bytes.Contains(got, []byte("leaked-secret")) || bytes.Contains(got, []byte(`"pw"`)) {
				t.Error("a secret reached the file")
			}
		})
	}
}

func TestRenderConfigDoesNotMutate(t *testing.T) {
	t.Parallel()
	doc := map[string]any{"gateway": map[string]any{"mode": "remote"}, "x": []any{map[string]any{"y": 1}}}
	before, _ := json.Marshal(doc)
	if _, err := gateway.RenderConfig(gateway.RenderInput{Document: doc, Port: 1, WorkspaceDir: "/w", LogFile: "/l"}); err != nil {
		t.Fatal(err)
	}
	if after, _ := json.Marshal(doc); !bytes.Equal(before, after) {
		t.Errorf("document changed: %s -> %s", before, after)
	}
}

func TestRenderConfigErrors(t *testing.T) {
	t.Parallel()
	ok := gateway.RenderInput{Port: 19401, WorkspaceDir: "/w", LogFile: "/l.log"}
	tests := []struct {
		name string
		mut  func(*gateway.RenderInput)
		want string
	}{
		{"port zero", func(in *gateway.RenderInput) { in.Port = 0 }, "port"},
		{"port too big", func(in *gateway.RenderInput) { in.Port = 65536 }, "port"},
		{"relative workspace", func(in *gateway.RenderInput) { in.WorkspaceDir = "ws" }, "workspace"},
		{"no log file", func(in *gateway.RenderInput) { in.LogFile = "" }, "log file"},
		{"trusted proxy without proxies", func(in *gateway.RenderInput) { in.TrustedProxy = &gateway.TrustedProxy{} }, "proxy"},
		{"not JSON", func(in *gateway.RenderInput) { in.Document = map[string]any{"x": math.NaN()} }, "not JSON"},
		{"not JSON either", func(in *gateway.RenderInput) { in.Document = map[string]any{"x": make(chan int)} }, "not JSON"},
		{"unknown bind", func(in *gateway.RenderInput) { in.Bind = "tailnet" }, `bind "tailnet"`},
		{"lan with trusted proxy", func(in *gateway.RenderInput) {
			in.Bind, in.TrustedProxy = gateway.BindLAN, gateway.NativeAdminProxy("https://a.example", "occ-x")
		}, "token auth only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := ok
			tt.mut(&in)
			if _, err := gateway.RenderConfig(in); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestModelProvider(t *testing.T) {
	t.Parallel()
	tests := []struct {
		doc  map[string]any
		want string
	}{
		{nil, ""},
		{map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": "openai/gpt-6"}}}, "openai"},
		{map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": map[string]any{"primary": "fakeprov/m1", "fallbacks": []any{"x/y"}}}}}, "fakeprov"},
		{map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": "bare-model"}}}, ""},
		{map[string]any{"agents": "x"}, ""},
	}
	for _, tt := range tests {
		if got := gateway.ModelProvider(tt.doc); got != tt.want {
			t.Errorf("ModelProvider(%v) = %q, want %q", tt.doc, got, tt.want)
		}
	}
}

func TestLaunch(t *testing.T) {
	t.Parallel()
	env := gateway.LaunchEnv(gateway.LaunchInput{Home: "/i/home", ConfigPath: "/i/openclaw.json", StateDir: "/i/state", Token: "tok", SkipChannels: true, ConfigReadOnly: true})
	want := []string{
		"HOME=/i/home",
		"OPENCLAW_CONFIG_PATH=/i/openclaw.json",
		"OPENCLAW_CONFIG_READONLY=1",
		"OPENCLAW_DISABLE_BONJOUR=1",
		"OPENCLAW_EXEC_SHELL_SNAPSHOT=0",
		"OPENCLAW_GATEWAY_TOKEN=tok",
		"OPENCLAW_NO_AUTO_UPDATE=1",
		"OPENCLAW_NO_RESPAWN=1",
		"OPENCLAW_SKIP_CHANNELS=1",
		"OPENCLAW_STATE_DIR=/i/state",
	}
	if strings.Join(env, "\n") != strings.Join(want, "\n") {
		t.Errorf("LaunchEnv =\n%s\nwant\n%s", strings.Join(env, "\n"), strings.Join(want, "\n"))
	}
	env = gateway.LaunchEnv(gateway.LaunchInput{Home: "/h", ConfigPath: "/c", StateDir: "/s", Password: "pw"})
	if j := strings.Join(env, " "); strings.Contains(j, "TOKEN") || strings.Contains(j, "SKIP_CHANNELS") || strings.Contains(j, "READONLY") || !strings.Contains(j, "OPENCLAW_GATEWAY_PASSWORD=pw") {
		t.Errorf("LaunchEnv = %v", env)
	}
	if got := strings.Join(gateway.LaunchArgs(19401), " "); got != "gateway run --port 19401" {
		t.Errorf("LaunchArgs = %q", got)
	}
}

// TestNativeAdminIdentity: the identity is derived from the Agent's
// secret, the same for the same secret, different for another, and does
// not contain the secret.
func TestNativeAdminIdentity(t *testing.T) {
	a, b := gateway.NativeAdminIdentity("secret-a"), gateway.NativeAdminIdentity("secret-b")
	if a != gateway.NativeAdminIdentity("secret-a") || a == b || len(a) != 36 || !strings.HasPrefix(a, "occ-") || strings.Contains(a, "secret") {
		t.Fatalf("identities %q, %q", a, b)
	}
}

func TestRenderConfigBind(t *testing.T) {
	t.Parallel()
	for bind, want := range map[string]string{"": "loopback", gateway.BindLoopback: "loopback", gateway.BindLAN: "lan"} {
		out, err := gateway.RenderConfig(gateway.RenderInput{Port: 8080, Bind: bind, WorkspaceDir: "/w", LogFile: "/l.log",
			Document: map[string]any{"gateway": map[string]any{"bind": "custom"}}})
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Gateway struct {
				Bind string `json:"bind"`
				Auth struct {
					Mode string `json:"mode"`
				} `json:"auth"`
			} `json:"gateway"`
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Gateway.Bind != want || doc.Gateway.Auth.Mode != "token" {
			t.Errorf("Bind %q rendered bind %q auth %q, want %q and token", bind, doc.Gateway.Bind, doc.Gateway.Auth.Mode, want)
		}
	}
}
