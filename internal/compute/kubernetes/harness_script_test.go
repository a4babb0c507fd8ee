package kubernetes_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/kubernetes"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
)

// harnessRun is the harness's first process run by the host's node with
// the fake Codex CLI, as the harness container runs it.
type harnessRun struct {
	cmd     *exec.Cmd
	port    int
	stopLog string
	home    string
	exited  chan error
	output  bytes.Buffer
}

func startHarness(t *testing.T, codex string, login []string, secret string) *harnessRun {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH (scripts/test installs Debian's npm, which brings it): %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	plan := kubernetes.HarnessPlan{Codex: codex, Login: login,
		Probe:       compute.CodexProbeArgs(map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": map[string]any{"primary": "openai/gpt-5.4"}}}}),
		LoginMillis: 10_000, ProbeMillis: 1_500, Listen: "ws://127.0.0.1:" + strconv.Itoa(port),
		TerminationLog: filepath.Join(dir, "termination-log")}
	b, _ := json.Marshal(plan)
	h := &harnessRun{port: port, stopLog: plan.TerminationLog, home: filepath.Join(dir, "codex", "home"), exited: make(chan error, 1)}
	h.cmd = exec.Command(node, "-e", kubernetes.HarnessScript, string(b))
	h.cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + filepath.Join(dir, "codex"), "CODEX_HOME=" + h.home,
		"OCC_HARNESS_CREDENTIAL=" + secret, "OCC_CODEX_APP_SERVER_TOKEN=app-server-token-1"}
	h.cmd.Stdout, h.cmd.Stderr = &h.output, &h.output
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { h.exited <- h.cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
	})
	return h
}

// stop waits for the harness to stop and reads what it left.
func (h *harnessRun) stop(t *testing.T) kubernetes.HarnessStop {
	t.Helper()
	select {
	case <-h.exited:
	case <-time.After(60 * time.Second):
		t.Fatal("the harness did not stop")
	}
	if code := h.cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	b, err := os.ReadFile(h.stopLog)
	if err != nil {
		t.Fatalf("no termination message: %v\n%s", err, h.output.String())
	}
	var s kubernetes.HarnessStop
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("termination message %q: %v", b, err)
	}
	return s
}

// childEnv is the environment the harness's child process (the
// app-server) was started with.
func childEnv(t *testing.T, parent int) string {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(parent) {
			env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if err != nil {
				t.Fatal(err)
			}
			return string(env)
		}
	}
	t.Fatal("the harness runs no child")
	return ""
}

// upgrade asks the app-server for a WebSocket with the bearer token and
// returns the status line.
func upgrade(t *testing.T, port int, token string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer %s\r\n\r\n", token)
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(line)
}

// TestDedicatedCodexHarnessScript runs the harness container's first
// process as the container would (node, with the fake Codex CLI as the
// image's codex): it logs in with the credential from its environment,
// probes, and serves the app-server with the token's SHA-256, its child
// holding neither the credential nor the token; a failed login or probe
// leaves the termination message occ reads, with the verdict each gets.
func TestDedicatedCodexHarnessScript(t *testing.T) {
	t.Parallel()
	codex := gatewaytest.BuildCodexBinary(t)
	t.Run("serves", func(t *testing.T) {
		t.Parallel()
		h := startHarness(t, codex, []string{"login", "--with-api-key"}, "sk-good-canary")
		deadline := time.Now().Add(60 * time.Second)
		for {
			resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(h.port) + "/readyz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			select {
			case err := <-h.exited:
				t.Fatalf("the harness stopped: %v\n%s", err, h.output.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatal("the app-server never answered /readyz")
			}
			time.Sleep(100 * time.Millisecond)
		}
		if s := upgrade(t, h.port, "app-server-token-1"); !strings.Contains(s, "101") {
			t.Errorf("the gateway's token: %q, want 101", s)
		}
		if s := upgrade(t, h.port, "another-token"); !strings.Contains(s, "401") {
			t.Errorf("another token: %q, want 401", s)
		}
		env := childEnv(t, h.cmd.Process.Pid)
		if strings.Contains(env, "sk-good-canary") || strings.Contains(env, "app-server-token-1") {
			t.Errorf("the app-server's environment holds the credential or the token")
		}
		if b, _ := os.ReadFile(filepath.Join(h.home, "auth.json")); !strings.Contains(string(b), "sk-good-canary") {
			t.Errorf("the Codex login holds %q", b)
		}
	})
	cases := []struct {
		name, secret string
		login        []string
		stage        string
		timedOut     bool
		code         string
	}{
		{"rejected key", "sk-rejected-canary", []string{"login", "--with-api-key"}, kubernetes.StageProbe, false, compute.HeldAuthenticationFailed},
		{"forbidden key", "sk-forbidden-canary", []string{"login", "--with-api-key"}, kubernetes.StageProbe, false, compute.HeldAuthenticationFailed},
		{"failing provider", "sk-broken-canary", []string{"login", "--with-api-key"}, kubernetes.StageProbe, false, compute.HeldModelProbeFailed},
		{"silent provider", "sk-slow-canary", []string{"login", "--with-api-key"}, kubernetes.StageProbe, true, compute.HeldModelProbeTimeout},
		{"revoked access token", "at-revoked-canary", []string{"login", "--with-access-token"}, kubernetes.StageLogin, false, compute.HeldAuthenticationFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := startHarness(t, codex, c.login, c.secret).stop(t)
			if s.Stage != c.stage || s.TimedOut != c.timedOut || strings.Contains(s.Output, "canary") {
				t.Errorf("stop %+v, want stage %s timed out %v and no credential", s, c.stage, c.timedOut)
			}
			if r := kubernetes.StopVerdict(s); !r.Held || r.RuntimeFailure == nil || r.RuntimeFailure.Code != c.code {
				t.Errorf("verdict %+v (%+v), want held %s", r, r.RuntimeFailure, c.code)
			}
		})
	}
}
