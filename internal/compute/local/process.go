package local

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/occ"
)

// proc is one gateway process: a child this driver started, or one an
// earlier driver started and this one adopted (then it is not our child and
// its end is seen by polling /proc).
type proc struct {
	pid     int
	start   uint64 // /proc start time
	child   *exec.Cmd
	started time.Time
	// done is closed once the process has exited (and, for a child, been
	// reaped); exit then says how ("exit-78", "signal-SIGKILL").
	done chan struct{}
	exit string
	// harness marks the app-server of a dedicated revision (harness.go);
	// otherwise it is the gateway.
	harness bool
}

// what names the process in log messages.
func (p *proc) what() string {
	if p.harness {
		return "harness"
	}
	return "gateway"
}

// key identifies the process across PID reuse.
func (p *proc) key() string { return strconv.Itoa(p.pid) + ":" + strconv.FormatUint(p.start, 10) }

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
	}
	return p.child == nil && !alive(p.pid, p.start)
}

// signal sends sig to the process if it still runs.
func (p *proc) signal(sig syscall.Signal) {
	if p.exited() {
		return
	}
	if p.child != nil {
		_ = p.child.Process.Signal(sig) // os.ErrProcessDone once reaped
		return
	}
	_ = syscall.Kill(p.pid, sig)
}

// wait waits up to timeout for the process to end and reports whether it
// did.
func (p *proc) wait(timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	if p.child != nil {
		select {
		case <-p.done:
			return true
		case <-deadline.C:
			return false
		}
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if p.exited() {
			return true
		}
		select {
		case <-p.done:
			return true
		case <-deadline.C:
			return p.exited()
		case <-tick.C:
		}
	}
}

// killWait bounds the wait for a process after SIGKILL.
const killWait = 10 * time.Second

// stopProc sends SIGTERM to the process, SIGKILL after the stop timeout,
// and waits for it to end.
func (d *Driver) stopProc(a *agent, p *proc) error {
	if p.exited() {
		return nil
	}
	p.signal(syscall.SIGTERM)
	if p.wait(d.stopTimeout) {
		d.log.Info(p.what()+" stopped", "namespace", a.ref.NamespaceID, "agent", a.ref.AgentID, "pid", p.pid)
		return nil
	}
	d.log.Warn(p.what()+" ignored SIGTERM; sending SIGKILL", "namespace", a.ref.NamespaceID, "agent", a.ref.AgentID, "pid", p.pid, "after", d.stopTimeout)
	p.signal(syscall.SIGKILL)
	if p.wait(killWait) {
		return nil
	}
	return fmt.Errorf("%s process %d did not exit after SIGKILL", p.what(), p.pid)
}

// exitText describes how a child ended.
func exitText(err error) string {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		if err == nil {
			return "exit-0"
		}
		return "error"
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "signal-" + signalName(ws.Signal())
	}
	return "exit-" + strconv.Itoa(ee.ExitCode())
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGINT:
		return "SIGINT"
	}
	return strconv.Itoa(int(s))
}

// observe reconciles the in-memory process with run.json and /proc, under
// the Agent's locks:
//   - run.json names another process than the one this driver watches:
//     another driver instance acted since; forget ours;
//   - run.json names a live process this driver does not watch: adopt it
//     (desired running) or finish the interrupted stop (desired stopped);
//   - run.json names a dead process this driver does not watch: not running;
//   - a start was interrupted before its PID was recorded: kill the orphan.
func (d *Driver) observe(a *agent, st *runState) error {
	changed := false
	if p := a.proc; p != nil && (st.PID != p.pid || st.StartTime != p.start) {
		a.proc = nil
	}
	if a.proc == nil && st.PID != 0 {
		switch {
		case !alive(st.PID, st.StartTime):
			st.PID, st.StartTime = 0, 0
			changed = true
		case st.Running:
			d.adopt(a, st)
		default:
			p := &proc{pid: st.PID, start: st.StartTime, done: make(chan struct{})}
			if err := d.stopProc(a, p); err != nil {
				return err
			}
			st.PID, st.StartTime = 0, 0
			changed = true
		}
	}
	if p := a.harness; p != nil && (st.HarnessPID != p.pid || st.HarnessStartTime != p.start) {
		a.harness = nil
	}
	if a.harness == nil && st.HarnessPID != 0 {
		switch {
		case !alive(st.HarnessPID, st.HarnessStartTime):
			st.HarnessPID, st.HarnessStartTime = 0, 0
			changed = true
		case st.Running:
			d.adoptHarness(a, st)
		default:
			if err := d.stopHarness(a, st); err != nil {
				return err
			}
		}
	}
	if st.Launching {
		d.killStrays(a, st, st.PID)
		st.Launching = false
		changed = true
	}
	if st.Dedicated && st.Running && a.proc != nil && a.harness == nil {
		// A dedicated gateway whose harness is gone holds a token of a
		// dead app-server: its supervisor starts both again.
		a.proc.signal(syscall.SIGTERM)
	}
	if changed {
		return writeRun(a.dir, st)
	}
	return nil
}

