package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeFile writes a YAML config into a fresh temporary directory.
func writeFile(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "occ.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// problemsOf returns the problems of a *ValidationError, failing otherwise.
func problemsOf(t *testing.T, err error) []Problem {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error = %v (%T), want *ValidationError", err, err)
	}
	return ve.Problems
}

// wantProblem checks that err names key with a reason containing every want.
func wantProblem(t *testing.T, err error, key string, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want a problem at %q", key)
	}
	for _, p := range problemsOf(t, err) {
		if p.Key != key {
			continue
		}
		ok := true
		for _, w := range want {
			if !strings.Contains(p.Reason, w) {
				ok = false
			}
		}
		if ok {
			if key != "" && !strings.Contains(err.Error(), "config: "+key+": ") && !strings.Contains(err.Error(), "; "+key+": ") {
				t.Errorf("Error() = %q does not name %q", err.Error(), key)
			}
			return
		}
	}
	t.Fatalf("error = %v; want a problem at %q containing %q", err, key, want)
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	c, err := Load(Source{})
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		DataDir:      "./occ-data",
		Listen:       "127.0.0.1:8080",
		PublicOrigin: "http://127.0.0.1:8080",
		DatabaseURL:  "sqlite://./occ-data/occ.db",
		Role:         "all",
		RuntimeDir:   "./occ-data/runtime",
		Compute: Compute{Driver: "local", Local: LocalCompute{UIDRange: "2000000000-2000099999"},
			Kubernetes: KubernetesCompute{RequestTimeout: Duration(10 * time.Second), EndpointAccess: "portForward",
				GatewayPort: 8080, GatewayStateSize: "10Gi", Resources: KubernetesResources{
					Gateway:           KubernetesResourceSpec{RequestsCPU: "100m", RequestsMemory: "1792Mi", LimitsCPU: "4", LimitsMemory: "3Gi"},
					Harness:           KubernetesResourceSpec{RequestsCPU: "100m", RequestsMemory: "768Mi", LimitsCPU: "4", LimitsMemory: "6Gi"},
					ContainerDefaults: KubernetesResourceSpec{RequestsCPU: "100m", RequestsMemory: "128Mi", LimitsCPU: "4", LimitsMemory: "2Gi"},
					QuotaPods:         10, QuotaCPU: "40", QuotaMemory: "64Gi"}},
			Docker: DockerCompute{Host: "unix:///var/run/docker.sock", RequestTimeout: Duration(10 * time.Second), GatewayPort: 8080,
				Resources: DockerResources{Memory: "3Gi", CPUs: "4"}},
			SSH: SSHCompute{ConnectTimeout: Duration(10 * time.Second), OperationTimeout: Duration(3 * time.Minute),
				Runtime:   SSHRuntime{User: "occ-agent", StateRoot: "/var/lib/occ-ssh", UnitDirectory: "/etc/systemd/system"},
				PortRange: SSHPortRange{Start: 20000, End: 20999}}},
		Secrets: Secrets{KeysetFile: "./occ-data/secrets.keyset"},
		Limits: Limits{DefaultBodyBytes: 65536, AgentCreateBodyBytes: 458752, WorkspaceFileBodyBytes: 49152,
			MaxConnections: 1024, MaxInFlight: 256, RequestsPerSecondPerPrincipal: 20, BurstPerPrincipal: 100,
			RequestsPerSecondPerClient: 100, BurstPerClient: 400},
		HTTP: HTTP{ReadHeaderTimeout: Duration(10 * time.Second), ReadTimeout: Duration(30 * time.Second),
			WriteTimeout: Duration(60 * time.Second), IdleTimeout: Duration(120 * time.Second), MaxHeaderBytes: 65536},
		Worker: Worker{
			ConvergenceTimeout: Duration(900 * time.Second),
			MaxAttempts:        5,
			PollInterval:       Duration(100 * time.Millisecond),
			Concurrency:        0,
			JobTimeout:         Duration(2 * time.Minute),
			StraySweepInterval: Duration(time.Minute),
		},
		Auth: Auth{
			SessionLifetime:          Duration(168 * time.Hour),
			SignInFailuresPerAccount: 10,
			SignInFailuresPerClient:  20,
			SignInConcurrency:        2,
		},
		Logging:       Logging{Level: "info", Format: "text", AccessLog: true},
		NativeAdminUI: NativeAdminUI{RecheckInterval: Duration(25 * time.Second)},
		Runtime:       Runtime{OpenClawVersion: "2026.9.6", NodeVersion: "24"},
		Audit:         Audit{Retention: Duration(9600 * time.Hour), ExportDir: "./occ-data/audit-export"},
		Streams:       Streams{MaxPerPrincipal: 16, RecheckInterval: Duration(5 * time.Second), PollInterval: Duration(5 * time.Second)},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", c, want)
	}
	if p, ok := c.SQLitePath(); !ok || p != "./occ-data/occ.db" {
		t.Errorf("SQLitePath() = %q, %v", p, ok)
	}
}

func TestEmptyFileIsDefaults(t *testing.T) {
	t.Parallel()
	for _, body := range []string{"", "\n# only a comment\n", "---\n", "~\n"} {
		c, err := Load(Source{File: writeFile(t, body)})
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		def, _ := Load(Source{})
		if !reflect.DeepEqual(c, def) {
			t.Errorf("%q: got %+v, want defaults", body, c)
		}
	}
}

