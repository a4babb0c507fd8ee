package local

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/openclaw/occ/internal/compute"
)

// Files and directories of an Agent directory.
const (
	runFile     = "run.json"
	tokenFile   = "token"
	lockFile    = "lock"
	consoleFile = "console.log"
	// prevConsoleFile is the console of the run before.
	prevConsoleFile = "console.prev.log"
	logsDir         = "logs"
	logFile         = "gateway.log" // in logsDir
	stateDir        = "state"
	workspace       = "workspace"
	homeDir         = "home"
)

// runState is run.json: what a driver (this one or an earlier one on the
// same root) did with the Agent. It never holds a secret.
type runState struct {
	// RevisionID is the revision whose configuration openclaw.json holds and
	// whose gateway runs (or last ran).
	RevisionID string `json:"revisionId,omitempty"`
	// ActiveRevisionID is the revision ActivateRevision made the serving one.
	ActiveRevisionID string `json:"activeRevisionId,omitempty"`
	// Running is the desired state: the gateway should run (and be
	// restarted when it dies).
	Running bool `json:"running"`
	// Port is the Agent's loopback port, kept across restarts.
	Port int `json:"port,omitempty"`
	// UID is the user and group ID the Agent's gateway runs as when occ
	// runs as root (users.go), kept while the Agent exists; 0 when occ is
	// not root, and before the first start.
	UID uint32 `json:"uid,omitempty"`
	// TreeUID is the user the Agent's tree (state, workspace, home, logs)
	// was last handed over to; it differs from UID only until the hand-over
	// is done.
	TreeUID uint32 `json:"treeUid,omitempty"`
	// HarnessUID is the user and group ID a dedicated revision's harness
	// runs as when occ runs as root (harnessCredential): a second user of
	// the Agent, so that its gateway cannot read the harness's login.
	// HarnessTreeUID is, like TreeUID, the user harness/ was last handed
	// over to.
	HarnessUID     uint32 `json:"harnessUid,omitempty"`
	HarnessTreeUID uint32 `json:"harnessTreeUid,omitempty"`
	// PID and StartTime (clock ticks after boot, /proc/<pid>/stat field 22)
	// name the gateway process; 0 when none was started or it is known dead.
	PID       int    `json:"pid,omitempty"`
	StartTime uint64 `json:"startTime,omitempty"`
	// Launching is set just before a start and cleared once PID is recorded:
	// found set, a start was interrupted and its process may be an orphan.
	Launching bool `json:"launching,omitempty"`
	// InitialFilesApplied records that the workspace got the initial files
	// (before the first start): they are never written again.
	InitialFilesApplied bool `json:"initialFilesApplied,omitempty"`
	// Dedicated: the revision runs dedicated Codex (harness.go): the
	// harness app-server (HarnessPID, HarnessStartTime: as PID and
	// StartTime) beside the gateway. CodexPlugin is the codex plugin spec
	// installed into the gateway's state.
	Dedicated        bool   `json:"dedicated,omitempty"`
	HarnessPID       int    `json:"harnessPid,omitempty"`
	HarnessStartTime uint64 `json:"harnessStartTime,omitempty"`
	CodexPlugin      string `json:"codexPlugin,omitempty"`
	// HarnessBaseURL and HarnessWorkspace are the OpenAI base URL and the
	// ChatGPT workspace the revision's harness was delivered
	// (compute.HarnessBaseURLEnv, compute.HarnessWorkspaceEnv; not
	// secrets), used by every Codex command of the revision.
	HarnessBaseURL   string `json:"harnessBaseUrl,omitempty"`
	HarnessWorkspace string `json:"harnessWorkspace,omitempty"`
	// NativeAdminOrigin is the native admin origin the gateway of RevisionID
	// was started for (trusted-proxy mode); "" for token mode.
	NativeAdminOrigin string `json:"nativeAdminOrigin,omitempty"`
	// ModelProbed is the gateway process (pid:start) whose startup model
	// probe passed: a driver that re-adopts that very process (occ
	// restarted) checks its health and identity only, and never asks the
	// provider again (each probe is a billable call).
	ModelProbed string `json:"modelProbed,omitempty"`
}

// readRun reads run.json; a missing file is the zero state.
func readRun(dir string) (runState, error) {
	var st runState
	b, err := os.ReadFile(filepath.Join(dir, runFile))
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read %s: %w", runFile, err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("read %s: %w", runFile, err)
	}
	return st, nil
}

