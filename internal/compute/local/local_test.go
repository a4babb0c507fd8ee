package local_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/occ"
)

// fakeGateway is the fake gateway binary, built once by TestMain.
var fakeGateway string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "occ-local-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeGateway = filepath.Join(dir, "fakegateway")
	out, err := exec.Command("go", "build", "-o", fakeGateway, gatewaytest.BinaryPackage).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", gatewaytest.BinaryPackage, err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// waitFor bounds every wait of these tests.
const waitFor = 30 * time.Second

// observer looks at a local driver's Agents from outside: processes through
// /proc (a gateway is a process whose environment names the Agent's state
// directory), files on disk.
type observer struct{ d *local.Driver }

func (o observer) Workload(t *testing.T, ag compute.AgentRef) (string, bool) {
	t.Helper()
	pids := gatewayPIDs(o.d, ag)
	switch len(pids) {
	case 0:
		return "", false
	case 1:
		return workloadID(t, pids[0]), true
	}
	t.Fatalf("Agent %s has %d gateway processes: %v", ag.AgentID, len(pids), pids)
	return "", false
}

func (o observer) WorkspaceFile(t *testing.T, ag compute.AgentRef, name string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(o.d.AgentDir(ag), "workspace", name))
	return string(b), err == nil
}

func (o observer) AgentExists(t *testing.T, ag compute.AgentRef) bool {
	_, err := os.Stat(o.d.AgentDir(ag))
	return err == nil
}

func (o observer) NamespaceExists(t *testing.T, id string) bool {
	_, err := os.Stat(o.d.NamespaceDir(id))
	return err == nil
}

// gatewayPIDs lists the live processes of the Agent's gateway.
func gatewayPIDs(d *local.Driver, ag compute.AgentRef) []int {
	return local.ProcessesWithEnv("OPENCLAW_STATE_DIR=" + filepath.Join(d.AgentDir(ag), "state"))
}

// workloadID is "pid:starttime" of a process.
func workloadID(t *testing.T, pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return strconv.Itoa(pid)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return strconv.Itoa(pid) + ":" + f[19]
}

// events records the driver's log messages.
type events struct {
	mu   sync.Mutex
	msgs []string
	ins  []string
}

func (e *events) Enabled(context.Context, slog.Level) bool { return true }
func (e *events) Handle(_ context.Context, r slog.Record) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.msgs = append(e.msgs, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "in" {
			e.ins = append(e.ins, a.Value.Duration().String())
		}
		return true
	})
	return nil
}
func (e *events) WithAttrs([]slog.Attr) slog.Handler { return e }
func (e *events) WithGroup(string) slog.Handler      { return e }

func (e *events) has(msg string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Contains(e.msgs, msg)
}

func (e *events) delays() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.ins)
}

// open returns a driver running the fake gateway under root ("" for a new
// temporary root); it is closed when the test ends.
func open(t *testing.T, root string, tune ...func(*local.Options)) (*local.Driver, *events) {
	t.Helper()
	if root == "" {
		root = t.TempDir()
	}
	ev := &events{}
	o := local.Options{Root: root, Command: local.BinaryCommand(fakeGateway), Logger: slog.New(ev)}
	for _, f := range tune {
		f(&o)
	}
	d, err := local.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Stop what the test left running (as a fresh driver would), then
		// close.
		_ = d.Adopt(context.Background())
		entries, _ := filepath.Glob(filepath.Join(root, "namespaces", "*"))
		for _, ns := range entries {
			_, _ = d.DeleteNamespace(context.Background(), compute.NamespaceRef{ID: filepath.Base(ns)})
		}
		d.Close()
	})
	return d, ev
}