func TestSourcesOverrideInOrder(t *testing.T) {
	t.Parallel()
	file := writeFile(t, `
dataDir: /file
listen: 127.0.0.1:1001
role: api
compute:
  driver: kubernetes
  kubernetes:
    inCluster: true
    images:
      gateway: registry.example/openclaw:1
worker:
  maxAttempts: 7
  pollInterval: 50ms
logging:
  level: debug
runtime:
  nodeVersion: 25
`)
	tests := []struct {
		name  string
		env   []string
		flags map[string]string
		check func(t *testing.T, c *Config)
	}{
		{
			name: "file over defaults",
			check: func(t *testing.T, c *Config) {
				if c.DataDir != "/file" || c.Listen != "127.0.0.1:1001" || c.Role != "api" || c.Compute.Driver != "kubernetes" ||
					c.Worker.MaxAttempts != 7 || c.Worker.PollInterval.D() != 50*time.Millisecond ||
					c.Logging.Level != "debug" || c.Runtime.NodeVersion != "25" {
					t.Errorf("file not applied: %+v", c)
				}
				if c.Worker.Concurrency != 0 || c.Logging.Format != "text" {
					t.Errorf("defaults lost: %+v", c)
				}
				if c.DatabaseURL != "sqlite:///file/occ.db" || c.RuntimeDir != "/file/runtime" ||
					c.Secrets.KeysetFile != "/file/secrets.keyset" || c.PublicOrigin != "http://127.0.0.1:1001" ||
					c.Audit.ExportDir != "/file/audit-export" {
					t.Errorf("derived values: %+v", c)
				}
			},
		},
		{
			name: "env over file",
			env: []string{
				"OCC_DATA_DIR=/env", "OCC_WORKER_MAX_ATTEMPTS=9", "OCC_COMPUTE=local",
				"OCC_NATIVE_ADMIN_UI_ENABLED=false", "OCC_WORKER_POLL_INTERVAL=1s",
				"PATH=/usr/bin", "OCC_CONFIG=/ignored.yaml", "OCC_TEST_WHATEVER=1", "OCC_LISTEN=",
			},
			check: func(t *testing.T, c *Config) {
				if c.DataDir != "/env" || c.Worker.MaxAttempts != 9 || c.Compute.Driver != "local" ||
					c.Worker.PollInterval.D() != time.Second {
					t.Errorf("env not applied: %+v", c)
				}
				if c.Listen != "127.0.0.1:1001" || c.Role != "api" {
					t.Errorf("file values lost (an empty env value must not override): %+v", c)
				}
				if c.DatabaseURL != "sqlite:///env/occ.db" || c.RuntimeDir != "/env/runtime" {
					t.Errorf("derived values must follow the final dataDir: %+v", c)
				}
			},
		},
		{
			name: "flags over env",
			env:  []string{"OCC_DATA_DIR=/env", "OCC_COMPUTE_DRIVER=local", "OCC_ROLE=worker"},
			flags: map[string]string{"dataDir": "/flag", "compute.driver": "kubernetes", "listen": "127.0.0.1:2002",
				"compute.kubernetes.inCluster": "true", "compute.kubernetes.images.gateway": "registry.example/openclaw:1"},
			check: func(t *testing.T, c *Config) {
				if c.DataDir != "/flag" || c.Compute.Driver != "kubernetes" || c.Listen != "127.0.0.1:2002" || c.Role != "worker" {
					t.Errorf("flags not applied: %+v", c)
				}
				if c.PublicOrigin != "http://127.0.0.1:2002" || c.DatabaseURL != "sqlite:///flag/occ.db" {
					t.Errorf("derived values: %+v", c)
				}
			},
		},
		{
			name: "explicit dependent values are kept",
			env: []string{
				"OCC_DATABASE_URL=postgres://db.example/occ", "OCC_PUBLIC_ORIGIN=https://occ.example.com",
				"OCC_RUNTIME_DIR=/shared/runtime", "OCC_SECRETS_KEYSET_FILE=/etc/occ/keyset",
			},
			check: func(t *testing.T, c *Config) {
				if c.DatabaseURL != "postgres://db.example/occ" || c.PublicOrigin != "https://occ.example.com" ||
					c.RuntimeDir != "/shared/runtime" || c.Secrets.KeysetFile != "/etc/occ/keyset" {
					t.Errorf("explicit values overwritten: %+v", c)
				}
				if _, ok := c.SQLitePath(); ok {
					t.Error("SQLitePath() ok for a PostgreSQL URL")
				}
			},
		},
		{
			name: "bootstrap credentials from env only",
			env: []string{
				"OCC_BOOTSTRAP_ADMIN_PASSWORD=correct horse battery staple",
				"OCC_BOOTSTRAP_API_KEY=occ_" + strings.Repeat("a", 32),
			},
			check: func(t *testing.T, c *Config) {
				if c.Auth.BootstrapAdminPassword != "correct horse battery staple" || c.Auth.BootstrapAPIKey != "occ_"+strings.Repeat("a", 32) {
					t.Errorf("bootstrap values: %+v", c.Auth)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Load(Source{File: file, Env: tt.env, Flags: tt.flags})
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

func TestListenWithoutHostGivesLocalhostOrigin(t *testing.T) {
	t.Parallel()
	c, err := Load(Source{Flags: map[string]string{"listen": ":9090"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.PublicOrigin != "http://localhost:9090" {
		t.Errorf("PublicOrigin = %q", c.PublicOrigin)
	}
}

func TestFileSchemaProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		key  string
		want []string
	}{
		{"unknown top-level key", "dataDir: /x\nlisten_addr: x\n", "listen_addr", []string{"unknown key", "occ.yaml:2"}},
		{"unknown nested key", "worker:\n  maxAttempts: 3\n  maxAttempt: 3\n", "worker.maxAttempt", []string{"unknown key", ":3"}},
		{"unknown key in list item", "backends:\n  - id: a\n    type: github\n  - id: b\n    type: github\n    kind: x\n", "backends[1].kind", []string{"unknown key", ":6"}},
		{"unknown key in map value", "presets:\n  - name: p\n    plugins:\n      slack:\n        approval: none\n", "presets[0].plugins.slack.approval", []string{"unknown key"}},
		{"unknown key in ssh host", "compute:\n  ssh:\n    hosts:\n      team:\n        address: h\n        sudo: true\n", "compute.ssh.hosts.team.sudo", []string{"unknown key"}},
		{"key with wrong case", "DataDir: /x\n", "DataDir", []string{"unknown key"}},
		{"duplicate key", "role: api\nrole: worker\n", "role", []string{"duplicate key"}},
		{"int wanted", "worker:\n  maxAttempts: many\n", "worker.maxAttempts", []string{"want an integer", `"many"`, ":2"}},
		{"int wanted not float", "limits:\n  defaultBodyBytes: 1.5\n", "limits.defaultBodyBytes", []string{"want an integer"}},
		{"bool wanted", "nativeAdminUI:\n  enabled: maybe\n", "nativeAdminUI.enabled", []string{"want true or false"}},
		{"duration wanted", "worker:\n  convergenceTimeout: 900\n", "worker.convergenceTimeout", []string{"want a duration"}},
		{"bad duration", "auth:\n  sessionLifetime: 7days\n", "auth.sessionLifetime", []string{"want a duration"}},
		{"mapping wanted", "worker: 5\n", "worker", []string{"want a mapping, got a scalar"}},
		{"scalar wanted", "listen:\n  host: x\n", "listen", []string{"want a string, got a mapping"}},
		{"list wanted", "backends:\n  id: a\n", "backends", []string{"want a list, got a mapping"}},
		{"top level not a mapping", "- a\n- b\n", "", []string{"want a mapping, got a list"}},
		{"password literal", "auth:\n  adminPassword: hunter2\n", "auth.adminPassword", []string{"put credentials in the environment"}},
		{"token literal in list", "backends:\n  - id: gh\n    type: github\n    token: ghp_x\n", "backends[0].token", []string{"put credentials in the environment"}},
		{"api key literal", "metrics:\n  API_KEY: abc\n", "metrics.API_KEY", []string{"put credentials"}},
		{"private key literal", "compute:\n  sshPrivateKey: abc\n", "compute.sshPrivateKey", []string{"put credentials"}},
		{"bootstrap key not in file", "auth:\n  bootstrapAPIKey: occ_xxx\n", "auth.bootstrapAPIKey", []string{"put credentials"}},
		{"client secret literal", "clientSecret: s3cr3t\n", "clientSecret", []string{"put credentials"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(Source{File: writeFile(t, tt.body)})
			wantProblem(t, err, tt.key, tt.want...)
		})
	}
}

func TestFileReportsEveryProblem(t *testing.T) {
	t.Parallel()
	_, err := Load(Source{File: writeFile(t, "a: 1\nworker:\n  b: 2\n  maxAttempts: x\n")})
	got := problemsOf(t, err)
	var keys []string
	for _, p := range got {
		keys = append(keys, p.Key)
	}
	if want := []string{"a", "worker.b", "worker.maxAttempts"}; !slices.Equal(keys, want) {
		t.Errorf("keys = %v, want %v", keys, want)
	}
}

// TestComputeShorthand: `compute: kubernetes` in a file is the word the
// flag and the variable take (`--compute`, OCC_COMPUTE); the long form
// still works, and a wrong word is refused naming compute.driver.
func TestComputeShorthand(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{"compute: kubernetes\n", "compute:\n  driver: kubernetes\n"} {
		c, err := Load(Source{File: writeFile(t, doc)})
		if err != nil && !strings.Contains(err.Error(), "compute.kubernetes") {
			t.Fatalf("%q: %v", doc, err)
		}
		if err == nil && c.Compute.Driver != "kubernetes" {
			t.Fatalf("%q: driver %q", doc, c.Compute.Driver)
		}
		if err != nil && strings.Contains(err.Error(), "want a mapping") {
			t.Fatalf("%q: %v", doc, err)
		}
	}
	_, err := Load(Source{File: writeFile(t, "compute: k8s\n")})
	wantProblem(t, err, "compute.driver", "not one of")
	_, err = Load(Source{File: writeFile(t, "compute: [local]\n")})
	wantProblem(t, err, "compute", "want a mapping")
}

func TestFileErrors(t *testing.T) {
	t.Parallel()
	if _, err := Load(Source{File: filepath.Join(t.TempDir(), "missing.yaml")}); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: err = %v", err)
	}
	_, err := Load(Source{File: writeFile(t, "dataDir: [unclosed\n")})
	if err == nil || !strings.Contains(err.Error(), "parse") {
		t.Errorf("bad YAML: err = %v", err)
	}
	_, err = Load(Source{File: writeFile(t, "role: api\n---\nrole: worker\n")})
	if err == nil || !strings.Contains(err.Error(), "more than one YAML document") {
		t.Errorf("two documents: err = %v", err)
	}
}

func TestFileLists(t *testing.T) {
	t.Parallel()
	c, err := Load(Source{File: writeFile(t, `
backends:
  - id: chatgpt-main
    type: chatgpt
    url: https://chatgpt.example
  - id: gh
    type: github
presets:
  - name: Standard Codex
    executionMode: dedicated
    backendId: chatgpt-main
    plugins:
      slack:
        approvalPolicy: write_actions
      github@1: {}
pluginCatalogs:
  - id: default
    plugins: [slack, github@1]
`)})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Backends: []Backend{{ID: "chatgpt-main", Type: "chatgpt", URL: "https://chatgpt.example"}, {ID: "gh", Type: "github"}},
		Presets: []Preset{{
			Name: "Standard Codex", ExecutionMode: "dedicated", BackendID: "chatgpt-main",
			Plugins: map[string]PluginSelection{"slack": {ApprovalPolicy: "write_actions"}, "github@1": {}},
		}},
		PluginCatalogs: []PluginCatalog{{ID: "default", Plugins: []string{"slack", "github@1"}}},
	}
	if !reflect.DeepEqual(c.Backends, want.Backends) || !reflect.DeepEqual(c.Presets, want.Presets) ||
		!reflect.DeepEqual(c.PluginCatalogs, want.PluginCatalogs) {
		t.Errorf("lists:\n got %+v %+v %+v\nwant %+v %+v %+v", c.Backends, c.Presets, c.PluginCatalogs,
			want.Backends, want.Presets, want.PluginCatalogs)
	}
}

func TestEnvProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  []string
		key  string
		want []string
	}{
		{"unknown OCC_ variable", []string{"OCC_DATADIR=/x"}, "OCC_DATADIR", []string{"names no config key", "did you mean OCC_DATA_DIR?"}},
		{"unknown OCC_ variable far from any", []string{"OCC_FROBNICATE=1"}, "OCC_FROBNICATE", []string{"names no config key"}},
		{"list keys are file-only", []string{"OCC_BACKENDS=x"}, "OCC_BACKENDS", []string{"names no config key"}},
		{"bad integer", []string{"OCC_WORKER_MAX_ATTEMPTS=lots"}, "worker.maxAttempts", []string{"OCC_WORKER_MAX_ATTEMPTS", "want an integer"}},
		{"bad bool", []string{"OCC_NATIVE_ADMIN_UI_ENABLED=sure"}, "nativeAdminUI.enabled", []string{"OCC_NATIVE_ADMIN_UI_ENABLED", "want true or false"}},
		{"bad duration", []string{"OCC_AUTH_SESSION_LIFETIME=1week"}, "auth.sessionLifetime", []string{"OCC_AUTH_SESSION_LIFETIME", "want a duration"}},
		{"alias disagrees", []string{"OCC_COMPUTE=docker", "OCC_COMPUTE_DRIVER=ssh"}, "compute.driver", []string{"disagree"}},
		{"validated after load", []string{"OCC_ROLE=boss"}, "role", []string{`"boss" is not one of all, api, worker`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(Source{Env: tt.env})
			wantProblem(t, err, tt.key, tt.want...)
		})
	}
}

// TestClientVariablesAreNotSettings: the command line client's variables
// in the environment of `occ serve` are passed over, not refused.
func TestClientVariablesAreNotSettings(t *testing.T) {
	t.Parallel()
	c, err := Load(Source{Env: []string{"OCC_URL=http://127.0.0.1:9999", "OCC_KEY=occ_sk_x", "OCC_KEY_FILE=/k", "OCC_NAMESPACE=team", "OCC_LISTEN=127.0.0.1:7777"}})
	if err != nil || c.Listen != "127.0.0.1:7777" {
		t.Fatalf("Load with the client's variables = %+v, %v", c, err)
	}
}

func TestFlagProblems(t *testing.T) {
	t.Parallel()
	_, err := Load(Source{Flags: map[string]string{"data-dir": "/x"}})
	wantProblem(t, err, "data-dir", "flag names no config key")
	_, err = Load(Source{Flags: map[string]string{"worker.concurrency": "two"}})
	wantProblem(t, err, "worker.concurrency", "want an integer")
}

func TestEnvNames(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"dataDir":                                                       "OCC_DATA_DIR",
		"listen":                                                        "OCC_LISTEN",
		"databaseURL":                                                   "OCC_DATABASE_URL",
		"databaseConnections":                                           "OCC_DATABASE_CONNECTIONS",
		"publicOrigin":                                                  "OCC_PUBLIC_ORIGIN",
		"runtimeDir":                                                    "OCC_RUNTIME_DIR",
		"compute.driver":                                                "OCC_COMPUTE_DRIVER",
		"worker.maxAttempts":                                            "OCC_WORKER_MAX_ATTEMPTS",
		"nativeAdminUI.enabled":                                         "OCC_NATIVE_ADMIN_UI_ENABLED",
		"nativeAdminUI.cookieDomain":                                    "OCC_NATIVE_ADMIN_UI_COOKIE_DOMAIN",
		"auth.signInFailuresPerAccount":                                 "OCC_AUTH_SIGN_IN_FAILURES_PER_ACCOUNT",
		"runtime.openclawVersion":                                       "OCC_RUNTIME_OPENCLAW_VERSION",
		"limits.workspaceFileBodyBytes":                                 "OCC_LIMITS_WORKSPACE_FILE_BODY_BYTES",
		"secrets.keysetFile":                                            "OCC_SECRETS_KEYSET_FILE",
		"metrics.listen":                                                "OCC_METRICS_LISTEN",
		"worker.convergenceTimeout":                                     "OCC_WORKER_CONVERGENCE_TIMEOUT",
		"logging.accessLog":                                             "OCC_LOGGING_ACCESS_LOG",
		"logging.format":                                                "OCC_LOGGING_FORMAT",
		"auth.sessionLifetime":                                          "OCC_AUTH_SESSION_LIFETIME",
		"limits.agentCreateBodyBytes":                                   "OCC_LIMITS_AGENT_CREATE_BODY_BYTES",
		"nativeAdminUI.domain":                                          "OCC_NATIVE_ADMIN_UI_DOMAIN",
		"nativeAdminUI.recheckInterval":                                 "OCC_NATIVE_ADMIN_UI_RECHECK_INTERVAL",
		"auth.signInFailuresPerClient":                                  "OCC_AUTH_SIGN_IN_FAILURES_PER_CLIENT",
		"auth.signInConcurrency":                                        "OCC_AUTH_SIGN_IN_CONCURRENCY",
		"runtime.nodeVersion":                                           "OCC_RUNTIME_NODE_VERSION",
		"limits.defaultBodyBytes":                                       "OCC_LIMITS_DEFAULT_BODY_BYTES",
		"worker.pollInterval":                                           "OCC_WORKER_POLL_INTERVAL",
		"worker.concurrency":                                            "OCC_WORKER_CONCURRENCY",
		"compute.gatewayCommand":                                        "OCC_COMPUTE_GATEWAY_COMMAND",
		"compute.harnessCommand":                                        "OCC_COMPUTE_HARNESS_COMMAND",
		"worker.jobTimeout":                                             "OCC_WORKER_JOB_TIMEOUT",
		"worker.rescueAfter":                                            "OCC_WORKER_RESCUE_AFTER",
		"worker.straySweepInterval":                                     "OCC_WORKER_STRAY_SWEEP_INTERVAL",
		"logging.level":                                                 "OCC_LOGGING_LEVEL",
		"role":                                                          "OCC_ROLE",
		"credentialGateway.url":                                         "OCC_CREDENTIAL_GATEWAY_URL",
		"limits.maxConnections":                                         "OCC_LIMITS_MAX_CONNECTIONS",
		"limits.maxInFlight":                                            "OCC_LIMITS_MAX_IN_FLIGHT",
		"limits.requestsPerSecondPerPrincipal":                          "OCC_LIMITS_REQUESTS_PER_SECOND_PER_PRINCIPAL",
		"limits.burstPerPrincipal":                                      "OCC_LIMITS_BURST_PER_PRINCIPAL",
		"limits.requestsPerSecondPerClient":                             "OCC_LIMITS_REQUESTS_PER_SECOND_PER_CLIENT",
		"limits.burstPerClient":                                         "OCC_LIMITS_BURST_PER_CLIENT",
		"http.readHeaderTimeout":                                        "OCC_HTTP_READ_HEADER_TIMEOUT",
		"http.readTimeout":                                              "OCC_HTTP_READ_TIMEOUT",
		"http.writeTimeout":                                             "OCC_HTTP_WRITE_TIMEOUT",
		"http.idleTimeout":                                              "OCC_HTTP_IDLE_TIMEOUT",
		"http.maxHeaderBytes":                                           "OCC_HTTP_MAX_HEADER_BYTES",
		"http.trustedProxies":                                           "OCC_HTTP_TRUSTED_PROXIES",
		"audit.retention":                                               "OCC_AUDIT_RETENTION",
		"audit.exportDir":                                               "OCC_AUDIT_EXPORT_DIR",
		"streams.maxPerPrincipal":                                       "OCC_STREAMS_MAX_PER_PRINCIPAL",
		"streams.recheckInterval":                                       "OCC_STREAMS_RECHECK_INTERVAL",
		"streams.pollInterval":                                          "OCC_STREAMS_POLL_INTERVAL",
		"compute.local.uidRange":                                        "OCC_COMPUTE_LOCAL_UID_RANGE",
		"compute.docker.host":                                           "OCC_COMPUTE_DOCKER_HOST",
		"compute.ssh.identityFile":                                      "OCC_COMPUTE_SSH_IDENTITY_FILE",
		"compute.ssh.knownHostsFile":                                    "OCC_COMPUTE_SSH_KNOWN_HOSTS_FILE",
		"compute.ssh.connectTimeout":                                    "OCC_COMPUTE_SSH_CONNECT_TIMEOUT",
		"compute.ssh.operationTimeout":                                  "OCC_COMPUTE_SSH_OPERATION_TIMEOUT",
		"compute.ssh.runtime.nodePath":                                  "OCC_COMPUTE_SSH_RUNTIME_NODE_PATH",
		"compute.ssh.runtime.openclawPath":                              "OCC_COMPUTE_SSH_RUNTIME_OPENCLAW_PATH",
		"compute.ssh.runtime.user":                                      "OCC_COMPUTE_SSH_RUNTIME_USER",
		"compute.ssh.runtime.stateRoot":                                 "OCC_COMPUTE_SSH_RUNTIME_STATE_ROOT",
		"compute.ssh.runtime.unitDirectory":                             "OCC_COMPUTE_SSH_RUNTIME_UNIT_DIRECTORY",
		"compute.ssh.portRange.start":                                   "OCC_COMPUTE_SSH_PORT_RANGE_START",
		"compute.ssh.portRange.end":                                     "OCC_COMPUTE_SSH_PORT_RANGE_END",
		"compute.docker.requestTimeout":                                 "OCC_COMPUTE_DOCKER_REQUEST_TIMEOUT",
		"compute.docker.gatewayPort":                                    "OCC_COMPUTE_DOCKER_GATEWAY_PORT",
		"compute.docker.images.gateway":                                 "OCC_COMPUTE_DOCKER_IMAGES_GATEWAY",
		"compute.docker.resources.memory":                               "OCC_COMPUTE_DOCKER_RESOURCES_MEMORY",
		"compute.docker.resources.cpus":                                 "OCC_COMPUTE_DOCKER_RESOURCES_CPUS",
		"compute.docker.resources.openFiles":                            "OCC_COMPUTE_DOCKER_RESOURCES_OPEN_FILES",
		"compute.docker.resources.processes":                            "OCC_COMPUTE_DOCKER_RESOURCES_PROCESSES",
		"compute.kubernetes.context":                                    "OCC_COMPUTE_KUBERNETES_CONTEXT",
		"compute.kubernetes.endpointAccess":                             "OCC_COMPUTE_KUBERNETES_ENDPOINT_ACCESS",
		"compute.kubernetes.gatewayClients.namespace":                   "OCC_COMPUTE_KUBERNETES_GATEWAY_CLIENTS_NAMESPACE",
		"compute.kubernetes.gatewayClients.podLabels":                   "OCC_COMPUTE_KUBERNETES_GATEWAY_CLIENTS_POD_LABELS",
		"compute.kubernetes.gatewayPort":                                "OCC_COMPUTE_KUBERNETES_GATEWAY_PORT",
		"compute.kubernetes.gatewayStateSize":                           "OCC_COMPUTE_KUBERNETES_GATEWAY_STATE_SIZE",
		"compute.kubernetes.gatewayStorageClassName":                    "OCC_COMPUTE_KUBERNETES_GATEWAY_STORAGE_CLASS_NAME",
		"compute.kubernetes.images.gateway":                             "OCC_COMPUTE_KUBERNETES_IMAGES_GATEWAY",
		"compute.kubernetes.images.requireImmutableDigest":              "OCC_COMPUTE_KUBERNETES_IMAGES_REQUIRE_IMMUTABLE_DIGEST",
		"compute.kubernetes.images.dedicatedCodex":                      "OCC_COMPUTE_KUBERNETES_IMAGES_DEDICATED_CODEX",
		"compute.kubernetes.resources.harness.limitsCPU":                "OCC_COMPUTE_KUBERNETES_RESOURCES_HARNESS_LIMITS_CPU",
		"compute.kubernetes.resources.harness.limitsMemory":             "OCC_COMPUTE_KUBERNETES_RESOURCES_HARNESS_LIMITS_MEMORY",
		"compute.kubernetes.resources.harness.requestsCPU":              "OCC_COMPUTE_KUBERNETES_RESOURCES_HARNESS_REQUESTS_CPU",
		"compute.kubernetes.resources.harness.requestsMemory":           "OCC_COMPUTE_KUBERNETES_RESOURCES_HARNESS_REQUESTS_MEMORY",
		"compute.kubernetes.inCluster":                                  "OCC_COMPUTE_KUBERNETES_IN_CLUSTER",
		"compute.kubernetes.kubeconfig":                                 "OCC_COMPUTE_KUBERNETES_KUBECONFIG",
		"compute.kubernetes.requestTimeout":                             "OCC_COMPUTE_KUBERNETES_REQUEST_TIMEOUT",
		"compute.kubernetes.resources.containerDefaults.limitsCPU":      "OCC_COMPUTE_KUBERNETES_RESOURCES_CONTAINER_DEFAULTS_LIMITS_CPU",
		"compute.kubernetes.resources.containerDefaults.limitsMemory":   "OCC_COMPUTE_KUBERNETES_RESOURCES_CONTAINER_DEFAULTS_LIMITS_MEMORY",
		"compute.kubernetes.resources.containerDefaults.requestsCPU":    "OCC_COMPUTE_KUBERNETES_RESOURCES_CONTAINER_DEFAULTS_REQUESTS_CPU",
		"compute.kubernetes.resources.containerDefaults.requestsMemory": "OCC_COMPUTE_KUBERNETES_RESOURCES_CONTAINER_DEFAULTS_REQUESTS_MEMORY",
		"compute.kubernetes.resources.gateway.limitsCPU":                "OCC_COMPUTE_KUBERNETES_RESOURCES_GATEWAY_LIMITS_CPU",
		"compute.kubernetes.resources.gateway.limitsMemory":             "OCC_COMPUTE_KUBERNETES_RESOURCES_GATEWAY_LIMITS_MEMORY",
		"compute.kubernetes.resources.gateway.requestsCPU":              "OCC_COMPUTE_KUBERNETES_RESOURCES_GATEWAY_REQUESTS_CPU",
		"compute.kubernetes.resources.gateway.requestsMemory":           "OCC_COMPUTE_KUBERNETES_RESOURCES_GATEWAY_REQUESTS_MEMORY",
		"compute.kubernetes.resources.quotaCPU":                         "OCC_COMPUTE_KUBERNETES_RESOURCES_QUOTA_CPU",
		"compute.kubernetes.resources.quotaMemory":                      "OCC_COMPUTE_KUBERNETES_RESOURCES_QUOTA_MEMORY",
		"compute.kubernetes.resources.quotaPods":                        "OCC_COMPUTE_KUBERNETES_RESOURCES_QUOTA_PODS",
		"anHTTPServer.x2Value":                                          "OCC_AN_HTTP_SERVER_X2_VALUE",
		"nativeAdminUI.cookieDomain.more":                               "OCC_NATIVE_ADMIN_UI_COOKIE_DOMAIN_MORE",
	}
	for key, want := range tests {
		if got := EnvName(key); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", key, got, want)
		}
	}
	// Every key is settable through its env var and its flag.
	for _, key := range Keys() {
		if _, ok := tests[key]; !ok {
			t.Errorf("key %q missing from this table", key)
		}
		if _, err := Load(Source{Env: []string{EnvName(key) + "=x"}}); err != nil {
			for _, p := range problemsOf(t, err) {
				if strings.Contains(p.Reason, "names no config key") {
					t.Errorf("%s not accepted: %v", EnvName(key), err)
				}
			}
		}
	}
}

