package gateway_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
)

// syncBuffer is a bytes.Buffer safe for a process writing and a test reading.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is one fakegateway process, started the way the local driver starts
// a gateway: rendered openclaw.json, LaunchEnv, LaunchArgs.
type proc struct {
	cmd            *exec.Cmd
	port           int
	token          string
	baseURL        string
	configPath     string
	workspace      string
	logFile        string
	config         []byte
	stdout, stderr syncBuffer
	exited         chan struct{}
	started        time.Time
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startProc starts bin with a config rendered from doc. noToken leaves
// OPENCLAW_GATEWAY_TOKEN out; port 0 picks a free one.
func startProc(t *testing.T, bin string, doc map[string]any, port int, noToken bool, env ...string) *proc {
	t.Helper()
	dir := t.TempDir()
	if port == 0 {
		port = freePort(t)
	}
	p := &proc{
		port: port, token: fmt.Sprintf("token-%d-%d", port, time.Now().UnixNano()),
		baseURL:    fmt.Sprintf("http://127.0.0.1:%d", port),
		configPath: filepath.Join(dir, gateway.ConfigFileName),
		workspace:  filepath.Join(dir, "workspace"),
		logFile:    filepath.Join(dir, "openclaw.log"),
		exited:     make(chan struct{}),
	}
	cfg, err := gateway.RenderConfig(gateway.RenderInput{Document: doc, Port: port, WorkspaceDir: p.workspace, LogFile: p.logFile})
	if err != nil {
		t.Fatal(err)
	}
	p.config = cfg
	if err := os.WriteFile(p.configPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	in := gateway.LaunchInput{Home: filepath.Join(dir, "home"), ConfigPath: p.configPath, StateDir: filepath.Join(dir, "state"), Token: p.token}
	if noToken {
		in.Token = ""
	}
	p.cmd = exec.Command(bin, gateway.LaunchArgs(port)...)
	p.cmd.Env = append(gateway.LaunchEnv(in), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// exitCode waits (bounded) for the process to end.
func (p *proc) exitCode(t *testing.T) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(wait):
		t.Fatalf("process still running; stderr:\n%s", p.stderr.String())
		return -1
	}
}

// waitReady probes until the gateway is ready; every failure on the way must
// be "not listening yet" or "not ready yet". It returns the time from exec.
func (p *proc) waitReady(t *testing.T) time.Duration {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		_, err := gateway.Probe(ctxT(t), p.baseURL)
		if err == nil {
			return time.Since(p.started)
		}
		if !errors.Is(err, gateway.ErrUnreachable) && !errors.Is(err, gateway.ErrNotReady) {
			t.Fatalf("probe: %v", err)
		}
		select {
		case <-p.exited:
			t.Fatalf("exited %d before ready; stderr:\n%s", p.cmd.ProcessState.ExitCode(), p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (p *proc) dial(t *testing.T) *gateway.Conn {
	t.Helper()
	c, err := gateway.Dial(ctxT(t), gateway.Options{URL: p.baseURL, Token: p.token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestFakeBinary(t *testing.T) {
	t.Parallel()
	bin := gatewaytest.BuildBinary(t)

	t.Run("lifecycle", func(t *testing.T) {
		t.Parallel()
		p := startProc(t, bin, map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": "openai/gpt-6"}}}, 0, false)
		t.Logf("fake gateway process: exec to ready in %v", p.waitReady(t))
		c := p.dial(t)
		if c.Hello().BootID == "" || c.Hello().ServerVersion != gateway.Version {
			t.Errorf("hello %+v", c.Hello())
		}
		s, err := c.ConfigGet(ctxT(t))
		if err != nil || s.Raw != string(p.config) || s.Path != p.configPath {
			t.Fatalf("config.get = %+v, %v", s, err)
		}

		// The four files round trip byte for byte, whitespace included.
		contents := map[string]string{
			"AGENTS.md":   "# Agents\n\n- rule one  \n- rule two\t\n\n\n",
			"SOUL.md":     "  leading and trailing spaces  ",
			"IDENTITY.md": "",
			"USER.md":     "line\r\nwindows line\r\n\u00a0nbsp — ✓\n \n",
		}
		for _, name := range gateway.DefaultFileNames {
			want := contents[name]
			w, err := c.SetAgentFile(ctxT(t), gateway.AgentFileWrite{Name: name, Content: want})
			if err != nil {
				t.Fatalf("set %s: %v", name, err)
			}
			f, err := c.GetAgentFile(ctxT(t), "", name)
			if err != nil || f.Missing || f.Content != want || f.Hash != w.Hash {
				t.Errorf("get %s = %+v, %v", name, f, err)
			}
			disk, err := os.ReadFile(filepath.Join(p.workspace, name))
			if err != nil || string(disk) != want {
				t.Errorf("%s on disk = %q, %v", name, disk, err)
			}
		}

		// logging.file has JSON lines.
		log, err := os.ReadFile(p.logFile)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(log))
		lines := 0
		for sc.Scan() {
			var l struct {
				Time    string `json:"time"`
				Message string `json:"message"`
				Meta    struct {
					Level string `json:"logLevelName"`
				} `json:"_meta"`
			}
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Time == "" || l.Message == "" || l.Meta.Level == "" {
				t.Errorf("log line %q: %v", sc.Text(), err)
			}
			lines++
		}
		if lines == 0 {
			t.Error("empty log file")
		}

		// SIGTERM: the connection ends, the process exits 0.
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := p.exitCode(t); code != 0 {
			t.Errorf("exit %d after SIGTERM; stderr:\n%s", code, p.stderr.String())
		}
		<-c.Done()
		if _, err := gateway.Probe(ctxT(t), p.baseURL); !errors.Is(err, gateway.ErrUnreachable) {
			t.Errorf("probe after exit: %v", err)
		}
		if !strings.Contains(p.stdout.String(), "listening on ws://127.0.0.1:") {
			t.Errorf("stdout:\n%s", p.stdout.String())
		}
	})

	t.Run("slow start", func(t *testing.T) {
		t.Parallel()
		p := startProc(t, bin, nil, 0, false, "FAKEGATEWAY_LISTEN_DELAY=200ms", "FAKEGATEWAY_STARTUP_DELAY=300ms")
		p.waitReady(t)
		p.dial(t)
	})

	t.Run("crash", func(t *testing.T) {
		t.Parallel()
		p := startProc(t, bin, nil, 0, false, "FAKEGATEWAY_CRASH_AFTER=300ms", "FAKEGATEWAY_CRASH_EXIT_CODE=3")
		if code := p.exitCode(t); code != 3 {
			t.Errorf("exit %d, want 3; stderr:\n%s", code, p.stderr.String())
		}
	})

	t.Run("model credential rejected", func(t *testing.T) {
		t.Parallel()
		doc := map[string]any{
			"models": map[string]any{"providers": map[string]any{"fakeprov": map[string]any{"baseUrl": "http://127.0.0.1:9/v1", "apiKey": "${FAKEPROV_KEY}",
				"api": "openai-completions", "models": []any{map[string]any{"id": "m1", "name": "M1"}}}}},
			"agents": map[string]any{"defaults": map[string]any{"model": map[string]any{"primary": "fakeprov/m1"}}},
		}
		p := startProc(t, bin, doc, 0, false, "FAKEGATEWAY_MODEL_AUTH=rejected", "FAKEPROV_KEY=sk-bad")
		p.waitReady(t)
		pr, err := p.dial(t).ProbeModel(ctxT(t), gateway.ModelProvider(doc))
		gwErr(t, err, gateway.ErrModelAuth)
		if pr.Status != "auth" || len(pr.Results) != 1 || pr.Results[0].Status != "auth" {
			t.Errorf("probe %+v", pr)
		}
	})

	t.Run("plugin warnings", func(t *testing.T) {
		t.Parallel()
		p := startProc(t, bin, nil, 0, false, "FAKEGATEWAY_PLUGIN_WARNINGS=slack:install_failed,github:auth_required")
		p.waitReady(t)
		h, err := p.dial(t).Health(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(h.PluginWarnings()); got != "[{PLUGIN_AUTH_REQUIRED github} {PLUGIN_INSTALL_FAILED slack}]" {
			t.Errorf("warnings %s", got)
		}
	})

	t.Run("slack invalid auth", func(t *testing.T) {
		t.Parallel()
		doc := map[string]any{"channels": map[string]any{"slack": map[string]any{"enabled": true, "botToken": "${SLACK_BOT_TOKEN}", "appToken": "${SLACK_APP_TOKEN}"}}}
		p := startProc(t, bin, doc, 0, false, "FAKEGATEWAY_SLACK=invalid_auth")
		deadline := time.Now().Add(wait)
		for {
			h, err := gateway.Probe(ctxT(t), p.baseURL)
			if h.Started {
				if !errors.Is(err, gateway.ErrNotReady) || strings.Join(h.Failing, ",") != "slack" {
					t.Fatalf("probe %+v %v", h, err)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("never started: %v", err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})

	refusals := []struct {
		name    string
		doc     map[string]any
		noToken bool
		env     []string
		code    int
		stderr  string
	}{
		{name: "unknown config key", doc: map[string]any{"gateway": map[string]any{"bogusKey": 1}}, code: 78, stderr: `Unrecognized key: "bogusKey"`},
		{name: "wrongly typed key", doc: map[string]any{"logging": map[string]any{"level": "info"}, "agents": map[string]any{"entries": "x"}}, code: 78, stderr: "agents.entries: Invalid input"},
		{name: "no token", noToken: true, code: 78, stderr: "OPENCLAW_GATEWAY_TOKEN"},
		{name: "bad switch", env: []string{"FAKEGATEWAY_SLACK=nope"}, code: 2, stderr: "FAKEGATEWAY_SLACK"},
		{name: "bad duration", env: []string{"FAKEGATEWAY_STARTUP_DELAY=soon"}, code: 2, stderr: "FAKEGATEWAY_STARTUP_DELAY"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := startProc(t, bin, tt.doc, 0, tt.noToken, tt.env...)
			if code := p.exitCode(t); code != tt.code || !strings.Contains(p.stderr.String(), tt.stderr) {
				t.Errorf("exit %d (want %d); stderr:\n%s", code, tt.code, p.stderr.String())
			}
			if tt.code == 78 && !strings.Contains(p.stderr.String(), "Gateway failed to start: Invalid config at "+p.configPath) {
				t.Errorf("stderr:\n%s", p.stderr.String())
			}
		})
	}

	t.Run("port in use", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		p := startProc(t, bin, nil, l.Addr().(*net.TCPAddr).Port, false)
		if code := p.exitCode(t); code != 1 || !strings.Contains(p.stderr.String(), "another gateway instance is already listening") {
			t.Errorf("exit %d; stderr:\n%s", code, p.stderr.String())
		}
	})

	t.Run("usage", func(t *testing.T) {
		t.Parallel()
		out, err := exec.Command(bin, "serve").CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "usage") {
			t.Errorf("%v: %s", err, out)
		}
	})
}