// writeRun replaces run.json atomically and durably.
func writeRun(dir string, st *runState) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, runFile), append(b, '\n'))
}

// writeFileAtomic writes a 0600 file through a temporary file, fsync and
// rename.
func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// agent is the in-memory side of one Agent. mu is held for every operation
// on the Agent in this driver; the Agent directory's flock is taken inside
// it, for operations of other driver instances.
type agent struct {
	ref compute.AgentRef
	dir string

	mu sync.Mutex
	// proc is the gateway process this driver watches (started or adopted);
	// nil when none. It may have exited while a restart is pending.
	proc *proc
	// env is the secret environment of the running revision, in memory only.
	env map[string]string
	// backoff is the delay before the next restart.
	backoff time.Duration
	// verified is the process (pid:start) once found ready: listening on
	// the port itself, its model credential not rejected. Neither is asked
	// again.
	verified string
	// harness is the app-server of a dedicated revision; appToken its
	// per-startup token (in memory, and in the gateway's environment).
	harness  *proc
	appToken string
	// held is the held readiness of the revision heldRev, whose harness
	// failed its login or model probe: asked again, the answer stays.
	held    *compute.Readiness
	heldRev string
}

// reset forgets everything about a deleted Agent.
func (a *agent) reset() {
	a.proc, a.env, a.backoff, a.verified = nil, nil, 0, ""
	a.harness, a.appToken, a.held, a.heldRev = nil, "", nil, ""
}

// agentFor returns the in-memory Agent, created on first use.
func (d *Driver) agentFor(ref compute.AgentRef) *agent {
	d.mu.Lock()
	defer d.mu.Unlock()
	key := ref.NamespaceID + "/" + ref.AgentID
	a := d.agents[key]
	if a == nil {
		a = &agent{ref: ref, dir: d.AgentDir(ref)}
		d.agents[key] = a
	}
	return a
}

// withAgent runs fn with the Agent locked (in this driver and on disk) and
// its run.json read and reconciled with the processes that really run
// (observe). With create the Agent directory is made; without it an Agent
// that has no directory gets fn(a, nil). fn writes run.json itself.
func (d *Driver) withAgent(ref compute.AgentRef, create bool, fn func(a *agent, st *runState) error) error {
	if d.isClosed() {
		return errClosed
	}
	a := d.agentFor(ref)
	a.mu.Lock()
	defer a.mu.Unlock()
	unlock, ok, err := lockDir(a.dir, create)
	if err != nil {
		return err
	}
	if !ok {
		if a.proc != nil {
			// Deleted by another driver instance, which stopped the process.
			a.reset()
		}
		return fn(a, nil)
	}
	defer unlock()
	st, err := readRun(a.dir)
	if err != nil {
		return err
	}
	if err := d.observe(a, &st); err != nil {
		return err
	}
	return fn(a, &st)
}

// lockDir takes the flock of an Agent directory. Without create, a missing
// directory reports false. A directory removed (by DeleteAgent) while this
// call waited for the lock is noticed and, with create, made again.
func lockDir(dir string, create bool) (unlock func(), ok bool, err error) {
	path := filepath.Join(dir, lockFile)
	for {
		if create {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, false, fmt.Errorf("create agent directory: %w", err)
			}
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			if !create && errors.Is(err, os.ErrNotExist) {
				return nil, false, nil
			}
			return nil, false, fmt.Errorf("open agent lock: %w", err)
		}
		if err := flock(f); err != nil {
			f.Close()
			return nil, false, fmt.Errorf("lock agent directory: %w", err)
		}
		var held, now syscall.Stat_t
		if syscall.Fstat(int(f.Fd()), &held) == nil && syscall.Stat(path, &now) == nil && held.Dev == now.Dev && held.Ino == now.Ino {
			return func() { f.Close() }, true, nil
		}
		f.Close() // the file was removed while waiting: start again
	}
}

// flock takes an exclusive flock on f, waiting as long as it takes.
func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// ensureToken returns the Agent's gateway token, making it on first use.
func ensureToken(dir string) (string, error) {
	path := filepath.Join(dir, tokenFile)
	b, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read gateway token: %w", err)
	}
	var r [32]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(r[:])
	if err := writeFileAtomic(path, []byte(tok+"\n")); err != nil {
		return "", err
	}
	return tok, nil
}

// readToken returns the Agent's gateway token, or "" when it has none.
func readToken(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, tokenFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