func TestKeys(t *testing.T) {
	t.Parallel()
	keys := Keys()
	if !slices.IsSorted(keys) {
		t.Errorf("Keys() not sorted: %v", keys)
	}
	for _, want := range []string{"dataDir", "databaseURL", "compute.driver", "worker.maxAttempts", "nativeAdminUI.enabled", "runtime.nodeVersion"} {
		if !slices.Contains(keys, want) {
			t.Errorf("Keys() lacks %q", want)
		}
	}
	for _, k := range keys {
		if strings.HasPrefix(k, "backends") || strings.HasPrefix(k, "presets") || strings.HasPrefix(k, "pluginCatalogs") || strings.Contains(k, "bootstrap") {
			t.Errorf("Keys() holds %q", k)
		}
	}
	if len(keys) != 101 {
		t.Errorf("len(Keys()) = %d, want 101: %v", len(keys), keys)
	}
}

// mutate returns a valid, loaded Config changed by f.
func mutate(t *testing.T, f func(c *Config)) *Config {
	t.Helper()
	c, err := Load(Source{})
	if err != nil {
		t.Fatal(err)
	}
	f(c)
	return c
}

func TestValidateRanges(t *testing.T) {
	t.Parallel()
	type edge struct {
		key    string
		set    func(c *Config, v int64)
		lo, hi int64
	}
	ints := []edge{
		{"limits.defaultBodyBytes", func(c *Config, v int64) { c.Limits.DefaultBodyBytes = v }, 1024, 16 << 20},
		{"limits.agentCreateBodyBytes", func(c *Config, v int64) { c.Limits.AgentCreateBodyBytes = v }, 1024, 16 << 20},
		{"limits.workspaceFileBodyBytes", func(c *Config, v int64) { c.Limits.WorkspaceFileBodyBytes = v }, 1024, 16 << 20},
		{"worker.maxAttempts", func(c *Config, v int64) { c.Worker.MaxAttempts = int(v) }, 1, 100},
		{"worker.concurrency", func(c *Config, v int64) { c.Worker.Concurrency = int(v) }, 0, 256}, // 0: the compute driver's default
		{"auth.signInFailuresPerAccount", func(c *Config, v int64) { c.Auth.SignInFailuresPerAccount = int(v) }, 1, 1000},
		{"auth.signInFailuresPerClient", func(c *Config, v int64) { c.Auth.SignInFailuresPerClient = int(v) }, 1, 1000},
		{"auth.signInConcurrency", func(c *Config, v int64) { c.Auth.SignInConcurrency = int(v) }, 1, 64},
		{"worker.convergenceTimeout", func(c *Config, v int64) { c.Worker.ConvergenceTimeout = Duration(v) }, int64(time.Second), int64(24 * time.Hour)},
		{"worker.pollInterval", func(c *Config, v int64) { c.Worker.PollInterval = Duration(v) }, int64(10 * time.Millisecond), int64(10 * time.Second)},
		{"auth.sessionLifetime", func(c *Config, v int64) { c.Auth.SessionLifetime = Duration(v) }, int64(5 * time.Minute), int64(720 * time.Hour)},
		{"limits.maxConnections", func(c *Config, v int64) { c.Limits.MaxConnections = int(v) }, 1, 1_000_000},
		{"limits.maxInFlight", func(c *Config, v int64) { c.Limits.MaxInFlight = int(v) }, 1, 100_000},
		{"limits.requestsPerSecondPerPrincipal", func(c *Config, v int64) { c.Limits.RequestsPerSecondPerPrincipal = int(v) }, 1, 100_000},
		{"limits.burstPerPrincipal", func(c *Config, v int64) { c.Limits.BurstPerPrincipal = int(v) }, 1, 1_000_000},
		{"limits.requestsPerSecondPerClient", func(c *Config, v int64) { c.Limits.RequestsPerSecondPerClient = int(v) }, 1, 100_000},
		{"limits.burstPerClient", func(c *Config, v int64) { c.Limits.BurstPerClient = int(v) }, 1, 1_000_000},
		{"http.maxHeaderBytes", func(c *Config, v int64) { c.HTTP.MaxHeaderBytes = int(v) }, 4096, 1 << 20},
		{"http.writeTimeout", func(c *Config, v int64) { c.HTTP.WriteTimeout = Duration(v) }, int64(10 * time.Millisecond), int64(time.Hour)},
		{"http.idleTimeout", func(c *Config, v int64) { c.HTTP.IdleTimeout = Duration(v) }, int64(10 * time.Millisecond), int64(time.Hour)},
		{"http.readTimeout", func(c *Config, v int64) {
			c.HTTP.ReadTimeout, c.HTTP.ReadHeaderTimeout = Duration(v), Duration(10*time.Millisecond)
		},
			int64(10 * time.Millisecond), int64(time.Hour)},
		{"http.readHeaderTimeout", func(c *Config, v int64) {
			c.HTTP.ReadHeaderTimeout, c.HTTP.ReadTimeout = Duration(v), Duration(time.Hour)
		},
			int64(10 * time.Millisecond), int64(10 * time.Minute)},
	}
	for _, e := range ints {
		t.Run(e.key, func(t *testing.T) {
			t.Parallel()
			for _, v := range []int64{e.lo, e.hi} {
				if err := mutate(t, func(c *Config) { e.set(c, v) }).Validate(); err != nil {
					t.Errorf("%s=%d: %v", e.key, v, err)
				}
			}
			for _, v := range []int64{e.lo - 1, e.hi + 1} {
				err := mutate(t, func(c *Config) { e.set(c, v) }).Validate()
				wantProblem(t, err, e.key, "outside")
			}
		})
	}
}

func TestRangesThroughEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env, key string
		ok       bool
	}{
		{"OCC_WORKER_POLL_INTERVAL=10ms", "worker.pollInterval", true},
		{"OCC_WORKER_POLL_INTERVAL=9ms", "worker.pollInterval", false},
		{"OCC_WORKER_CONVERGENCE_TIMEOUT=24h", "worker.convergenceTimeout", true},
		{"OCC_WORKER_CONVERGENCE_TIMEOUT=24h0m1s", "worker.convergenceTimeout", false},
		{"OCC_LIMITS_DEFAULT_BODY_BYTES=16777216", "limits.defaultBodyBytes", true},
		{"OCC_LIMITS_DEFAULT_BODY_BYTES=16777217", "limits.defaultBodyBytes", false},
		{"OCC_WORKER_MAX_ATTEMPTS=0", "worker.maxAttempts", false},
		{"OCC_WORKER_CONCURRENCY=256", "worker.concurrency", true},
		{"OCC_LIMITS_MAX_IN_FLIGHT=0", "limits.maxInFlight", false},
		{"OCC_LIMITS_REQUESTS_PER_SECOND_PER_CLIENT=100001", "limits.requestsPerSecondPerClient", false},
		{"OCC_HTTP_WRITE_TIMEOUT=9ms", "http.writeTimeout", false},
		{"OCC_HTTP_READ_TIMEOUT=1h", "http.readTimeout", true},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			t.Parallel()
			_, err := Load(Source{Env: []string{tt.env}})
			if tt.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantProblem(t, err, tt.key, "outside")
		})
	}
}

func TestValidateEnumsAndValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		f    func(c *Config)
		key  string
		want string // "" means valid
	}{
		{"role api", func(c *Config) { c.Role = "api" }, "", ""},
		{"role worker", func(c *Config) { c.Role = "worker" }, "", ""},
		{"role bad", func(c *Config) { c.Role = "All" }, "role", "not one of all, api, worker"},
		{"driver kubernetes", func(c *Config) { c.Compute.Driver = "kubernetes" }, "compute.kubernetes.kubeconfig", "occ never falls back to an ambient kubeconfig"},
		{"kubernetes in cluster", kube(func(k *KubernetesCompute) {}), "", ""},
		{"kubernetes kubeconfig", kube(func(k *KubernetesCompute) {
			k.InCluster, k.Kubeconfig, k.Context = false, "/etc/occ/kubeconfig", "prod"
		}), "", ""},
		{"kubernetes kubeconfig without context", kube(func(k *KubernetesCompute) { k.InCluster, k.Kubeconfig = false, "/etc/occ/kubeconfig" }), "compute.kubernetes.context", "required with compute.kubernetes.kubeconfig"},
		{"kubernetes both", kube(func(k *KubernetesCompute) { k.Kubeconfig, k.Context = "/k", "c" }), "compute.kubernetes.inCluster", "not both"},
		{"kubernetes no image", kube(func(k *KubernetesCompute) { k.Images.Gateway = "" }), "compute.kubernetes.images.gateway", "required"},
		{"kubernetes tag with digest required", kube(func(k *KubernetesCompute) { k.Images.RequireImmutableDigest = true }), "compute.kubernetes.images.gateway", "not pinned by a lowercase @sha256: digest"},
		{"kubernetes digest required", kube(func(k *KubernetesCompute) {
			k.Images.RequireImmutableDigest, k.Images.Gateway = true, "registry.example/openclaw@sha256:"+strings.Repeat("ab", 32)
		}), "", ""},
		{"kubernetes upper digest", kube(func(k *KubernetesCompute) {
			k.Images.RequireImmutableDigest, k.Images.Gateway = true, "registry.example/openclaw@sha256:"+strings.Repeat("AB", 32)
		}), "compute.kubernetes.images.gateway", "not pinned"},
		{"kubernetes endpoint access", kube(func(k *KubernetesCompute) { k.EndpointAccess = "proxy" }), "compute.kubernetes.endpointAccess", `"proxy" is not one of portForward, service`},
		{"kubernetes service without clients", kube(func(k *KubernetesCompute) { k.EndpointAccess = "service" }), "compute.kubernetes.gatewayClients.namespace", "required with endpointAccess service"},
		{"kubernetes service", kube(func(k *KubernetesCompute) {
			k.EndpointAccess, k.GatewayClients = "service", KubernetesPeer{Namespace: "occ-system", PodLabels: List{"app.kubernetes.io/name=occ"}}
		}), "", ""},
		{"kubernetes bad pod label", kube(func(k *KubernetesCompute) { k.GatewayClients.PodLabels = List{"app"} }), "compute.kubernetes.gatewayClients.podLabels", `"app" is not a label key=value`},
		{"kubernetes bad namespace", kube(func(k *KubernetesCompute) { k.GatewayClients.Namespace = "Occ" }), "compute.kubernetes.gatewayClients.namespace", "not a namespace name"},
		{"kubernetes port", kube(func(k *KubernetesCompute) { k.GatewayPort = 80 }), "compute.kubernetes.gatewayPort", "outside 1024..65535"},
		{"kubernetes timeout", kube(func(k *KubernetesCompute) { k.RequestTimeout = Duration(time.Hour) }), "compute.kubernetes.requestTimeout", "outside"},
		{"kubernetes quantity", kube(func(k *KubernetesCompute) { k.Resources.Gateway.LimitsMemory = "3 GB" }), "compute.kubernetes.resources.gateway.limitsMemory", "not a Kubernetes quantity"},
		{"kubernetes state size", kube(func(k *KubernetesCompute) { k.GatewayStateSize = "-1Gi" }), "compute.kubernetes.gatewayStateSize", "not a Kubernetes quantity"},
		{"kubernetes quota pods", kube(func(k *KubernetesCompute) { k.Resources.QuotaPods = 0 }), "compute.kubernetes.resources.quotaPods", "outside 1..10000"},
		{"kubernetes storage class", kube(func(k *KubernetesCompute) { k.GatewayStorageClassName = "fast_ssd" }), "compute.kubernetes.gatewayStorageClassName", "not a StorageClass name"},
		{"kubernetes native admin", kube(func(k *KubernetesCompute) {}, func(c *Config) {
			c.NativeAdminUI = NativeAdminUI{Enabled: true, Domain: "agents.example.com", RecheckInterval: Duration(time.Second)}
			c.PublicOrigin = "https://occ.example.com"
		}), "nativeAdminUI.enabled", "does not run the native admin UI"},
		{"kubernetes values checked unselected", func(c *Config) { c.Compute.Kubernetes.GatewayPort = 0 }, "compute.kubernetes.gatewayPort", "outside"},
		{"driver bad", func(c *Config) { c.Compute.Driver = "k8s" }, "compute.driver", "not one of local, ssh, docker, kubernetes"},
		{"harness command alone", func(c *Config) { c.Compute.HarnessCommand = "/bin/fakecodex" }, "compute.harnessCommand", "needs compute.gatewayCommand"},
		{"driver ssh", func(c *Config) { c.Compute.Driver = "ssh" }, "compute.ssh.identityFile", "required"},
		{"driver ssh hosts", func(c *Config) { c.Compute.Driver = "ssh" }, "compute.ssh.hosts", "at least one"},
		{"ssh", sshc(func(s *SSHCompute) {}), "", ""},
		{"ssh relative key", sshc(func(s *SSHCompute) { s.IdentityFile = "id" }), "compute.ssh.identityFile", "not an absolute path"},
		{"ssh non-root user", sshc(func(s *SSHCompute) { s.Hosts["team"] = SSHHost{Address: "h", User: "admin"} }), "compute.ssh.hosts.team.user", "root only"},
		{"ssh bad address", sshc(func(s *SSHCompute) { s.Hosts["team"] = SSHHost{Address: "h; rm -rf /"} }), "compute.ssh.hosts.team.address", "not a host name"},
		{"ssh bad port", sshc(func(s *SSHCompute) { s.Hosts["team"] = SSHHost{Address: "h", Port: 70000} }), "compute.ssh.hosts.team.port", "outside 1..65535"},
		{"ssh bad namespace name", sshc(func(s *SSHCompute) { s.Hosts["Team A"] = SSHHost{Address: "h"} }), "compute.ssh.hosts", "not a Namespace name"},
		{"ssh path with space", sshc(func(s *SSHCompute) { s.Runtime.NodePath = "/opt/my node" }), "compute.ssh.runtime.nodePath", "not an absolute path"},
		{"ssh path climbing", sshc(func(s *SSHCompute) { s.Runtime.StateRoot = "/var/../etc" }), "compute.ssh.runtime.stateRoot", "not an absolute path"},
		{"ssh state under tmp", sshc(func(s *SSHCompute) { s.Runtime.StateRoot = "/tmp/occ" }), "compute.ssh.runtime.stateRoot", "temporary directory"},
		{"ssh user prefix root", sshc(func(s *SSHCompute) { s.Runtime.User = "root" }), "compute.ssh.runtime.user", "not a lowercase"},
		{"ssh user prefix long", sshc(func(s *SSHCompute) { s.Runtime.User = "abcdefghijklmnopqrst" }), "compute.ssh.runtime.user", "at most 19"},
		{"ssh ports", sshc(func(s *SSHCompute) { s.PortRange = SSHPortRange{Start: 30000, End: 20000} }), "compute.ssh.portRange.start", "above portRange.end"},
		{"ssh low port", sshc(func(s *SSHCompute) { s.PortRange.Start = 80 }), "compute.ssh.portRange.start", "outside 1024..65535"},
		{"ssh timeout", sshc(func(s *SSHCompute) { s.ConnectTimeout = Duration(time.Hour) }), "compute.ssh.connectTimeout", "outside"},
		{"ssh native admin", sshc(func(s *SSHCompute) {}, func(c *Config) { c.NativeAdminUI.Enabled = true }), "nativeAdminUI.enabled", "does not run the native admin UI"},
		{"driver docker", func(c *Config) { c.Compute.Driver = "docker" }, "compute.docker.images.gateway", "required"},
		{"docker", dock(func(d *DockerCompute) {}), "", ""},
		{"docker tcp host", dock(func(d *DockerCompute) { d.Host = "tcp://127.0.0.1:2375" }), "", ""},
		{"docker relative socket", dock(func(d *DockerCompute) { d.Host = "unix://docker.sock" }), "compute.docker.host", "not unix:///absolute/path or tcp://host:port"},
		{"docker ssh host", dock(func(d *DockerCompute) { d.Host = "ssh://root@host" }), "compute.docker.host", "not unix:///absolute/path or tcp://host:port"},
		{"docker tcp without port", dock(func(d *DockerCompute) { d.Host = "tcp://host" }), "compute.docker.host", "not unix:///absolute/path"},
		{"docker port", dock(func(d *DockerCompute) { d.GatewayPort = 65535 }), "compute.docker.gatewayPort", "outside 1024..65534"},
		{"docker timeout", dock(func(d *DockerCompute) { d.RequestTimeout = Duration(time.Hour) }), "compute.docker.requestTimeout", "outside"},
		{"docker memory", dock(func(d *DockerCompute) { d.Resources.Memory = "3GB" }), "compute.docker.resources.memory", "not a byte count"},
		{"docker small memory", dock(func(d *DockerCompute) { d.Resources.Memory = "32Mi" }), "compute.docker.resources.memory", "below 64Mi"},
		{"docker memory bytes", dock(func(d *DockerCompute) { d.Resources.Memory = "1073741824" }), "", ""},
		{"docker cpus", dock(func(d *DockerCompute) { d.Resources.CPUs = "1.5" }), "", ""},
		{"docker bad cpus", dock(func(d *DockerCompute) { d.Resources.CPUs = "500m" }), "compute.docker.resources.cpus", "not a number of CPUs"},
		{"docker limits", dock(func(d *DockerCompute) { d.Resources.OpenFiles, d.Resources.Processes = 20000, 4096 }), "", ""},
		{"docker open files", dock(func(d *DockerCompute) { d.Resources.OpenFiles = -1 }), "compute.docker.resources.openFiles", "outside 0..1048576"},
		{"docker no cpus", dock(func(d *DockerCompute) { d.Resources.CPUs = "0" }), "compute.docker.resources.cpus", "outside 0.01..1024"},
		{"docker image", dock(func(d *DockerCompute) { d.Images.Gateway = "open claw" }), "compute.docker.images.gateway", "not an image reference"},
		{"docker native admin", dock(func(d *DockerCompute) {}, func(c *Config) {
			c.NativeAdminUI = NativeAdminUI{Enabled: true, Domain: "agents.example.com", RecheckInterval: Duration(time.Second)}
			c.PublicOrigin = "https://occ.example.com"
		}), "nativeAdminUI.enabled", "docker compute driver does not run the native admin UI"},
		{"docker values checked unselected", func(c *Config) { c.Compute.Docker.Resources.Memory = "x" }, "compute.docker.resources.memory", "not a byte count"},
		{"driver empty", func(c *Config) { c.Compute.Driver = "" }, "compute.driver", "not one of"},
		{"uid range", func(c *Config) { c.Compute.Local.UIDRange = "100000-100099" }, "", ""},
		{"uid range of one", func(c *Config) { c.Compute.Local.UIDRange = "7-7" }, "", ""},
		{"uid range from 0", func(c *Config) { c.Compute.Local.UIDRange = "0-100" }, "compute.local.uidRange", `"0-100" is not FIRST-LAST with 0 < FIRST <= LAST < 4294967295`},
		{"uid range reversed", func(c *Config) { c.Compute.Local.UIDRange = "200-100" }, "compute.local.uidRange", "is not FIRST-LAST"},
		{"uid range to -1", func(c *Config) { c.Compute.Local.UIDRange = "1-4294967295" }, "compute.local.uidRange", "is not FIRST-LAST"},
		{"uid range one number", func(c *Config) { c.Compute.Local.UIDRange = "100000" }, "compute.local.uidRange", "is not FIRST-LAST"},
		{"uid range empty", func(c *Config) { c.Compute.Local.UIDRange = "" }, "compute.local.uidRange", "is not FIRST-LAST"},
		{"uid range signed", func(c *Config) { c.Compute.Local.UIDRange = "+5-9" }, "compute.local.uidRange", "is not FIRST-LAST"},
		{"log level bad", func(c *Config) { c.Logging.Level = "trace" }, "logging.level", "not one of debug, info, warn, error"},
		{"log format bad", func(c *Config) { c.Logging.Format = "yaml" }, "logging.format", "not one of json, text"},
		{"log format json", func(c *Config) { c.Logging.Format = "json" }, "", ""},
		{"dataDir empty", func(c *Config) { c.DataDir = "" }, "dataDir", "required"},
		{"runtimeDir empty", func(c *Config) { c.RuntimeDir = "" }, "runtimeDir", "required"},
		{"keyset empty", func(c *Config) { c.Secrets.KeysetFile = "" }, "secrets.keysetFile", "required"},
		{"audit kept forever", func(c *Config) { c.Audit.Retention = 0 }, "", ""},
		{"audit export dir empty", func(c *Config) { c.Audit.ExportDir = "" }, "audit.exportDir", "required"},
		{"listen bad", func(c *Config) { c.Listen = "localhost" }, "listen", "not host:port"},
		{"listen bad port", func(c *Config) { c.Listen = "127.0.0.1:99999" }, "listen", "bad port"},
		{"listen port 0", func(c *Config) { c.Listen = "127.0.0.1:0" }, "", ""},
		{"database postgres", func(c *Config) { c.DatabaseURL = "postgres://u@h:5432/db?sslmode=disable" }, "", ""},
		{"database postgresql", func(c *Config) { c.DatabaseURL = "postgresql://h/db" }, "", ""},
		{"database mysql", func(c *Config) { c.DatabaseURL = "mysql://h/db" }, "databaseURL", "must start with sqlite://, postgres:// or postgresql://"},
		{"database bare path", func(c *Config) { c.DatabaseURL = "/var/occ.db" }, "databaseURL", "must start with"},
		{"database sqlite no path", func(c *Config) { c.DatabaseURL = "sqlite://" }, "databaseURL", "names no file"},
		{"database connections postgres", func(c *Config) { c.DatabaseURL = "postgres://h/db"; c.DatabaseConnections = 4 }, "", ""},
		{"database connections sqlite", func(c *Config) { c.DatabaseConnections = 4 }, "databaseConnections", "applies to PostgreSQL only"},
		{"database connections negative", func(c *Config) { c.DatabaseURL = "postgres://h/db"; c.DatabaseConnections = -1 }, "databaseConnections", "outside 1..1000"},
		{"database connections over", func(c *Config) { c.DatabaseURL = "postgres://h/db"; c.DatabaseConnections = 1001 }, "databaseConnections", "outside 1..1000"},
		{"metrics loopback", func(c *Config) { c.Metrics.Listen = "127.0.0.1:9100" }, "", ""},
		{"metrics localhost", func(c *Config) { c.Metrics.Listen = "localhost:9100" }, "", ""},
		{"metrics ipv6 loopback", func(c *Config) { c.Metrics.Listen = "[::1]:9100" }, "", ""},
		{"metrics public", func(c *Config) { c.Metrics.Listen = "0.0.0.0:9100" }, "metrics.listen", "loopback"},
		{"metrics no port", func(c *Config) { c.Metrics.Listen = "127.0.0.1" }, "metrics.listen", "not host:port"},
		{"openclaw version bad", func(c *Config) { c.Runtime.OpenClawVersion = "latest" }, "runtime.openclawVersion", "not an exact version"},
		{"node version bad", func(c *Config) { c.Runtime.NodeVersion = "24.1.0" }, "runtime.nodeVersion", "not a major version"},
		{"node version empty", func(c *Config) { c.Runtime.NodeVersion = "" }, "runtime.nodeVersion", "required"},
		{"bootstrap key good", func(c *Config) { c.Auth.BootstrapAPIKey = "occ_" + strings.Repeat("Ab_9", 8) }, "", ""},
		{"bootstrap key short", func(c *Config) { c.Auth.BootstrapAPIKey = "occ_" + strings.Repeat("a", 31) }, "auth.bootstrapAPIKey", "OCC_BOOTSTRAP_API_KEY must match"},
		{"bootstrap key prefix", func(c *Config) { c.Auth.BootstrapAPIKey = "sk_" + strings.Repeat("a", 40) }, "auth.bootstrapAPIKey", "must match"},
		{"bootstrap key charset", func(c *Config) { c.Auth.BootstrapAPIKey = "occ_" + strings.Repeat("a", 32) + "-" }, "auth.bootstrapAPIKey", "must match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := mutate(t, tt.f).Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantProblem(t, err, tt.key, tt.want)
		})
	}
}