// adopt starts watching a live gateway an earlier driver started. Its
// secret environment is read back from /proc so that it can be restarted
// like one of ours.
func (d *Driver) adopt(a *agent, st *runState) {
	p := &proc{pid: st.PID, start: st.StartTime, started: time.Now(), done: make(chan struct{})}
	if env, err := readEnviron(p.pid); err == nil {
		a.env = map[string]string{}
		for _, kv := range env {
			if k, v, ok := strings.Cut(kv, "="); ok && !ownedEnv(k) {
				a.env[k] = v
			} else if ok && k == gateway.CodexTokenEnv {
				a.appToken = v
			}
		}
	}
	a.proc, a.backoff = p, 0
	d.log.Info("gateway re-adopted", "namespace", a.ref.NamespaceID, "agent", a.ref.AgentID, "pid", p.pid, "revision", st.RevisionID)
	go d.watchAdopted(p)
	go d.supervise(a, p)
}

// watchAdopted closes p.done once the adopted process p (not our child)
// is gone, polling /proc every second until the driver closes.
func (d *Driver) watchAdopted(p *proc) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-d.closed:
			return
		case <-tick.C:
		}
		if !alive(p.pid, p.start) {
			p.exit = "gone"
			close(p.done)
			return
		}
	}
}

// killStrays stops every live process whose environment names the
// Agent's state directory or, when gateways run as users of their own, that
// runs as the Agent's gateway user, and, unless the Agent's harness runs,
// the processes of the harness (its Codex home, its user); but except: what is left of a gateway whose
// start was interrupted before its PID was recorded, or the children of a
// gateway that died or was killed (the real gateway's spawn broker and
// workers inherit its environment; a process that dropped the environment
// keeps the user). Nothing of the Agent may legitimately run when it is
// called.
func (d *Driver) killStrays(a *agent, st *runState, except int) {
	pids := processesWithEnv("OPENCLAW_STATE_DIR=" + filepath.Join(a.dir, stateDir))
	uids := []uint32{st.UID}
	if a.harness == nil {
		pids = append(pids, processesWithEnv("CODEX_HOME="+a.codexHome())...)
		uids = append(uids, st.HarnessUID)
	}
	if d.separate {
		byUser := processesByUser()
		for _, uid := range uids {
			if uid != 0 {
				pids = append(pids, byUser[uid]...)
			}
		}
	}
	slices.Sort(pids)
	var strays []*proc
	for _, pid := range slices.Compact(pids) {
		if pid == except || a.harness != nil && pid == a.harness.pid {
			continue
		}
		if s, err := readStat(pid); err == nil {
			strays = append(strays, &proc{pid: pid, start: s.startTime, done: make(chan struct{})})
		}
	}
	if len(strays) == 0 {
		return
	}
	d.log.Warn("stopping stray processes of the Agent's gateway", "namespace", a.ref.NamespaceID, "agent", a.ref.AgentID, "count", len(strays))
	// All at once: SIGTERM, one grace period, SIGKILL for the rest.
	for _, p := range strays {
		p.signal(syscall.SIGTERM)
	}
	deadline := time.Now().Add(d.stopTimeout)
	for _, p := range strays {
		if !p.wait(time.Until(deadline)) {
			p.signal(syscall.SIGKILL)
		}
	}
	for _, p := range strays {
		p.wait(killWait)
	}
}

