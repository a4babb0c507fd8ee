package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// Harness runs the dedicated Codex pieces of an Agent (a revision with
// executionMode dedicated): the Codex app-server that holds the model
// credential, beside a gateway that reaches it over WebSocket.
//
// A dedicated revision starts like this (PrepareRevision):
//
//  1. login: `codex login --with-api-key` (harnessAuth api_key,
//     OPENAI_API_KEY) or `--with-access-token` (codex_pat,
//     CODEX_ACCESS_TOKEN), the secret on stdin, into the Agent's own Codex
//     home (harness/codex, 0700); the secret then leaves occ's memory;
//  2. model probe: a tool-less `codex exec` turn of the primary model;
//     401/403 from the provider is a held AUTHENTICATION_FAILED
//     (RUNTIME_AUTHENTICATION_FAILED), no answer in the probe budget a held
//     MODEL_PROBE_TIMEOUT, another failure a held MODEL_PROBE_FAILED;
//  3. the app-server: `codex app-server --listen ws://127.0.0.1:PORT
//     --ws-auth capability-token --ws-token-sha256 <sha256(token)>` with a
//     new random token per start, supervised like the gateway; it must
//     answer /readyz before the gateway starts;
//  4. the gateway's codex plugin, installed once into the gateway's state
//     with `openclaw plugins install <spec> --pin` (the gateway trusts only
//     a plugin it installed itself from the official npm package);
//  5. the gateway, its document pointing the primary model at the codex
//     harness over WebSocket (gateway.RenderInput.CodexAppServer) and its
//     environment holding the token (gateway.CodexTokenEnv), never the
//     model credential.
type Harness struct {
	// Codex returns the command line prefix that runs the Codex CLI
	// (program first), for example [node, codex.js].
	Codex func() ([]string, error)
	// OpenClaw returns the command line prefix of the openclaw CLI, for
	// the plugin install.
	OpenClaw func() ([]string, error)
	// PluginSpec is the npm spec of the gateway's codex plugin.
	PluginSpec string
}

// InstalledHarness runs the Codex pieces of the pinned runtime installed
// under runtimeDir (occ runtime install), looked up at every use. With a
// progress writer, a machine that lacks them installs them first (the
// first dedicated deploy), like InstallingRuntime.
func InstalledHarness(runtimeDir string, progress io.Writer) *Harness {
	return &Harness{
		Codex: func() ([]string, error) {
			rt, ok := agentruntime.Find(runtimeDir, agentruntime.Pinned())
			c, cok := agentruntime.FindCodex(runtimeDir)
			if (!ok || !cok) && progress != nil {
				ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
				defer cancel()
				o := agentruntime.Options{Dir: runtimeDir, Progress: progress}
				rt, err := agentruntime.Install(ctx, o)
				if err == nil {
					c, err = agentruntime.InstallCodex(ctx, o, rt)
				}
				if err != nil {
					return nil, fmt.Errorf("install the pinned runtime's Codex pieces into %s: %w", runtimeDir, err)
				}
				return []string{rt.Node, c.Entry}, nil
			}
			if !ok || !cok {
				return nil, fmt.Errorf("the pinned runtime with its Codex pieces is not installed in %s (occ runtime install)", runtimeDir)
			}
			return []string{rt.Node, c.Entry}, nil
		},
		OpenClaw: func() ([]string, error) {
			rt, ok := agentruntime.Find(runtimeDir, agentruntime.Pinned())
			if !ok {
				return nil, fmt.Errorf("the pinned OpenClaw runtime is not installed in %s (occ runtime install)", runtimeDir)
			}
			return []string{rt.Node, rt.Entry()}, nil
		},
		PluginSpec: agentruntime.CodexPluginPackage + "@" + agentruntime.CodexPluginVersion,
	}
}

// BinaryHarness runs binaries that take the real command lines (the fake
// Codex CLI and the fake gateway of gatewaytest).
func BinaryHarness(codex, openclaw string) *Harness {
	return &Harness{
		Codex:      func() ([]string, error) { return []string{codex}, nil },
		OpenClaw:   func() ([]string, error) { return []string{openclaw}, nil },
		PluginSpec: agentruntime.CodexPluginPackage + "@" + agentruntime.CodexPluginVersion,
	}
}

// Files and numbers of the harness.
const (
	harnessDir = "harness" // the harness's HOME; harness/codex is CODEX_HOME
	codexHome  = "codex"   // in harnessDir
	harnessLog = "harness.log"
	// pluginInstallConfig is the scratch configuration the plugin install
	// runs with (in stateDir): the gateway's own openclaw.json is occ's.
	pluginInstallConfig = "plugin-install.json"
	// harnessPortOffset puts the app-server above every port a gateway
	// derives from its own (up to +110) and below the next Agent's.
	harnessPortOffset = 111
	pluginTimeout     = 10 * time.Minute
)