func TestBootstrapKeyNotEchoed(t *testing.T) {
	t.Parallel()
	_, err := Load(Source{Env: []string{"OCC_BOOTSTRAP_API_KEY=occ_tooShortButSecret"}})
	wantProblem(t, err, "auth.bootstrapAPIKey", "must match")
	if strings.Contains(err.Error(), "tooShortButSecret") {
		t.Errorf("error echoes the key: %v", err)
	}
}

func TestValidateOrigin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		origin string
		ok     bool
	}{
		{"http://127.0.0.1:8080", true},
		{"https://occ.example.com", true},
		{"https://occ.example.com:8443", true},
		{"http://[::1]:8080", true},
		{"ftp://occ.example.com", false},
		{"occ.example.com", false},
		{"https://occ.example.com/", false},
		{"https://occ.example.com/console", false},
		{"https://occ.example.com?x=1", false},
		{"https://occ.example.com#top", false},
		{"https://user@occ.example.com", false},
		{"https://", false},
		{"https://occ.example.com:", false},
		{"https://occ.example.com:70000", false},
		{"https://occ.example.com:0", false},
	}
	for _, tt := range tests {
		t.Run(tt.origin, func(t *testing.T) {
			t.Parallel()
			err := mutate(t, func(c *Config) { c.PublicOrigin = tt.origin }).Validate()
			if tt.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantProblem(t, err, "publicOrigin")
		})
	}
}