// start starts the gateway of st.RevisionID from the configuration doc
// (rendered again with the occ-owned keys) and records it in run.json.
// Nothing of the Agent may run (observe and the callers see to it); with
// sweep, strays of an earlier gateway are stopped first (not needed before
// the Agent's very first start).
func (d *Driver) start(a *agent, st *runState, doc map[string]any, sweep bool) error {
	if d.cmd == nil {
		return compute.Permanent(occ.DeployRuntimeNotConfigured, errNoCommand)
	}
	if sweep {
		d.killStrays(a, st, 0)
	}
	for _, sub := range gatewayDirs {
		if err := os.MkdirAll(filepath.Join(a.dir, sub), 0o700); err != nil {
			return fmt.Errorf("create agent directory: %w", err)
		}
	}
	if st.Port == 0 || !portFree(st.Port) || !d.claim(portClaim(st.Port), a.dir) {
		if err := d.allocatePort(a, st); err != nil {
			return err
		}
	}
	cred, err := d.gatewayCredential(a, st)
	if err != nil {
		return err
	}
	token, err := ensureToken(a.dir)
	if err != nil {
		return err
	}
	var codex *gateway.CodexAppServer
	if st.Dedicated {
		if d.harness == nil {
			return compute.Permanent(occ.DeployExecutionModeUnsupported, errNoHarness)
		}
		if err := d.installPlugin(a, st, cred); err != nil {
			return err
		}
		hcred, err := d.harnessCredential(a, st)
		if err != nil {
			return err
		}
		if err := d.startHarness(a, st, doc, hcred); err != nil {
			return err
		}
		codex = &gateway.CodexAppServer{URL: appServerURL(st)}
	}
	// Only occ and the gateway read it (0600, or 0640 to the gateway's own
	// group): in trusted-proxy mode it holds the identity derived from the
	// token.
	cfg, err := gateway.RenderConfig(gateway.RenderInput{Document: doc, Port: st.Port,
		WorkspaceDir: filepath.Join(a.dir, workspace), LogFile: filepath.Join(a.dir, logsDir, logFile), TrustedProxy: trustedProxy(st, token), CodexAppServer: codex})
	if err != nil {
		return compute.Permanent(occ.DeployInvalidConfiguration, err)
	}
	cfgPath := filepath.Join(a.dir, gateway.ConfigFileName)
	if err := writeFileAtomic(cfgPath, cfg); err != nil {
		return err
	}
	argv, err := d.cmd(st.Port)
	if err != nil {
		return err
	}
	if len(argv) == 0 {
		return errors.New("gateway command is empty")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if cred != nil {
		if err := share(cfgPath, cred.Gid, sharedMode); err != nil {
			return err
		}
		if err := othersCanRun(cmd.Path); err != nil {
			return err
		}
	}
	// The previous run's console stays beside the new one (a crash loop
	// keeps the output of the run that crashed).
	_ = os.Rename(filepath.Join(a.dir, consoleFile), filepath.Join(a.dir, prevConsoleFile))
	console, err := os.OpenFile(filepath.Join(a.dir, consoleFile), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("open console log: %w", err)
	}
	defer console.Close()
	cmd.Env = d.environment(a, st, token, argv[0], !wantsChannels(doc))
	cmd.Dir = filepath.Join(a.dir, homeDir)
	cmd.Stdout, cmd.Stderr = console, console
	// Its own process group: a signal to occ's group (Ctrl-C) does not stop
	// Agents, and the gateway outlives occ to be re-adopted. As its own
	// user when occ is root (users.go).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}

	st.Launching = true
	if err := writeRun(a.dir, st); err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		st.Launching = false
		_ = writeRun(a.dir, st)
		return fmt.Errorf("start gateway: %w", err)
	}
	p := &proc{pid: cmd.Process.Pid, child: cmd, started: time.Now(), done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.exit = exitText(err)
		close(p.done)
	}()
	s, err := readStat(p.pid)
	if err == nil {
		p.start = s.startTime
		st.PID, st.StartTime, st.Launching = p.pid, p.start, false
		err = writeRun(a.dir, st)
	}
	if err != nil {
		// Not recorded: never leave it running (Launching stays set, so a
		// later observe looks for it too).
		p.signal(syscall.SIGKILL)
		<-p.done
		return fmt.Errorf("record gateway process: %w", err)
	}
	a.proc, a.verified = p, ""
	d.log.Info("gateway started", "namespace", a.ref.NamespaceID, "agent", a.ref.AgentID, "revision", st.RevisionID, "pid", p.pid, "port", st.Port)
	go d.supervise(a, p)
	return nil
}

