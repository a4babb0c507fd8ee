package kubetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/openclaw/occ/internal/compute/kubernetes"
)

// fakeHarness is a dedicated gateway Pod's harness process: the harness
// container's own first process (kubernetes.HarnessScript, run by this
// host's node) with the fake Codex CLI as the image's codex.
type fakeHarness struct {
	cmd    *exec.Cmd
	url    string
	env    map[string]string
	exited chan struct{}
}

// RunHarnesses makes the stand-in kubelet run the init containers of
// dedicated gateway Pods: the codex plugin's install (the fake gateway's
// `plugins install`) and the Codex harness with codexBin
// (gatewaytest.BuildCodexBinary) on a free loopback port, which the Pod's
// gateway is pointed at in place of the Pod's loopback address.
func (k *Kubelet) RunHarnesses(codexBin string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.codex = codexBin
}

// runInit runs a Pod's init containers as a kubelet would before its
// gateway: nil when it has none.
func (k *Kubelet) runInit(ctx context.Context, p *corev1.Pod, podDir, stateDir string) (*fakeHarness, error) {
	var h *fakeHarness
	for _, c := range p.Spec.InitContainers {
		switch c.Name {
		case kubernetes.PluginContainerName:
			cmd := exec.CommandContext(ctx, k.bin, "plugins", "install", kubernetes.CodexPluginSpec, "--pin")
			cmd.Env = []string{"PATH=/usr/bin:/bin", "OPENCLAW_STATE_DIR=" + filepath.Join(stateDir, "state")}
			if out, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("plugin install: %v: %s", err, out)
			}
		case kubernetes.HarnessContainerName:
			var err error
			if h, err = k.startHarness(ctx, p, c, podDir); err != nil {
				return nil, err
			}
		default:
			h.kill()
			return nil, fmt.Errorf("init container %q: the stand-in kubelet does not run it", c.Name)
		}
	}
	return h, nil
}

// startHarness starts the harness container c and waits until its
// app-server answers /readyz (the container's startup probe).
func (k *Kubelet) startHarness(ctx context.Context, p *corev1.Pod, c corev1.Container, podDir string) (*fakeHarness, error) {
	k.mu.Lock()
	codex := k.codex
	k.mu.Unlock()
	if codex == "" {
		return nil, errors.New("a dedicated Pod, and the stand-in kubelet runs no harness (RunHarnesses)")
	}
	if len(c.Command) != 4 || c.Command[0] != "node" || c.Command[1] != "-e" {
		return nil, fmt.Errorf("harness command %q", c.Command)
	}
	var plan kubernetes.HarnessPlan
	if err := json.Unmarshal([]byte(c.Command[3]), &plan); err != nil {
		return nil, fmt.Errorf("harness plan: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	plan.Codex, plan.Listen, plan.TerminationLog = codex, "ws://127.0.0.1:"+strconv.Itoa(port), filepath.Join(podDir, "harness-termination-log")
	b, _ := json.Marshal(plan)
	env, err := k.env(ctx, p.Namespace, c.Env)
	if err != nil {
		return nil, err
	}
	codexDir := filepath.Join(podDir, "codex")
	env["HOME"], env["CODEX_HOME"] = codexDir, filepath.Join(codexDir, "home")
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(node, "-e", c.Command[2], string(b))
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	for name, v := range env {
		cmd.Env = append(cmd.Env, name+"="+v)
	}
	log, err := os.Create(filepath.Join(podDir, "harness.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	h := &fakeHarness{cmd: cmd, url: "ws://127.0.0.1:" + strconv.Itoa(port), env: env, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); log.Close(); close(h.exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-h.exited:
			msg, _ := os.ReadFile(plan.TerminationLog)
			return nil, fmt.Errorf("the harness stopped: %s", msg)
		case <-time.After(100 * time.Millisecond):
		}
		if resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return h, nil
			}
		}
	}
	h.kill()
	return nil, errors.New("the harness's app-server did not answer /readyz in 60 s")
}

func (h *fakeHarness) kill() {
	if h != nil {
		stopGroup(h.cmd, h.exited)
	}
}

// HarnessEnv is the environment the Pod's spec gave the harness of the
// Agent's dedicated gateway Pod, and whether one runs.
func (k *Kubelet) HarnessEnv(agentID string) (map[string]string, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range k.pods {
		if p.agent == agentID && p.harness != nil {
			return p.harness.env, true
		}
	}
	return nil, false
}