func TestValidateNativeAdminUI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ui   NativeAdminUI
		key  string
		want string
	}{
		{"off and empty", NativeAdminUI{}, "", ""},
		{"on, subdomain", NativeAdminUI{Enabled: true, Domain: "admin.occ.example.com", CookieDomain: "occ.example.com"}, "", ""},
		{"on, equal", NativeAdminUI{Enabled: true, Domain: "occ.example.com", CookieDomain: "occ.example.com"}, "", ""},
		{"on, localhost names", NativeAdminUI{Enabled: true, Domain: "admin.occ.localhost", CookieDomain: "occ.localhost"}, "", ""},
		{"console outside the cookie domain", NativeAdminUI{Enabled: true, Domain: "admin.example.com", CookieDomain: "admin.example.com", RecheckInterval: -1},
			"nativeAdminUI.cookieDomain", `the console host "console.occ.example.com" (publicOrigin) must equal cookieDomain "admin.example.com"`},
		{"console below the admin domain", NativeAdminUI{Enabled: true, Domain: "occ.example.com", CookieDomain: "example.com", RecheckInterval: -1},
			"nativeAdminUI.domain", "must not be below"},
		{"recheck too short", NativeAdminUI{RecheckInterval: Duration(time.Millisecond)}, "nativeAdminUI.recheckInterval", "outside 10ms..5m0s"},
		{"recheck too long", NativeAdminUI{RecheckInterval: Duration(time.Hour)}, "nativeAdminUI.recheckInterval", "outside 10ms..5m0s"},
		{"on, no domain", NativeAdminUI{Enabled: true, CookieDomain: "example.com"}, "nativeAdminUI.domain", "required when nativeAdminUI.enabled"},
		{"on, no cookie domain", NativeAdminUI{Enabled: true, Domain: "admin.example.com"}, "nativeAdminUI.cookieDomain", "required"},
		{"on, unrelated", NativeAdminUI{Enabled: true, Domain: "admin.example.org", CookieDomain: "example.com"}, "nativeAdminUI.domain", "subdomain"},
		{"on, suffix but not label boundary", NativeAdminUI{Enabled: true, Domain: "badexample.com", CookieDomain: "example.com"}, "nativeAdminUI.domain", "subdomain"},
		{"on, cookie below domain", NativeAdminUI{Enabled: true, Domain: "example.com", CookieDomain: "admin.example.com"}, "nativeAdminUI.domain", "subdomain"},
		{"bad DNS name", NativeAdminUI{Enabled: true, Domain: "admin_x.example.com", CookieDomain: "example.com"}, "nativeAdminUI.domain", "not a lower-case DNS name"},
		{"single label", NativeAdminUI{Enabled: true, Domain: "admin.localhost", CookieDomain: "localhost"}, "nativeAdminUI.cookieDomain", "not a lower-case DNS name"},
		{"upper case", NativeAdminUI{Enabled: true, Domain: "Admin.Example.com", CookieDomain: "example.com"}, "nativeAdminUI.domain", "not a lower-case DNS name"},
		{"off but malformed", NativeAdminUI{Domain: "http://x"}, "nativeAdminUI.domain", "not a lower-case DNS name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := mutate(t, func(c *Config) {
				// The console host lies inside the cookie domain unless a
				// case says otherwise (RecheckInterval -1: use the
				// default interval and another console host).
				c.PublicOrigin = "https://" + tt.ui.CookieDomain
				if tt.ui.RecheckInterval < 0 {
					tt.ui.RecheckInterval = 0
					c.PublicOrigin = "https://console.occ.example.com"
				}
				if tt.ui.CookieDomain == "" {
					c.PublicOrigin = "https://occ.example.com"
				}
				if tt.ui.RecheckInterval == 0 {
					tt.ui.RecheckInterval = c.NativeAdminUI.RecheckInterval
				}
				c.NativeAdminUI = tt.ui
			}).Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantProblem(t, err, tt.key, tt.want)
		})
	}
}

func TestValidateLists(t *testing.T) {
	t.Parallel()
	gh := Backend{ID: "gh", Type: "github"}
	tests := []struct {
		name string
		f    func(c *Config)
		key  string
		want string
	}{
		{"backends ok", func(c *Config) {
			c.Backends = []Backend{gh, {ID: "chatgpt-1", Type: "chatgpt", URL: "https://x.example", WorkspaceID: "ws_team-1"}, {ID: "os", Type: "openshell"}}
		}, "", ""},
		{"backend workspace on another type", func(c *Config) { c.Backends = []Backend{{ID: "gh", Type: "github", WorkspaceID: "ws"}} }, "backends[0].workspaceId", "only a chatgpt backend"},
		{"backend bad workspace", func(c *Config) { c.Backends = []Backend{{ID: "c", Type: "chatgpt", WorkspaceID: "ws 1"}} }, "backends[0].workspaceId", "must match"},
		{"backend duplicate id", func(c *Config) { c.Backends = []Backend{gh, {ID: "x", Type: "github"}, gh} }, "backends[2].id", `duplicate backend id "gh"`},
		{"backend bad id", func(c *Config) { c.Backends = []Backend{{ID: "GH", Type: "github"}} }, "backends[0].id", "must match"},
		{"backend id too long", func(c *Config) { c.Backends = []Backend{{ID: "a" + strings.Repeat("b", 63), Type: "github"}} }, "backends[0].id", "must match"},
		{"backend no id", func(c *Config) { c.Backends = []Backend{{Type: "github"}} }, "backends[0].id", "required"},
		{"backend bad type", func(c *Config) { c.Backends = []Backend{gh, {ID: "o", Type: "openai"}} }, "backends[1].type", "not one of chatgpt, github, openshell"},
		{"backend bad url", func(c *Config) { c.Backends = []Backend{{ID: "a", Type: "github", URL: "github.com"}} }, "backends[0].url", "absolute http or https URL"},
		{"preset ok", func(c *Config) {
			c.Backends = []Backend{gh}
			c.Presets = []Preset{{Name: "p", ExecutionMode: "embedded", BackendID: "gh", Plugins: map[string]PluginSelection{"slack": {ApprovalPolicy: "none"}}}}
		}, "", ""},
		{"preset unknown backend", func(c *Config) {
			c.Backends = []Backend{gh}
			c.Presets = []Preset{{Name: "p"}, {Name: "q", BackendID: "chatgpt"}}
		}, "presets[1].backendId", `"chatgpt" names no configured backend`},
		{"preset duplicate name", func(c *Config) { c.Presets = []Preset{{Name: "p"}, {Name: "p"}} }, "presets[1].name", "duplicate preset name"},
		{"preset no name", func(c *Config) { c.Presets = []Preset{{}} }, "presets[0].name", "required"},
		{"preset bad mode", func(c *Config) { c.Presets = []Preset{{Name: "p", ExecutionMode: "shared"}} }, "presets[0].executionMode", "not one of embedded, dedicated"},
		{"preset bad approval", func(c *Config) {
			c.Presets = []Preset{{Name: "p", Plugins: map[string]PluginSelection{"slack": {ApprovalPolicy: "always"}}}}
		}, "presets[0].plugins.slack.approvalPolicy", "not one of provider_default, all_actions, write_actions, none"},
		{"preset bad plugin id", func(c *Config) {
			c.Presets = []Preset{{Name: "p", Plugins: map[string]PluginSelection{"bad id": {}}}}
		}, "presets[0].plugins.bad id", "must match"},
		{"catalog duplicate", func(c *Config) {
			c.PluginCatalogs = []PluginCatalog{{ID: "a"}, {ID: "a"}}
		}, "pluginCatalogs[1].id", "duplicate plugin catalog id"},
		{"catalog duplicate plugin", func(c *Config) {
			c.PluginCatalogs = []PluginCatalog{{ID: "a", Plugins: []string{"x", "x"}}}
		}, "pluginCatalogs[0].plugins[1]", "duplicate plugin id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := mutate(t, tt.f).Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantProblem(t, err, tt.key, tt.want)
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	_, err := Load(Source{Env: []string{
		"OCC_ROLE=x", "OCC_WORKER_MAX_ATTEMPTS=0", "OCC_LOGGING_LEVEL=loud", "OCC_PUBLIC_ORIGIN=https://x.example/a",
	}})
	var keys []string
	for _, p := range problemsOf(t, err) {
		keys = append(keys, p.Key)
	}
	for _, want := range []string{"role", "worker.maxAttempts", "logging.level", "publicOrigin"} {
		if !slices.Contains(keys, want) {
			t.Errorf("problems %v lack %q", keys, want)
		}
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "config: ") || strings.Count(msg, "; ") != 3 {
		t.Errorf("Error() = %q", msg)
	}
}

func TestDurationText(t *testing.T) {
	t.Parallel()
	var d Duration
	if err := d.UnmarshalText([]byte("1m30s")); err != nil || d.D() != 90*time.Second {
		t.Fatalf("UnmarshalText: %v %v", d, err)
	}
	b, _ := d.MarshalText()
	if string(b) != "1m30s" {
		t.Errorf("MarshalText = %q", b)
	}
	if err := d.UnmarshalText([]byte("90")); err == nil {
		t.Error("a bare number was accepted")
	}
}

func TestSQLitePath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url, path string
		ok        bool
	}{
		{"sqlite:///var/lib/occ/occ.db", "/var/lib/occ/occ.db", true},
		{"sqlite://rel/occ.db?_pragma=busy_timeout(5000)", "rel/occ.db", true},
		{"sqlite://", "", false},
		{"postgres://h/db", "", false},
	}
	for _, tt := range tests {
		c := &Config{DatabaseURL: tt.url}
		if p, ok := c.SQLitePath(); p != tt.path || ok != tt.ok {
			t.Errorf("SQLitePath(%q) = %q, %v; want %q, %v", tt.url, p, ok, tt.path, tt.ok)
		}
	}
}

// TestReadHeaderTimeoutWithinReadTimeout: the header bound cannot exceed
// the bound of the whole request it is part of.
func TestReadHeaderTimeoutWithinReadTimeout(t *testing.T) {
	t.Parallel()
	_, err := Load(Source{Env: []string{"OCC_HTTP_READ_TIMEOUT=5s", "OCC_HTTP_READ_HEADER_TIMEOUT=6s"}})
	wantProblem(t, err, "http.readHeaderTimeout", "at most http.readTimeout (5s)")
	if _, err := Load(Source{Env: []string{"OCC_HTTP_READ_TIMEOUT=5s", "OCC_HTTP_READ_HEADER_TIMEOUT=5s"}}); err != nil {
		t.Fatal(err)
	}
}

func TestRescueAfterMustExceedJobTimeout(t *testing.T) {
	t.Parallel()
	if _, err := Load(Source{Flags: map[string]string{"worker.jobTimeout": "10s", "worker.rescueAfter": "5s"}}); err == nil {
		t.Fatal("rescueAfter below jobTimeout accepted")
	}
	c, err := Load(Source{Flags: map[string]string{"worker.jobTimeout": "10s", "worker.rescueAfter": "15s"}})
	if err != nil || c.Worker.RescueAfter.D() != 15*time.Second {
		t.Fatalf("Load = %v, %v", c, err)
	}
}