// newAgent makes a Namespace and an Agent reference.
func newAgent(t *testing.T, d *local.Driver) compute.AgentRef {
	t.Helper()
	ns := compute.NamespaceRef{ID: occ.NewID(occ.PrefixNamespace), Name: "test"}
	if _, err := d.EnsureNamespace(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return compute.AgentRef{NamespaceID: ns.ID, AgentID: occ.NewID(occ.PrefixAgent)}
}

func newSpec(ag compute.AgentRef, n int64) compute.RevisionSpec {
	return compute.RevisionSpec{
		RevisionRef:   compute.RevisionRef{AgentRef: ag, RevisionID: occ.NewID(occ.PrefixRevision)},
		Number:        n,
		ExecutionMode: "embedded",
		Document:      map[string]any{},
	}
}

// prepareUntil calls PrepareRevision until done accepts the result.
func prepareUntil(t *testing.T, d *local.Driver, spec compute.RevisionSpec, what string, done func(compute.Readiness) bool) compute.Readiness {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	var r compute.Readiness
	var err error
	for time.Now().Before(deadline) {
		r, err = d.PrepareRevision(context.Background(), spec)
		if err == nil && done(r) {
			return r
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("PrepareRevision: not %s within %v: last %+v, %v", what, waitFor, r, err)
	return r
}

// tryReady is ready for other goroutines than the test's.
func tryReady(d *local.Driver, spec compute.RevisionSpec) error {
	deadline := time.Now().Add(waitFor)
	for {
		r, err := d.PrepareRevision(context.Background(), spec)
		if err == nil && r.Ready {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready within %v: last %+v, %v", waitFor, r, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func ready(t *testing.T, d *local.Driver, spec compute.RevisionSpec) compute.Readiness {
	t.Helper()
	return prepareUntil(t, d, spec, "ready", func(r compute.Readiness) bool { return r.Ready })
}

// eventually waits for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not %s within %v", what, waitFor)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func onlyPID(t *testing.T, d *local.Driver, ag compute.AgentRef) int {
	t.Helper()
	pids := gatewayPIDs(d, ag)
	if len(pids) != 1 {
		t.Fatalf("Agent has gateway processes %v; want exactly one", pids)
	}
	return pids[0]
}

func environ(t *testing.T, pid int) map[string]string {
	t.Helper()
	env, err := local.ReadEnviron(pid)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func canary(t *testing.T) string {
	var b [12]byte
	rand.Read(b[:])
	return "canary-" + hex.EncodeToString(b[:])
}

func TestConformance(t *testing.T) {
	d, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	computetest.Run(t, d, observer{d})
}

func TestRevisionConformance(t *testing.T) {
	d, _ := open(t, "")
	computetest.RunRevisions(t, d, observer{d}, computetest.RevisionOptions{ReadyTimeout: waitFor})
}

func TestNamespacesOnlyDriverRefusesRevisions(t *testing.T) {
	d, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.PrepareRevision(context.Background(), newSpec(newAgent(t, d), 1))
	if compute.PermanentCode(err) != "RUNTIME_NOT_CONFIGURED" {
		t.Fatalf("PrepareRevision without a command = %v; want RUNTIME_NOT_CONFIGURED", err)
	}
}

func TestInvalidIDsArePermanent(t *testing.T) {
	d, _ := open(t, "")
	ag := newAgent(t, d)
	bad := newSpec(ag, 1)
	bad.AgentID = "../../etc"
	if _, err := d.PrepareRevision(context.Background(), bad); compute.PermanentCode(err) != "INVALID_AGENT_ID" {
		t.Fatalf("PrepareRevision with a bad Agent ID = %v", err)
	}
	bad = newSpec(ag, 1)
	bad.RevisionID = "rev_x"
	if _, err := d.PrepareRevision(context.Background(), bad); compute.PermanentCode(err) != "INVALID_REVISION_ID" {
		t.Fatalf("PrepareRevision with a bad revision ID = %v", err)
	}
	bad = newSpec(ag, 1)
	bad.InitialFiles = map[string]string{"../x": "y"}
	if _, err := d.PrepareRevision(context.Background(), bad); compute.PermanentCode(err) != "INVALID_INITIAL_FILE" {
		t.Fatalf("PrepareRevision with a bad initial file name = %v", err)
	}
	if _, err := os.Stat(d.AgentDir(ag)); err == nil {
		t.Fatal("a refused PrepareRevision made the Agent directory")
	}
}

func TestLayoutPortAndToken(t *testing.T) {
	d, _ := open(t, "")
	ag1, ag2 := newAgent(t, d), newAgent(t, d)
	spec1 := newSpec(ag1, 1)
	spec1.Document = map[string]any{"gateway": map[string]any{"port": 1, "auth": map[string]any{"mode": "none"}}, "ui": map[string]any{"seamColor": "#123456"}}
	ready(t, d, spec1)
	ready(t, d, newSpec(ag2, 1))

	dir := d.AgentDir(ag1)
	for _, name := range []string{"openclaw.json", "run.json", "token", "state", "workspace", "home", "gateway.log", "console.log"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("agent directory lacks %s: %v", name, err)
		}
	}
	ep1, ok1 := d.GatewayEndpoint(context.Background(), ag1)
	ep2, ok2 := d.GatewayEndpoint(context.Background(), ag2)
	if !ok1 || !ok2 {
		t.Fatal("no endpoints")
	}
	port := func(ep compute.Endpoint) int {
		p, err := strconv.Atoi(strings.TrimPrefix(ep.URL, "ws://127.0.0.1:"))
		if err != nil {
			t.Fatalf("endpoint URL %q", ep.URL)
		}
		return p
	}
	p1, p2 := port(ep1), port(ep2)
	if d := p1 - p2; d < local.PortSpacing && d > -local.PortSpacing {
		t.Fatalf("ports %d and %d are less than %d apart", p1, p2, local.PortSpacing)
	}
	if ep1.Token == ep2.Token {
		t.Fatal("two Agents share a token")
	}

	cfg, err := os.ReadFile(filepath.Join(dir, "openclaw.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg), ep1.Token) {
		t.Fatal("openclaw.json holds the gateway token")
	}
	var doc struct {
		Gateway struct {
			Port int `json:"port"`
			Bind string
			Auth map[string]any
		}
		UI map[string]any `json:"ui"`
	}
	if err := json.Unmarshal(cfg, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Gateway.Port != p1 || doc.Gateway.Bind != "loopback" || doc.Gateway.Auth["mode"] != "token" || doc.UI["seamColor"] != "#123456" {
		t.Fatalf("openclaw.json = %s", cfg)
	}
	for _, name := range []string{"token", "openclaw.json", "run.json"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s mode = %v, %v; want 0600", name, fi.Mode(), err)
		}
	}

	// The port and the token stay across a stop and a new revision.
	if err := d.StopAgent(context.Background(), ag1); err != nil {
		t.Fatal(err)
	}
	ready(t, d, newSpec(ag1, 2))
	ep, ok := d.GatewayEndpoint(context.Background(), ag1)
	if !ok || ep.URL != ep1.URL || ep.Token != ep1.Token || ep.Password != "" {
		t.Fatalf("endpoint after restart = %+v, %v; want the URL and token of %+v", ep, ok, ep1)
	}
}

func TestStartingThenReady(t *testing.T) {
	d, _ := open(t, "")
	ag := newAgent(t, d)
	spec := newSpec(ag, 1)
	spec.Env = map[string]string{"FAKEGATEWAY_LISTEN_DELAY": "1s", "FAKEGATEWAY_STARTUP_DELAY": "2s"}
	r, err := d.PrepareRevision(context.Background(), spec)
	if err != nil || r.Ready || r.PendingReason != local.PendingStarting || r.RuntimeFailure != nil {
		t.Fatalf("first PrepareRevision = %+v, %v; want pending %s", r, err, local.PendingStarting)
	}
	pid := onlyPID(t, d, ag)
	ready(t, d, spec)
	if got := onlyPID(t, d, ag); got != pid {
		t.Fatalf("the gateway was replaced while starting: %d, then %d", pid, got)
	}
}

func TestInitialFilesAppliedOnce(t *testing.T) {
	root := t.TempDir()
	d1, _ := open(t, root)
	ag := newAgent(t, d1)
	spec := newSpec(ag, 1)
	spec.InitialFiles = map[string]string{"USER.md": "initial\n", "SOUL.md": "soul\n"}
	ready(t, d1, spec)
	path := filepath.Join(d1.AgentDir(ag), "workspace", "USER.md")
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "initial\n" {
		t.Fatalf("USER.md = %q, %v", b, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("USER.md mode %v; want 0600", fi.Mode())
	}
	if err := os.WriteFile(path, []byte("edited\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// A second revision in the same driver, then a new driver (occ
	// restarted) with the Agent stopped: the files are never written again.
	spec2 := newSpec(ag, 2)
	spec2.InitialFiles = map[string]string{"USER.md": "initial again\n"}
	ready(t, d1, spec2)
	if err := d1.StopAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	d1.Close()
	d2, _ := open(t, root)
	spec3 := newSpec(ag, 3)
	spec3.InitialFiles = spec2.InitialFiles
	ready(t, d2, spec3)
	if b, _ := os.ReadFile(path); string(b) != "edited\n" {
		t.Fatalf("USER.md after later starts = %q; want the edit kept", b)
	}
	if b, _ := os.ReadFile(filepath.Join(d2.AgentDir(ag), "workspace", "SOUL.md")); string(b) != "soul\n" {
		t.Fatalf("SOUL.md = %q", b)
	}
}

func TestSecretEnvReachesProcessNeverDisk(t *testing.T) {
	d, _ := open(t, "")
	ag := newAgent(t, d)
	secret := canary(t)
	spec := newSpec(ag, 1)
	spec.Env = map[string]string{"OCC_TEST_SECRET": secret, "HOME": "/override", "OPENCLAW_GATEWAY_TOKEN": "override"}
	ready(t, d, spec)

	pid := onlyPID(t, d, ag)
	env := environ(t, pid)
	dir := d.AgentDir(ag)
	ep, _ := d.GatewayEndpoint(context.Background(), ag)
	want := map[string]string{
		"OCC_TEST_SECRET":        secret,
		"HOME":                   filepath.Join(dir, "home"),
		"OPENCLAW_CONFIG_PATH":   filepath.Join(dir, "openclaw.json"),
		"OPENCLAW_STATE_DIR":     filepath.Join(dir, "state"),
		"OPENCLAW_GATEWAY_TOKEN": ep.Token,
		"OPENCLAW_NO_RESPAWN":    "1",
		"OPENCLAW_SKIP_CHANNELS": "1",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("gateway env %s = %q; want %q", k, env[k], v)
		}
	}
	for k := range env {
		if k != "PATH" && k != "OCC_TEST_SECRET" && !strings.HasPrefix(k, "OPENCLAW_") && k != "HOME" {
			t.Errorf("gateway env has %s, inherited or unexpected", k)
		}
	}

	// Stop, start again, and look at every byte under the root.
	if err := d.StopAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	ready(t, d, spec)
	err := filepath.WalkDir(d.Root(), func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), secret) {
			t.Errorf("%s holds the secret", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCrashRestartsWithBackoff(t *testing.T) {
	d, ev := open(t, "")
	ag := newAgent(t, d)
	secret := canary(t)
	spec := newSpec(ag, 1)
	spec.Env = map[string]string{"FAKEGATEWAY_CRASH_AFTER": "300ms", "OCC_TEST_SECRET": secret}
	if _, err := d.PrepareRevision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}

	// While the gateway is down, PrepareRevision reports the exit.
	r := prepareUntil(t, d, spec, "a runtime failure", func(r compute.Readiness) bool { return r.RuntimeFailure != nil })
	if f := r.RuntimeFailure; r.Ready || f.Component != "gateway" || f.Check != "process" || f.Code != local.CodeStartupFailed || f.CheckedAt.IsZero() {
		t.Fatalf("readiness of a crashed gateway = %+v %+v", r, f)
	}

	// It is restarted again and again, never two at once, with the secret.
	seen := map[string]bool{}
	eventually(t, "restarted three times", func() bool {
		if w, ok := (observer{d}).Workload(t, ag); ok && !seen[w] {
			seen[w] = true
			pid, _ := strconv.Atoi(strings.Split(w, ":")[0])
			if env, err := local.ReadEnviron(pid); err == nil && len(env) > 0 && !slices.Contains(env, "OCC_TEST_SECRET="+secret) {
				t.Fatalf("restarted gateway lacks the secret env")
			}
		}
		return len(seen) >= 3
	})
	if got := ev.delays(); len(got) < 2 || got[0] != "1s" || got[1] != "2s" {
		t.Fatalf("restart delays %v; want 1s, 2s, …", got)
	}

	if err := d.StopAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	if pids := gatewayPIDs(d, ag); len(pids) != 0 {
		t.Fatalf("gateway processes %v after StopAgent", pids)
	}
}

func TestStartupFailureIsReported(t *testing.T) {
	d, _ := open(t, "")
	ag := newAgent(t, d)
	spec := newSpec(ag, 1)
	spec.Document = map[string]any{"bogusKey": true} // the fake's invalid config: exit 78
	r := prepareUntil(t, d, spec, "a runtime failure", func(r compute.Readiness) bool { return r.RuntimeFailure != nil })
	if r.RuntimeFailure.Code != local.CodeStartupFailed {
		t.Fatalf("runtime failure = %+v", r.RuntimeFailure)
	}
	console, _ := os.ReadFile(filepath.Join(d.AgentDir(ag), "console.log"))
	if !strings.Contains(string(console), "Invalid config") {
		t.Fatalf("console.log = %q; want the gateway's start failure", console)
	}
	dg, err := d.Diagnose(context.Background(), spec.RevisionRef)
	if err != nil {
		t.Fatal(err)
	}
	if c := dg.Checks[0]; c.Check != local.CheckProcess || c.Status != "failed" || c.Code != local.CodeProcessExited {
		t.Fatalf("process check of an exited gateway = %+v", c)
	}

	// A good revision replaces the failing one.
	ready(t, d, newSpec(ag, 2))
}

func TestReadoptionByNewDriver(t *testing.T) {
	root := t.TempDir()
	d1, _ := open(t, root)
	ag := newAgent(t, d1)
	secret := canary(t)
	spec := newSpec(ag, 1)
	spec.Env = map[string]string{"OCC_TEST_SECRET": secret}
	ready(t, d1, spec)
	if err := d1.ActivateRevision(context.Background(), spec.RevisionRef); err != nil {
		t.Fatal(err)
	}
	pid := onlyPID(t, d1, ag)
	w1 := workloadID(t, pid)
	ep1, _ := d1.GatewayEndpoint(context.Background(), ag)
	d1.Close() // occ stops supervising; the gateway keeps running

	// A new driver on the same root: the gateway is re-adopted, not
	// duplicated, whatever it is asked first.
	d2, _ := open(t, root)
	if err := d2.Adopt(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ep, ok := d2.GatewayEndpoint(context.Background(), ag); !ok || ep != ep1 {
		t.Fatalf("endpoint after re-adoption = %+v, %v; want %+v", ep, ok, ep1)
	}
	ready(t, d2, spec)
	if w := workloadID(t, onlyPID(t, d2, ag)); w != w1 {
		t.Fatalf("PrepareRevision after re-adoption replaced the gateway: %s, then %s", w1, w)
	}
	if err := d2.ActivateRevision(context.Background(), spec.RevisionRef); err != nil {
		t.Fatal(err)
	}

	// The adopted gateway dies: the new driver restarts it, with the secret
	// environment it read back from the adopted process.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var next int
	eventually(t, "restarted", func() bool {
		pids := gatewayPIDs(d2, ag)
		if len(pids) > 1 {
			t.Fatalf("two gateway processes %v", pids)
		}
		if len(pids) == 1 && workloadID(t, pids[0]) != w1 {
			next = pids[0]
			return true
		}
		return false
	})
	if env := environ(t, next); env["OCC_TEST_SECRET"] != secret {
		t.Fatal("the restarted gateway lacks the secret environment of the adopted one")
	}
	ready(t, d2, spec)

	// A third driver, stopping it: an adopted process is stopped too.
	d3, _ := open(t, root)
	if err := d3.StopAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	if pids := gatewayPIDs(d3, ag); len(pids) != 0 {
		t.Fatalf("gateway processes %v after StopAgent of a new driver", pids)
	}
	// The driver that supervised it before does not bring it back.
	if ep, ok := d2.GatewayEndpoint(context.Background(), ag); ok {
		t.Fatalf("the old driver still reports an endpoint %+v", ep)
	}
}

func TestInterruptedStopIsFinished(t *testing.T) {
	root := t.TempDir()
	d1, _ := open(t, root)
	ag := newAgent(t, d1)
	ready(t, d1, newSpec(ag, 1))
	d1.Close()
	// As if occ died after recording the stop and before signalling.
	path := filepath.Join(d1.AgentDir(ag), "run.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	st["running"] = false
	b, _ = json.Marshal(st)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	d2, _ := open(t, root)
	if err := d2.Adopt(context.Background()); err != nil {
		t.Fatal(err)
	}
	if pids := gatewayPIDs(d2, ag); len(pids) != 0 {
		t.Fatalf("gateway processes %v after an interrupted stop was found", pids)
	}
}

func TestInterruptedStartOrphanIsKilled(t *testing.T) {
	root := t.TempDir()
	d1, _ := open(t, root)
	ag := newAgent(t, d1)
	ready(t, d1, newSpec(ag, 1))
	pid := onlyPID(t, d1, ag)
	d1.Close()
	// As if occ died after starting the process and before recording it.
	path := filepath.Join(d1.AgentDir(ag), "run.json")
	b, _ := os.ReadFile(path)
	var st map[string]any
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	delete(st, "pid")
	delete(st, "startTime")
	st["launching"] = true
	b, _ = json.Marshal(st)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	d2, _ := open(t, root)
	spec := newSpec(ag, 2)
	ready(t, d2, spec)
	pids := gatewayPIDs(d2, ag)
	if len(pids) != 1 || pids[0] == pid {
		t.Fatalf("gateway processes %v (orphan %d); want one new process", pids, pid)
	}
}

func TestStopSendsSIGKILLAfterTimeout(t *testing.T) {
	// The fake gateway has no switch to ignore SIGTERM; a shell that ignores
	// it (SIG_IGN survives exec) stands in for a gateway that hangs.
	d, ev := open(t, "", func(o *local.Options) {
		o.Command = func(int) ([]string, error) {
			return []string{"/bin/sh", "-c", "trap '' TERM; exec sleep 600"}, nil
		}
		o.StopTimeout = 200 * time.Millisecond
	})
	ag := newAgent(t, d)
	r, err := d.PrepareRevision(context.Background(), newSpec(ag, 1))
	if err != nil || r.Ready {
		t.Fatalf("PrepareRevision of a gateway that never answers = %+v, %v", r, err)
	}
	var pid int
	eventually(t, "running", func() bool {
		pids := gatewayPIDs(d, ag)
		if len(pids) == 1 {
			if s, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pids[0])); strings.HasPrefix(string(s), "sleep") {
				pid = pids[0]
				return true
			}
		}
		return false
	})
	if err := d.StopAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	if !ev.has("gateway ignored SIGTERM; sending SIGKILL") {
		t.Fatal("no SIGKILL was needed")
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
		t.Fatalf("process %d still exists after StopAgent", pid)
	}
}

// TestModelProbeHeld: the startup model probe's failures are held
// (reference/flows.md §6, §13.4): a rejected credential, no answer within
// ModelProbeTimeout or a "timeout" status, and any other failed status with
// that status as the cause; a working credential is then ready.
func TestModelProbeHeld(t *testing.T) {
	d, _ := open(t, "", func(o *local.Options) { o.ModelProbeTimeout = 2 * time.Second })
	model := map[string]any{
		"models": map[string]any{"providers": map[string]any{"fakeprov": map[string]any{
			"baseUrl": "http://127.0.0.1:9/v1", "apiKey": "${FAKEPROV_API_KEY}", "api": "openai-completions",
			"models": []any{map[string]any{"id": "m1", "name": "M1"}}}}},
		"agents": map[string]any{"defaults": map[string]any{"model": map[string]any{"primary": "fakeprov/m1"}}},
	}
	ag := newAgent(t, d)
	n := int64(0)
	for _, c := range []struct {
		name  string
		env   map[string]string
		check string
		code  string
		cause *compute.FailureCause
	}{
		{"rejected", map[string]string{"FAKEGATEWAY_MODEL_AUTH": "rejected"}, "model-credential", local.CodeAuthenticationFailed, nil},
		{"no answer in time", map[string]string{"FAKEGATEWAY_MODEL_PROBE_DELAY": "30s"}, "model-probe", compute.HeldModelProbeTimeout, nil},
		{"timeout status", map[string]string{"FAKEGATEWAY_MODEL_PROBE": "timeout"}, "model-probe", compute.HeldModelProbeTimeout, nil},
		{"rate limited", map[string]string{"FAKEGATEWAY_MODEL_PROBE": "rate_limit"}, "model-probe", compute.HeldModelProbeFailed,
			&compute.FailureCause{Kind: "PROBE_STATUS", Detail: "rate_limit"}},
		{"billing", map[string]string{"FAKEGATEWAY_MODEL_PROBE": "billing"}, "model-probe", compute.HeldModelProbeFailed,
			&compute.FailureCause{Kind: "PROBE_STATUS", Detail: "billing"}},
	} {
		n++
		spec := newSpec(ag, n)
		spec.Document = model
		spec.Env = map[string]string{"FAKEPROV_API_KEY": "sk-" + c.name}
		maps.Copy(spec.Env, c.env)
		r := prepareUntil(t, d, spec, c.name, func(r compute.Readiness) bool { return r.Held })
		rf := r.RuntimeFailure
		if r.Ready || rf == nil || rf.Component != "gateway" || rf.Check != c.check || rf.Code != c.code || rf.CheckedAt.IsZero() ||
			!reflect.DeepEqual(rf.Cause, c.cause) {
			t.Fatalf("%s: readiness = %+v, failure %+v; want held %s/%s cause %+v", c.name, r, rf, c.check, c.code, c.cause)
		}
	}

	n++
	ok := newSpec(ag, n)
	ok.Document = model
	ok.Env = map[string]string{"FAKEPROV_API_KEY": "sk-good", "FAKEGATEWAY_MODEL_AUTH": "ok"}
	ready(t, d, ok)
}

func TestPluginWarnings(t *testing.T) {
	d, _ := open(t, "")
	ag := newAgent(t, d)
	spec := newSpec(ag, 1)
	spec.Env = map[string]string{"FAKEGATEWAY_PLUGIN_WARNINGS": "beta:auth_required,acme:install_failed"}
	r := ready(t, d, spec)
	want := []compute.Warning{{Code: "PLUGIN_INSTALL_FAILED", PluginID: "acme"}, {Code: "PLUGIN_AUTH_REQUIRED", PluginID: "beta"}}
	if !slices.Equal(r.Warnings, want) {
		t.Fatalf("warnings = %+v; want %+v", r.Warnings, want)
	}
}

func TestDiagnoseSlack(t *testing.T) {
	d, _ := open(t, "")
	slack := map[string]any{"channels": map[string]any{"slack": map[string]any{
		"enabled": true, "mode": "socket", "botToken": "${SLACK_BOT_TOKEN}", "appToken": "${SLACK_APP_TOKEN}"}}}
	env := func(mode string) map[string]string {
		return map[string]string{"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1", "FAKEGATEWAY_SLACK": mode}
	}
	status := func(checks []compute.Check) map[string]string {
		m := map[string]string{}
		for _, c := range checks {
			m[c.Component+"/"+c.Check] = c.Status + " " + c.Code
		}
		return m
	}

	ag := newAgent(t, d)
	good := newSpec(ag, 1)
	good.Document, good.Env = slack, env("ok")
	ready(t, d, good)
	if env := environ(t, onlyPID(t, d, ag)); env["OPENCLAW_SKIP_CHANNELS"] != "" {
		t.Fatal("channels skipped although Slack is configured")
	}
	checks, err := diagnose(d, good.RevisionRef)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range status(checks) {
		if v != "succeeded OK" {
			t.Errorf("check %s = %s; want succeeded", k, v)
		}
	}
	if len(checks) != 7 {
		t.Fatalf("%d checks: %+v", len(checks), checks)
	}

	bad := newSpec(ag, 2)
	bad.Document, bad.Env = slack, env("invalid_auth")
	r := prepareUntil(t, d, bad, "pending on Slack", func(r compute.Readiness) bool { return r.PendingReason == local.PendingUnavailable })
	if r.Ready || r.RuntimeFailure != nil {
		t.Fatalf("readiness = %+v", r)
	}
	checks, err = diagnose(d, bad.RevisionRef)
	if err != nil {
		t.Fatal(err)
	}
	got := status(checks)
	for k, v := range map[string]string{
		"gateway/process":      "succeeded OK",
		"gateway/healthz":      "succeeded OK",
		"gateway/readyz":       "failed NOT_READY",
		"slack/configuration":  "succeeded OK",
		"slack/authentication": "failed SLACK_AUTHENTICATION_FAILED",
		"slack/connectivity":   "failed SLACK_DISCONNECTED",
	} {
		if got[k] != v {
			t.Errorf("check %s = %q; want %q", k, got[k], v)
		}
	}
	// The superseded revision has no gateway: unknown.
	checks, err = diagnose(d, good.RevisionRef)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if c.Status != "unknown" {
			t.Fatalf("check of a superseded revision = %+v", c)
		}
	}
}

func TestStopLeavesNoStrayProcess(t *testing.T) {
	// A gateway whose child outlives it (as the real gateway's spawn broker
	// could after SIGKILL): the child inherits the environment and is
	// stopped with the Agent.
	d, _ := open(t, "", func(o *local.Options) {
		o.Command = func(port int) ([]string, error) {
			return []string{"/bin/sh", "-c", "sleep 600 & exec " + fakeGateway + " gateway run --port " + strconv.Itoa(port)}, nil
		}
	})
	ag := newAgent(t, d)
	ready(t, d, newSpec(ag, 1))
	eventually(t, "two processes", func() bool { return len(gatewayPIDs(d, ag)) == 2 })
	if err := d.StopAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	if pids := gatewayPIDs(d, ag); len(pids) != 0 {
		t.Fatalf("processes %v outlived StopAgent", pids)
	}
}

func TestConcurrentAgentsGetOwnPorts(t *testing.T) {
	d, _ := open(t, "")
	const n = 12
	ags := make([]compute.AgentRef, n)
	for i := range ags {
		ags[i] = newAgent(t, d)
	}
	errs := make(chan error, n)
	for _, ag := range ags {
		go func() { errs <- tryReady(d, newSpec(ag, 1)) }()
	}
	for range ags {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var ports []int
	for _, ag := range ags {
		ep, ok := d.GatewayEndpoint(context.Background(), ag)
		if !ok {
			t.Fatal("no endpoint")
		}
		p, _ := strconv.Atoi(strings.TrimPrefix(ep.URL, "ws://127.0.0.1:"))
		for _, q := range ports {
			if p-q < local.PortSpacing && q-p < local.PortSpacing {
				t.Fatalf("ports %d and %d are less than %d apart", p, q, local.PortSpacing)
			}
		}
		ports = append(ports, p)
		onlyPID(t, d, ag)
	}
}

func TestTwoDriversOneRootNeverTwoProcesses(t *testing.T) {
	root := t.TempDir()
	d1, _ := open(t, root)
	d2, _ := open(t, root)
	ag := newAgent(t, d1)
	spec := newSpec(ag, 1)
	stop := make(chan struct{})
	var maxSeen int
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			maxSeen = max(maxSeen, len(gatewayPIDs(d1, ag)))
			time.Sleep(5 * time.Millisecond)
		}
	}()
	drivers := []*local.Driver{d1, d2, d1, d2}
	errs := make(chan error, len(drivers))
	for _, d := range drivers {
		go func() { errs <- tryReady(d, spec) }()
	}
	for range drivers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	close(stop)
	watch.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if maxSeen != 1 {
		t.Fatalf("saw %d gateway processes at once; want 1", maxSeen)
	}
	pid := onlyPID(t, d1, ag)
	// Either driver stops it; the other does not bring it back.
	if err := d2.StopAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	if _, ok := d1.GatewayEndpoint(context.Background(), ag); ok {
		t.Fatal("the other driver still reports an endpoint")
	}
	if pids := gatewayPIDs(d1, ag); len(pids) != 0 {
		t.Fatalf("processes %v after StopAgent (was %d)", pids, pid)
	}
}

func TestRuntimeNotInstalledIsRetryable(t *testing.T) {
	d, _ := open(t, "", func(o *local.Options) { o.Command = local.InstalledRuntime(t.TempDir()) })
	ag := newAgent(t, d)
	_, err := d.PrepareRevision(context.Background(), newSpec(ag, 1))
	if err == nil || compute.PermanentCode(err) != "" || !strings.Contains(err.Error(), "occ runtime install") {
		t.Fatalf("PrepareRevision without an installed runtime = %v; want a retryable error", err)
	}
	if pids := gatewayPIDs(d, ag); len(pids) != 0 {
		t.Fatalf("processes %v", pids)
	}
}

func TestTakenPortIsReplaced(t *testing.T) {
	d, _ := open(t, "")
	ag := newAgent(t, d)
	ready(t, d, newSpec(ag, 1))
	ep1, _ := d.GatewayEndpoint(context.Background(), ag)
	if err := d.StopAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	// Someone else listens on the Agent's port meanwhile.
	l, err := net.Listen("tcp", strings.TrimPrefix(ep1.URL, "ws://"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ready(t, d, newSpec(ag, 2))
	ep2, _ := d.GatewayEndpoint(context.Background(), ag)
	if ep2.URL == ep1.URL || ep2.Token != ep1.Token {
		t.Fatalf("endpoint %+v after its port was taken (was %+v); want a new port, the same token", ep2, ep1)
	}
}

// TestPortClaimsAcrossRoots: drivers on different roots sharing a claim
// directory never give two gateways the same port, also while the gateways
// do not listen yet (a command that never opens its port); with four slots
// and four Agents every slot is used once, and a fifth Agent finds none.
// A deleted Agent's slot is free again.
func TestPortClaimsAcrossRoots(t *testing.T) {
	claims := t.TempDir()
	first := 65535 - local.PortSpacing - 3*local.PortSpacing // four slots
	neverListens := func(port int) ([]string, error) { return []string{"/bin/sh", "-c", "exec sleep 600"}, nil }
	tune := func(o *local.Options) { o.PortClaimDir, o.FirstPort, o.Command = claims, first, neverListens }
	d1, _ := open(t, "", tune)
	d2, _ := open(t, "", tune)
	type placed struct {
		d  *local.Driver
		ag compute.AgentRef
	}
	var all []placed
	for _, d := range []*local.Driver{d1, d2, d1, d2} {
		ag := newAgent(t, d)
		if r, err := d.PrepareRevision(context.Background(), newSpec(ag, 1)); err != nil || r.Ready {
			t.Fatalf("PrepareRevision = %+v, %v; want started, not ready", r, err)
		}
		all = append(all, placed{d, ag})
	}
	seen := map[string]bool{}
	for _, p := range all {
		ep, ok := p.d.GatewayEndpoint(context.Background(), p.ag)
		if !ok || seen[ep.URL] {
			t.Fatalf("endpoint %q (ok %v) given twice or missing; seen %v", ep.URL, ok, seen)
		}
		seen[ep.URL] = true
	}
	extra := newAgent(t, d1)
	if _, err := d1.PrepareRevision(context.Background(), newSpec(extra, 1)); err == nil || !strings.Contains(err.Error(), "no free loopback port") {
		t.Fatalf("a fifth Agent on four slots: %v; want no free loopback port", err)
	}
	// Deleting one of d2's Agents frees its slot for d1.
	if err := d2.DeleteAgent(context.Background(), all[1].ag); err != nil {
		t.Fatal(err)
	}
	if _, err := d1.PrepareRevision(context.Background(), newSpec(extra, 1)); err != nil {
		t.Fatalf("after a deletion: %v", err)
	}
}