// Harness checks and codes (component ComponentHarness).
const (
	ComponentHarness = compute.HarnessComponent
	CheckLogin       = compute.HarnessCheckLogin
	CheckAppServer   = compute.HarnessCheckAppServe
	// CodeNotLoggedIn: the Agent's Codex home holds no login.
	CodeNotLoggedIn = compute.HarnessNotLoggedIn
)

func (a *agent) codexHome() string { return filepath.Join(a.dir, harnessDir, codexHome) }

func harnessPort(st *runState) int { return st.Port + harnessPortOffset }

func appServerURL(st *runState) string { return "ws://127.0.0.1:" + strconv.Itoa(harnessPort(st)) }

// passEnv are the variables of occ's own environment the harness and the
// plugin install keep: how this machine reaches the network (certificates,
// proxies); npm's own settings only for the plugin install.
var passEnv = []string{"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy"}

func inherited(npm bool) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(passEnv, k) || npm && (strings.HasPrefix(k, "npm_config_") || strings.HasPrefix(k, "NPM_CONFIG_")) {
			out = append(out, kv)
		}
	}
	return out
}

// withoutNPMCache drops npm's cache setting from env: occ's npm cache
// belongs to occ's user, and an install run as the gateway's own user could
// not write it (npm refuses with EACCES); that install uses the cache in
// its own home.
func withoutNPMCache(env []string) []string {
	return slices.DeleteFunc(env, func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return strings.EqualFold(k, "npm_config_cache")
	})
}

// harnessEnviron is the whole environment of every Codex command: its
// home, the network settings, and never a secret (login reads it on stdin).
func (d *Driver) harnessEnviron(a *agent, program string) []string {
	path := defaultPath
	if filepath.IsAbs(program) {
		path = filepath.Dir(program) + ":" + path
	}
	env := append([]string{"HOME=" + filepath.Join(a.dir, harnessDir), "CODEX_HOME=" + a.codexHome(), "PATH=" + path,
		"RUST_LOG=warn,codex_otel=off"}, inherited(false)...)
	slices.Sort(env)
	return env
}

// codexOverrides are the -c settings every Codex command of the
// revision gets (compute.CodexOverrides), from what run.json keeps.
func codexOverrides(doc map[string]any, st *runState) []string {
	return compute.CodexOverrides(doc, st.HarnessBaseURL, st.HarnessWorkspace)
}