// worker.straySweepInterval is refused outside 1s..1h (River's shortest
// unique period is a second), with the key named; a value inside is kept.
func TestStraySweepIntervalRange(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"500ms", "2h"} {
		_, err := Load(Source{Env: []string{"OCC_WORKER_STRAY_SWEEP_INTERVAL=" + v}})
		wantProblem(t, err, "worker.straySweepInterval", "is outside 1s..1h0m0s")
	}
	c, err := Load(Source{Env: []string{"OCC_WORKER_STRAY_SWEEP_INTERVAL=5s"}})
	if err != nil || c.Worker.StraySweepInterval.D() != 5*time.Second {
		t.Fatalf("Load = %v, %v", c, err)
	}
}

func TestCredentialGateway(t *testing.T) {
	t.Parallel()
	c, err := Load(Source{})
	if err != nil || c.CredentialGateway.URL != "" {
		t.Fatalf("default gateway = %q, %v; want none", c.CredentialGateway.URL, err)
	}
	c, err = Load(Source{Env: []string{"OCC_CREDENTIAL_GATEWAY_URL=https://gateway.internal:8443/base"}})
	if err != nil || c.CredentialGateway.URL != "https://gateway.internal:8443/base" {
		t.Fatalf("from the environment = %q, %v", c.CredentialGateway.URL, err)
	}
	dir := t.TempDir()
	file := dir + "/occ.yaml"
	if err := os.WriteFile(file, []byte("credentialGateway:\n  url: http://127.0.0.1:9000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err = Load(Source{File: file}); err != nil || c.CredentialGateway.URL != "http://127.0.0.1:9000" {
		t.Fatalf("from the file = %q, %v", c.CredentialGateway.URL, err)
	}
	if err := os.WriteFile(file, []byte("credentialGateway:\n  url: http://x\n  token: abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(Source{File: file}); err == nil {
		t.Fatal("an unknown key under credentialGateway was accepted")
	}
	for _, bad := range []string{"gateway.internal", "ftp://gateway.internal", "https://user:pw@gateway.internal", "https://"} {
		_, err := Load(Source{Flags: map[string]string{"credentialGateway.url": bad}})
		wantProblem(t, err, "credentialGateway.url", "absolute http or https URL")
	}
}

// TestTrustedProxies: http.trustedProxies is empty by default, a YAML list
// in the file and comma-separated in the environment and flags; each entry
// is a CIDR or an address (masked; an address is its /32 or /128); an entry
// that is neither, that trusts every address, or that is IPv4-mapped is
// refused naming the key.
func TestTrustedProxies(t *testing.T) {
	t.Parallel()
	c, err := Load(Source{})
	if err != nil || len(c.HTTP.TrustedProxies) != 0 {
		t.Fatalf("default = %v, %v; want none", c.HTTP.TrustedProxies, err)
	}
	want := []string{"10.0.0.0/8", "192.0.2.7/32", "fd00::/8", "2001:db8::1/128"}
	for name, src := range map[string]Source{
		"file":  {File: writeFile(t, "http:\n  trustedProxies: [10.1.2.3/8, 192.0.2.7, 'fd00::/8', '2001:db8::1']\n")},
		"env":   {Env: []string{"OCC_HTTP_TRUSTED_PROXIES= 10.1.2.3/8 ,192.0.2.7,, fd00::/8,2001:db8::1"}},
		"flags": {Flags: map[string]string{"http.trustedProxies": "10.1.2.3/8,192.0.2.7,fd00::/8,2001:db8::1"}},
	} {
		c, err := Load(src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ps, err := c.HTTP.TrustedProxyPrefixes()
		var got []string
		for _, p := range ps {
			got = append(got, p.String())
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: prefixes = %v, %v; want %v", name, got, err, want)
		}
	}
	for _, tt := range []struct{ value, want string }{
		{"proxy.example.com", "is not a CIDR"},
		{"10.0.0.0/33", "is not a CIDR"},
		{"fe80::1%eth0", "is not a CIDR"},
		{"0.0.0.0/0", "any client could then choose its own address"},
		{"::/0", "any client could then choose its own address"},
		{"10.0.0.0/0", "trusts every address"},
		{"::ffff:10.0.0.0/104", "write it as IPv4"},
	} {
		_, err := Load(Source{Env: []string{"OCC_HTTP_TRUSTED_PROXIES=10.0.0.1," + tt.value}})
		wantProblem(t, err, "http.trustedProxies", tt.value, tt.want)
	}
	_, err = Load(Source{File: writeFile(t, "http:\n  trustedProxies: 10.0.0.0/8\n")})
	wantProblem(t, err, "http.trustedProxies", "want a list")
}

// kube selects the kubernetes driver in cluster with an image, then applies f.
func kube(f func(k *KubernetesCompute), more ...func(c *Config)) func(c *Config) {
	return func(c *Config) {
		c.Compute.Driver = "kubernetes"
		c.Compute.Kubernetes.InCluster = true
		c.Compute.Kubernetes.Images.Gateway = "registry.example/openclaw:2026.9.6"
		f(&c.Compute.Kubernetes)
		for _, m := range more {
			m(c)
		}
	}
}

// sshc selects a complete ssh driver, changed by f.
func sshc(f func(s *SSHCompute), more ...func(c *Config)) func(c *Config) {
	return func(c *Config) {
		c.Compute.Driver = "ssh"
		s := &c.Compute.SSH
		s.IdentityFile, s.KnownHostsFile = "/etc/occ/id_ed25519", "/etc/occ/known_hosts"
		s.Runtime.NodePath, s.Runtime.OpenClawPath = "/opt/node/bin/node", "/opt/openclaw/openclaw.mjs"
		s.Hosts = map[string]SSHHost{"default": {Address: "10.0.0.5"}, "team": {Address: "agents.example", Port: 2222, User: "root"}}
		f(s)
		for _, m := range more {
			m(c)
		}
	}
}

func dock(f func(d *DockerCompute), more ...func(c *Config)) func(c *Config) {
	return func(c *Config) {
		c.Compute.Driver = "docker"
		c.Compute.Docker.Images.Gateway = "openclaw-enterprise-runtime:quickstart"
		f(&c.Compute.Docker)
		for _, m := range more {
			m(c)
		}
	}
}

// TestDockerResources: the limits as the engine takes them.
func TestDockerResources(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mem, cpus string
		bytes     int64
		nano      int64
	}{{"3Gi", "4", 3 << 30, 4e9}, {"512Mi", "0.5", 512 << 20, 5e8}, {"1024", "1.25", 1024, 1.25e9}, {"2Ki", "0.001", 2048, 1e6}} {
		r := DockerResources{Memory: tt.mem, CPUs: tt.cpus}
		b, err := r.MemoryBytes()
		n, err2 := r.NanoCPUs()
		if err != nil || err2 != nil || b != tt.bytes || n != tt.nano {
			t.Errorf("%s %s: %d %d %v %v, want %d %d", tt.mem, tt.cpus, b, n, err, err2, tt.bytes, tt.nano)
		}
	}
	if _, err := (DockerResources{Memory: "99999999999999Ti"}).MemoryBytes(); err == nil {
		t.Error("an overflowing memory limit was accepted")
	}
}

// TestKubernetesFile: compute.kubernetes from the file, the environment
// over it, and an unknown key under it refused by name.
func TestKubernetesFile(t *testing.T) {
	t.Parallel()
	body := `compute:
  driver: kubernetes
  kubernetes:
    kubeconfig: /etc/occ/kubeconfig
    context: prod
    endpointAccess: service
    gatewayClients:
      namespace: occ-system
      podLabels: [app.kubernetes.io/name=occ, tier=api]
    images:
      gateway: registry.example/openclaw@sha256:` + strings.Repeat("0f", 32) + `
      requireImmutableDigest: true
      dedicatedCodex: true
    resources:
      gateway: {limitsMemory: 4Gi}
      harness: {limitsMemory: 8Gi}
      quotaPods: 50
`
	c, err := Load(Source{File: writeFile(t, body), Env: []string{"OCC_COMPUTE_KUBERNETES_GATEWAY_STORAGE_CLASS_NAME=fast-ssd"}})
	if err != nil {
		t.Fatal(err)
	}
	k := c.Compute.Kubernetes
	if k.Kubeconfig != "/etc/occ/kubeconfig" || k.Context != "prod" || k.EndpointAccess != "service" || !k.Images.RequireImmutableDigest ||
		k.Resources.Gateway.LimitsMemory != "4Gi" || k.Resources.Gateway.RequestsMemory != "1792Mi" || k.Resources.QuotaPods != 50 ||
		k.GatewayStorageClassName != "fast-ssd" || k.GatewayPort != 8080 || !k.Images.DedicatedCodex ||
		k.Resources.Harness.LimitsMemory != "8Gi" || k.Resources.Harness.RequestsMemory != "768Mi" {
		t.Errorf("compute.kubernetes = %+v", k)
	}
	_, err = Load(Source{Env: []string{"OCC_COMPUTE_KUBERNETES_RESOURCES_HARNESS_LIMITS_MEMORY=lots"}})
	wantProblem(t, err, "compute.kubernetes.resources.harness.limitsMemory", "quantity")
	if got := k.GatewayClients.PodLabelMap(); len(got) != 2 || got["app.kubernetes.io/name"] != "occ" || got["tier"] != "api" {
		t.Errorf("pod labels %v", got)
	}
	_, err = Load(Source{File: writeFile(t, "compute:\n  kubernetes:\n    namespace: occ\n")})
	wantProblem(t, err, "compute.kubernetes.namespace", "unknown")
}

// TestWorkerConcurrency: worker.concurrency left at 0 takes the compute
// driver's default (4 for ssh, whose operations queue on the host's lock;
// 32 otherwise); a value set is used as it is, for any driver.
func TestWorkerConcurrency(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		driver string
		set    int
		want   int
	}{
		{"local", 0, 32}, {"docker", 0, 32}, {"kubernetes", 0, 32}, {"ssh", 0, 4},
		{"ssh", 16, 16}, {"local", 2, 2},
	} {
		cfg := Defaults()
		cfg.Compute.Driver, cfg.Worker.Concurrency = c.driver, c.set
		if got := cfg.WorkerConcurrency(); got != c.want {
			t.Errorf("driver %s, worker.concurrency %d: %d jobs at once, want %d", c.driver, c.set, got, c.want)
		}
	}
}
