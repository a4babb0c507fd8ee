package local_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/occ"
)

// fakeGateway is the fake gateway binary and fakeCodex the fake Codex
// CLI, built once by TestMain.
var fakeGateway, fakeCodex string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "occ-local-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Gateways run as users of their own when the tests run as root: the
	// binary is theirs to run.
	if err := os.Chmod(dir, 0o755); err != nil {
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
	fakeCodex = filepath.Join(dir, "fakecodex")
	out, err = exec.Command("go", "build", "-o", fakeCodex, gatewaytest.CodexBinaryPackage).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", gatewaytest.CodexBinaryPackage, err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// waitFor bounds every wait of these tests.
const waitFor = 30 * time.Second

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

// testUIDs are the gateway users of the tests' drivers when they run as
// root.
var testUIDs = local.UIDRange{First: 1900000000, Last: 1900099999}

// open returns a driver running the fake gateway under root ("" for a new
// temporary root); it is closed when the test ends.
func open(t *testing.T, root string, tune ...func(*local.Options)) (*local.Driver, *events) {
	t.Helper()
	if root == "" {
		root = gatewaytest.ReachableDir(t)
	}
	ev := &events{}
	o := local.Options{Root: root, Command: local.BinaryCommand(fakeGateway), UIDRange: testUIDs, Logger: slog.New(ev)}
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