// codexCommand is one Codex CLI command for the Agent, as the Agent's
// harness user (harnessCredential) when occ runs as root.
func (d *Driver) codexCommand(ctx context.Context, a *agent, cred *syscall.Credential, args ...string) (*exec.Cmd, error) {
	prefix, err := d.harness.Codex()
	if err != nil {
		return nil, err
	}
	argv := append(append([]string{}, prefix...), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = d.harnessEnviron(a, argv[0])
	cmd.Dir = filepath.Join(a.dir, harnessDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	return cmd, nil
}

// openHarnessLog opens the harness's log (0600, appended), where the
// output of every Codex command goes.
func openHarnessLog(a *agent) (*os.File, error) {
	return os.OpenFile(filepath.Join(a.dir, harnessLog), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
}

// verifyHarness logs the harness in with the revision's credential and
// probes the model. done false: both passed; otherwise r is the answer (a
// held failure, or pending when ctx ended first).
func (d *Driver) verifyHarness(ctx context.Context, a *agent, st *runState, cred *syscall.Credential, doc map[string]any, secret map[string]string) (r compute.Readiness, done bool, err error) {
	log, err := openHarnessLog(a)
	if err != nil {
		return r, false, err
	}
	defer log.Close()

	login, value, held := compute.CodexLogin(secret)
	if held != nil {
		return *held, true, nil
	}
	lctx, cancel := context.WithTimeout(ctx, compute.HarnessLoginTimeout)
	defer cancel()
	cmd, err := d.codexCommand(lctx, a, cred, append(codexOverrides(doc, st), login...)...)
	if err != nil {
		return r, false, err
	}
	cmd.Stdin = strings.NewReader(value + "\n")
	var loginOut tailBuffer
	// One writer for both: exec then writes from one goroutine at a time.
	both := io.MultiWriter(log, &loginOut)
	cmd.Stdout, cmd.Stderr = both, both
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return compute.Readiness{PendingReason: PendingStarting}, true, nil
		}
		d.log.Warn("harness login failed", "namespace", a.ref.NamespaceID, "agent", a.ref.AgentID, "exit", exitText(err))
		// An access-token login asks the provider about the token: a
		// refusal is a rejected credential.
		return compute.CodexLoginFailed(loginOut.String()), true, nil
	}

	pctx, cancel := context.WithTimeout(ctx, d.modelProbeTimeout)
	defer cancel()
	cmd, err = d.codexCommand(pctx, a, cred, append(codexOverrides(doc, st), compute.CodexProbeArgs(doc)...)...)
	if err != nil {
		return r, false, err
	}
	var out tailBuffer
	both = io.MultiWriter(log, &out)
	cmd.Stdout, cmd.Stderr = both, both
	runErr := cmd.Run()
	switch {
	case runErr == nil:
		return r, false, nil
	case ctx.Err() != nil:
		return compute.Readiness{PendingReason: PendingStarting}, true, nil
	case pctx.Err() != nil:
		return compute.CodexProbeTimedOut(), true, nil
	}
	return compute.CodexProbeVerdict(out.String()), true, nil
}

// tailBuffer keeps the last 64 KiB written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 64<<10 {
		t.b = t.b[len(t.b)-64<<10:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }

// startHarness starts the Agent's app-server unless it runs, with a new
// token, records it in run.json and waits for its /readyz.
func (d *Driver) startHarness(a *agent, st *runState, doc map[string]any, cred *syscall.Credential) error {
	if p := a.harness; p != nil && !p.exited() && a.appToken != "" {
		return nil
	}
	// One that runs with a token occ no longer knows (re-adopted without
	// its gateway) is replaced.
	if err := d.stopHarness(a, st); err != nil {
		return err
	}
	serve, token, err := compute.CodexAppServerArgs(appServerURL(st))
	if err != nil {
		return err
	}
	cmd, err := d.codexCommand(context.Background(), a, cred, append(codexOverrides(doc, st), serve...)...)
	if err != nil {
		return err
	}
	cmd.Cancel, cmd.WaitDelay = nil, 0
	log, err := openHarnessLog(a)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the harness: %w", err)
	}
	p := &proc{pid: cmd.Process.Pid, child: cmd, started: time.Now(), done: make(chan struct{}), harness: true}
	go func() {
		err := cmd.Wait()
		p.exit = exitText(err)
		close(p.done)
	}()
	if s, err := readStat(p.pid); err == nil {
		p.start = s.startTime
	}
	st.HarnessPID, st.HarnessStartTime = p.pid, p.start
	if err := writeRun(a.dir, st); err != nil {
		p.signal(syscall.SIGKILL)
		<-p.done
		return err
	}
	a.harness, a.appToken = p, token
	d.log.Info("harness started", "namespace", a.ref.NamespaceID, "agent", a.ref.AgentID, "pid", p.pid, "port", harnessPort(st))
	go d.superviseHarness(a, p)

	deadline := time.Now().Add(compute.HarnessAppServerWait)
	for !appServerReady(st) {
		if p.exited() || time.Now().After(deadline) {
			_ = d.stopHarness(a, st)
			return fmt.Errorf("the harness app-server did not answer on %s (exit %q)", appServerURL(st), p.exit)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// appServerReady asks the app-server's /readyz.
func appServerReady(st *runState) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(harnessPort(st))+"/readyz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// superviseHarness stops the gateway when its harness dies while the
// Agent should run: the gateway's supervisor then starts both again (the
// app-server first, with a new token).
func (d *Driver) superviseHarness(a *agent, p *proc) {
	select {
	case <-p.done:
	case <-d.closed:
		return
	}
	a.mu.Lock()
	current := a.harness == p
	g := a.proc
	a.mu.Unlock()
	if !current || g == nil {
		return
	}
	d.log.Warn("harness exited; restarting the Agent's gateway with it", "namespace", a.ref.NamespaceID, "agent", a.ref.AgentID, "pid", p.pid, "exit", p.exit)
	g.signal(syscall.SIGTERM)
}

// stopHarness stops the Agent's app-server and records it.
func (d *Driver) stopHarness(a *agent, st *runState) error {
	p := a.harness
	if p == nil && st.HarnessPID != 0 && alive(st.HarnessPID, st.HarnessStartTime) {
		p = &proc{pid: st.HarnessPID, start: st.HarnessStartTime, done: make(chan struct{}), harness: true}
	}
	if p != nil {
		if err := d.stopProc(a, p); err != nil {
			return err
		}
	}
	a.harness, a.appToken = nil, ""
	if st.HarnessPID != 0 {
		st.HarnessPID, st.HarnessStartTime = 0, 0
		return writeRun(a.dir, st)
	}
	return nil
}

// installPlugin installs the codex plugin into the gateway's state once.
func (d *Driver) installPlugin(a *agent, st *runState, cred *syscall.Credential) error {
	if st.CodexPlugin == d.harness.PluginSpec {
		return nil
	}
	prefix, err := d.harness.OpenClaw()
	if err != nil {
		return err
	}
	scratch := filepath.Join(a.dir, stateDir, pluginInstallConfig)
	if err := os.WriteFile(scratch, []byte("{}\n"), 0o600); err != nil {
		return err
	}
	if cred != nil {
		if err := os.Chown(scratch, int(cred.Uid), int(cred.Gid)); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), pluginTimeout)
	defer cancel()
	argv := append(append([]string{}, prefix...), "plugins", "install", d.harness.PluginSpec, "--pin")
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	path := defaultPath
	if filepath.IsAbs(argv[0]) {
		path = filepath.Dir(argv[0]) + ":" + path
	}
	npm := inherited(true)
	if cred != nil {
		npm = withoutNPMCache(npm)
	}
	cmd.Env = append([]string{"HOME=" + filepath.Join(a.dir, homeDir), "OPENCLAW_STATE_DIR=" + filepath.Join(a.dir, stateDir),
		"OPENCLAW_CONFIG_PATH=" + scratch, "PATH=" + path}, npm...)
	cmd.Dir = filepath.Join(a.dir, homeDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var out tailBuffer
	log, err := openHarnessLog(a)
	if err != nil {
		return err
	}
	defer log.Close()
	// One writer for both: exec then writes from one goroutine at a time.
	both := io.MultiWriter(log, &out)
	cmd.Stdout, cmd.Stderr = both, both
	began := time.Now()
	if err := cmd.Run(); err != nil {
		// Named, never retried into a generic failure: the deployment
		// fails with the plugin (its package name, nothing it printed).
		return compute.PermanentWith(occ.DeployPluginInstallFailed, map[string]any{"pluginId": agentruntime.CodexPluginPackage},
			fmt.Errorf("install %s into the gateway's state: %s", d.harness.PluginSpec, exitText(err)))
	}
	_ = os.Remove(scratch)
	d.log.Info("codex plugin installed into the gateway's state", "namespace", a.ref.NamespaceID, "agent", a.ref.AgentID, "spec", d.harness.PluginSpec, "in", time.Since(began).Round(time.Millisecond))
	st.CodexPlugin = d.harness.PluginSpec
	return writeRun(a.dir, st)
}

// prepareDedicated gets a dedicated revision's harness ready to start:
// its directories and users (the gateway's, and the harness's own), then login and model probe (verifyHarness).
func (d *Driver) prepareDedicated(ctx context.Context, a *agent, st *runState, spec compute.RevisionSpec) (compute.Readiness, bool, error) {
	if d.harness == nil {
		return compute.Readiness{}, false, compute.Permanent(occ.DeployExecutionModeUnsupported, errNoHarness)
	}
	for _, sub := range append(slices.Clone(gatewayDirs), filepath.Join(harnessDir, codexHome)) {
		if err := os.MkdirAll(filepath.Join(a.dir, sub), 0o700); err != nil {
			return compute.Readiness{}, false, fmt.Errorf("create agent directory: %w", err)
		}
	}
	cred, err := d.harnessCredential(a, st)
	if err != nil {
		return compute.Readiness{}, false, err
	}
	// Where the harness sends model requests and which workspace it must
	// use are kept for its restarts (not secrets).
	st.HarnessBaseURL, st.HarnessWorkspace = spec.HarnessEnv[compute.HarnessBaseURLEnv], spec.HarnessEnv[compute.HarnessWorkspaceEnv]
	return d.verifyHarness(ctx, a, st, cred, spec.Document, spec.HarnessEnv)
}

// adoptHarness starts watching a live app-server an earlier driver
// started.
func (d *Driver) adoptHarness(a *agent, st *runState) {
	p := &proc{pid: st.HarnessPID, start: st.HarnessStartTime, started: time.Now(), done: make(chan struct{}), harness: true}
	a.harness = p
	d.log.Info("harness re-adopted", "namespace", a.ref.NamespaceID, "agent", a.ref.AgentID, "pid", p.pid)
	go d.watchAdopted(p)
	go d.superviseHarness(a, p)
}

// loggedIn reports whether the Agent's Codex home holds a login.
func loggedIn(a *agent) bool {
	_, err := os.Stat(filepath.Join(a.codexHome(), "auth.json"))
	return err == nil
}

// errNoHarness: a dedicated revision reached a driver without a Harness
// (its Capabilities do not declare dedicated then; the worker checks).
var errNoHarness = errors.New("local compute driver has no Codex harness configured")