// supervise restarts the gateway p when it dies while it should run, with
// backoff: 1 s, doubling to 60 s; a gateway that ran longer than the
// longest backoff starts again at 1 s.
func (d *Driver) supervise(a *agent, p *proc) {
	select {
	case <-p.done:
	case <-d.closed:
		return
	}
	for {
		a.mu.Lock()
		if a.proc != p {
			a.mu.Unlock()
			return
		}
		if time.Since(p.started) >= maxBackoff {
			a.backoff = 0
		}
		a.backoff = min(max(2*a.backoff, minBackoff), maxBackoff)
		delay := a.backoff
		a.mu.Unlock()
		d.log.Warn("gateway exited; restarting", "namespace", a.ref.NamespaceID, "agent", a.ref.AgentID, "pid", p.pid, "exit", p.exit, "in", delay)

		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-d.closed:
			t.Stop()
			return
		}
		again := false
		err := d.withAgent(a.ref, false, func(a *agent, st *runState) error {
			if st == nil || a.proc != p || !st.Running {
				return nil // stopped, replaced or deleted meanwhile
			}
			doc, err := readConfig(a.dir)
			if err != nil {
				return err
			}
			if err := d.start(a, st, doc, true); err != nil {
				again = true
				return err
			}
			return nil
		})
		if err != nil {
			d.log.Error("gateway restart failed", "namespace", a.ref.NamespaceID, "agent", a.ref.AgentID, "err", err)
		}
		if !again {
			return
		}
	}
}

// readConfig reads the Agent's openclaw.json back as a document.
func readConfig(dir string) (map[string]any, error) {
	b, err := os.ReadFile(filepath.Join(dir, gateway.ConfigFileName))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", gateway.ConfigFileName, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("read %s: %w", gateway.ConfigFileName, err)
	}
	return doc, nil
}

// wantsChannels reports whether the document configures any channel; when
// none, the gateway is told to skip channels (faster start).
func wantsChannels(doc map[string]any) bool {
	ch, _ := doc["channels"].(map[string]any)
	return len(ch) > 0
}

// defaultPath is the PATH of a gateway, after its program's directory.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// ownedEnv reports whether occ sets the variable itself: a revision's
// environment cannot override it.
func ownedEnv(name string) bool {
	return name == "HOME" || name == "PATH" || name == gateway.CodexTokenEnv || strings.HasPrefix(name, "OPENCLAW_")
}

// environment is the gateway's whole environment: the runtime's needs
// (gateway.LaunchEnv, a minimal PATH) and the revision's secret
// environment, nothing inherited from occ.
func (d *Driver) environment(a *agent, st *runState, secret, program string, skipChannels bool) []string {
	token, password := secretEnv(st, secret)
	env := gateway.LaunchEnv(gateway.LaunchInput{
		Home:         filepath.Join(a.dir, homeDir),
		ConfigPath:   filepath.Join(a.dir, gateway.ConfigFileName),
		StateDir:     filepath.Join(a.dir, stateDir),
		Token:        token,
		Password:     password,
		SkipChannels: skipChannels,
		// Its own user reads openclaw.json and cannot write it (users.go).
		ConfigReadOnly: d.separate,
	})
	path := defaultPath
	if filepath.IsAbs(program) {
		path = filepath.Dir(program) + ":" + path
	}
	env = append(env, "PATH="+path)
	if st.Dedicated && a.appToken != "" {
		env = append(env, gateway.CodexTokenEnv+"="+a.appToken)
	}
	for k, v := range a.env {
		if k == "" || ownedEnv(k) || strings.ContainsAny(k, "=\x00") {
			continue
		}
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}
