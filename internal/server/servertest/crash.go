package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/store"
)

// crashWorld is what the crash test knows across rounds.
type CrashWorld struct {
	T       *testing.T
	Bin     string
	DbURL   string
	DataDir string
	LogDir  string
	starts  int
	Env     []string        // extra environment of every start
	Created map[string]bool // IDs that got 201
	Deleted map[string]bool // IDs whose DELETE got 202
	// deleteSent: IDs a DELETE was sent for; one whose answer a kill cut
	// off may have been admitted, so it is never asked again (404 then).
	DeleteSent map[string]bool
	mu         sync.Mutex
}

// occProc is one running `occ serve` this test started.
type OccProc struct {
	T      *testing.T
	cmd    *exec.Cmd
	base   string
	Key    string
	client *http.Client
	exited chan struct{}
	Logs   string
}

// freePort returns a loopback port nothing listens on right now.
func FreePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// childEnv is the environment without any OCC_* setting of the developer's
// shell (the test chooses every setting itself), with testRates.
func ChildEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OCC_") {
			env = append(env, kv)
		}
	}
	for key, v := range TestRates {
		env = append(env, config.EnvName(key)+"="+v)
	}
	return append(env, "OCC_WORKER_POLL_INTERVAL=20ms", "OCC_WORKER_JOB_TIMEOUT=3s", "OCC_WORKER_RESCUE_AFTER=4s",
		"OCC_WORKER_STRAY_SWEEP_INTERVAL=1s")
}

// start runs `occ serve` on the data directory and waits for /readyz.
func (w *CrashWorld) Start() *OccProc {
	t := w.T
	t.Helper()
	for attempt := 0; ; attempt++ {
		w.starts++
		addr := FreePort(t)
		args := []string{"serve", "--data-dir", w.DataDir, "--listen", addr}
		if w.DbURL != "" {
			args = append(args, "--database-url", w.DbURL)
		}
		logs := filepath.Join(w.LogDir, fmt.Sprintf("occ-%02d.log", w.starts))
		lf, err := os.Create(logs)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(w.Bin, args...)
		cmd.Env = append(ChildEnv(), w.Env...)
		cmd.Stdout, cmd.Stderr = lf, lf
		if err := cmd.Start(); err != nil {
			lf.Close()
			t.Fatalf("start occ: %v", err)
		}
		p := &OccProc{T: t, cmd: cmd, base: "http://" + addr, exited: make(chan struct{}), Logs: logs,
			client: &http.Client{Timeout: 15 * time.Second}}
		go func() { _ = cmd.Wait(); lf.Close(); close(p.exited) }()
		t.Cleanup(func() { p.Kill() })
		if err := p.waitReady(30 * time.Second); err != nil {
			p.Kill()
			// Another process may have taken the port between the probe and the start.
			if attempt < 2 && strings.Contains(ReadTail(logs), "address already in use") {
				continue
			}
			t.Fatalf("occ did not become ready: %v\n%s", err, ReadTail(logs))
		}
		key, err := os.ReadFile(filepath.Join(w.DataDir, "bootstrap-admin.key"))
		if err != nil {
			t.Fatal(err)
		}
		p.Key = strings.TrimSpace(string(key))
		return p
	}
}

func (p *OccProc) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		select {
		case <-p.exited:
			return fmt.Errorf("occ exited: %v", p.cmd.ProcessState)
		default:
		}
		res, err := p.client.Get(p.base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no 200 from /readyz within %v (last: %v)", limit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill sends SIGKILL (if the process still runs) and reaps it.
func (p *OccProc) Kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
	p.client.CloseIdleConnections()
}

// stop sends SIGTERM and expects a clean exit.
func (p *OccProc) Stop() {
	p.T.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.T.Fatalf("SIGTERM: %v", err)
	}
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		p.Kill()
		p.T.Fatalf("occ did not stop within 30s of SIGTERM\n%s", ReadTail(p.Logs))
	}
	if !p.cmd.ProcessState.Success() {
		p.T.Fatalf("occ exited with %v after SIGTERM\n%s", p.cmd.ProcessState, ReadTail(p.Logs))
	}
}

// do sends one request; it returns an error instead of failing the test
// (requests race with the kill).
func (p *OccProc) do(method, path string, body any) (Resp, error) {
	return p.doHeader(method, path, body, "", "")
}

// doHeader is do with one more header (none when value is "").
func (p *OccProc) doHeader(method, path string, body any, header, value string) (Resp, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return Resp{}, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, p.base+path, rd)
	if err != nil {
		return Resp{}, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if value != "" {
		req.Header.Set(header, value)
	}
	req.Header.Set("Authorization", "Bearer "+p.Key)
	res, err := p.client.Do(req)
	if err != nil {
		return Resp{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return Resp{}, err
	}
	out := Resp{Status: res.StatusCode, Header: res.Header}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out.Body); err != nil {
			return out, fmt.Errorf("%s %s: %d, body not JSON: %q", method, path, res.StatusCode, raw)
		}
	}
	return out, nil
}

// must is do for the checks after a restart, where every request must work.
func (p *OccProc) Must(method, path string, body any) Resp {
	p.T.Helper()
	r, err := p.do(method, path, body)
	if err != nil {
		p.T.Fatalf("%s %s: %v\n%s", method, path, err, ReadTail(p.Logs))
	}
	return r
}

// burst fires concurrent creates and deletes and SIGKILLs p once a random
// number of responses has arrived. It returns a summary.
func (w *CrashWorld) Burst(p *OccProc, round int) string {
	const creates, workers = 24, 6
	type op struct {
		create string // name to create (then maybe delete the new ID)
		del    string // existing ID to delete
		thenDe bool
	}
	var ops []op
	for i := range creates {
		ops = append(ops, op{create: fmt.Sprintf("crash-%d-%d", round, i), thenDe: rand.IntN(2) == 0})
	}
	// Some Namespaces of earlier rounds, which are ready by now.
	var old []string
	for id := range w.Created {
		if !w.Deleted[id] && !w.DeleteSent[id] {
			old = append(old, id)
		}
	}
	slices.Sort(old)
	rand.Shuffle(len(old), func(i, j int) { old[i], old[j] = old[j], old[i] })
	for _, id := range old[:min(len(old), 4)] {
		ops = append(ops, op{del: id})
	}
	rand.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })

	total := len(ops) + creates/2 // about how many responses the burst would get
	killAt := 2 + rand.IntN(total*3/4)
	var answered atomic.Int64
	var killOnce sync.Once
	var killedAfter int64
	answer := func() {
		if answered.Add(1) == int64(killAt) {
			killOnce.Do(func() {
				time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
				killedAfter = answered.Load()
				p.Kill()
			})
		}
	}
	record := func(id string, create bool) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if create {
			w.Created[id] = true
		} else {
			w.Deleted[id] = true
		}
	}
	del := func(id string) error {
		w.mu.Lock()
		w.DeleteSent[id] = true
		w.mu.Unlock()
		r, err := p.do("DELETE", "/namespaces/"+id, nil)
		if err != nil {
			return err
		}
		answer()
		if r.Status != 202 {
			return fmt.Errorf("DELETE %s = %d %v", id, r.Status, r.Body)
		}
		record(id, false)
		return nil
	}
	work := make(chan op)
	errs := make(chan error, len(ops))
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for o := range work {
				if o.del != "" {
					if err := del(o.del); err != nil {
						errs <- err
					}
					continue
				}
				r, err := p.do("POST", "/namespaces", map[string]any{"name": o.create})
				if err != nil {
					errs <- err
					continue
				}
				answer()
				if r.Status != 201 {
					errs <- fmt.Errorf("POST %s = %d %v", o.create, r.Status, r.Body)
					continue
				}
				id, _ := r.Data()["id"].(string)
				record(id, true)
				if o.thenDe {
					if err := del(id); err != nil {
						errs <- err
					}
				}
			}
		})
	}
	for _, o := range ops {
		work <- o
	}
	close(work)
	wg.Wait()
	close(errs)
	// Ensure the process is dead even if the burst answered fewer than killAt.
	killOnce.Do(func() { killedAfter = answered.Load(); p.Kill() })
	// Failures must be transport errors from the kill; any HTTP answer other
	// than 201/202 is a server error.
	lost := 0
	for err := range errs {
		var ue *url.Error
		if errors.As(err, &ue) {
			lost++
			continue
		}
		w.T.Errorf("round %d: %v", round, err)
	}
	return fmt.Sprintf("%d ops, killed after %d answers, %d requests lost to the kill", len(ops), killedAfter, lost)
}

// settle waits until no Namespace is provisioning or deleting and River
// has no unfinished job.
func (w *CrashWorld) Settle(p *OccProc) {
	t := w.T
	t.Helper()
	wait := 30 * time.Second
	if w.DbURL != "" {
		wait = 120 * time.Second // River's rescuer runs every 30 s
	}
	deadline := time.Now().Add(wait)
	for {
		pending := map[string]string{}
		for _, ns := range p.listNamespaces() {
			if s := ns["status"].(string); s == "provisioning" || s == "deleting" {
				pending[ns["id"].(string)] = s
			}
		}
		if len(pending) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Namespaces still unsettled 30s after restart: %v\nunfinished jobs: %v\n%s",
				pending, w.UnfinishedJobs(), ReadTail(p.Logs))
		}
		time.Sleep(100 * time.Millisecond)
	}
	for {
		jobs := w.UnfinishedJobs()
		if len(jobs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("River jobs unfinished 30s after restart: %v\n%s", jobs, ReadTail(p.Logs))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// listNamespaces reads every page of GET /namespaces.
func (p *OccProc) listNamespaces() []map[string]any {
	p.T.Helper()
	var out []map[string]any
	path := "/namespaces?pageSize=1000"
	for {
		r := p.Must("GET", path, nil)
		if r.Status != 200 {
			p.T.Fatalf("GET %s = %d %v", path, r.Status, r.Body)
		}
		for _, it := range r.List() {
			out = append(out, it.(map[string]any))
		}
		m, _ := r.Body["meta"].(map[string]any)
		next, _ := m["nextPageToken"].(string)
		if next == "" {
			return out
		}
		path = "/namespaces?pageSize=1000&pageToken=" + url.QueryEscape(next)
	}
}

// unfinishedJobs lists River jobs not completed (state, attempt, args),
// read straight from the database the server uses.
func (w *CrashWorld) UnfinishedJobs() []string {
	t := w.T
	t.Helper()
	dbURL := w.DbURL
	if dbURL == "" {
		dbURL = "sqlite://" + filepath.Join(w.DataDir, "occ.db")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.DB().QueryContext(ctx,
		`SELECT id, state, attempt, CAST(args AS TEXT) FROM river_job WHERE state <> 'completed' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id int64
		var state, args string
		var attempt int
		if err := rows.Scan(&id, &state, &attempt, &args); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("job %d %s attempt %d %s", id, state, attempt, args))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// check asserts the state after a restart settled.
func (w *CrashWorld) Check(p *OccProc) {
	t := w.T
	t.Helper()
	listed := map[string]bool{}
	for _, ns := range p.listNamespaces() {
		id := ns["id"].(string)
		listed[id] = true
		if s := ns["status"]; s != "ready" {
			t.Errorf("Namespace %s (%v) is %v after restart, want ready", id, ns["name"], s)
		}
		if !dirExists(t, w.nsDir(id)) {
			t.Errorf("ready Namespace %s has no directory %s", id, w.nsDir(id))
		}
	}
	// No directory outlives its Namespace.
	entries, err := os.ReadDir(filepath.Join(w.DataDir, "compute", "namespaces"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !listed[e.Name()] {
			t.Errorf("directory %s belongs to no listed Namespace (deletion admitted: %v)", w.nsDir(e.Name()), w.Deleted[e.Name()])
		}
	}
	for _, id := range slices.Sorted(maps.Keys(w.Created)) {
		r := p.Must("GET", "/namespaces/"+id, nil)
		switch {
		case w.Deleted[id] && r.Status != 404:
			t.Errorf("Namespace %s: deletion admitted (202) but GET = %d %v", id, r.Status, r.Body)
		case r.Status == 200 && r.Data()["status"] != "ready":
			t.Errorf("Namespace %s is %v, want ready or gone", id, r.Data()["status"])
		case r.Status != 200 && r.Status != 404:
			t.Errorf("GET Namespace %s = %d %v", id, r.Status, r.Body)
		}
		gone := r.Status == 404
		if gone && listed[id] {
			t.Errorf("Namespace %s is 404 but still listed", id)
		}
		if gone && dirExists(t, w.nsDir(id)) {
			t.Errorf("deleted Namespace %s still has its directory", id)
		}
		actions := w.AuditActions(p, id)
		if actions["namespaces.create/success"] == 0 {
			t.Errorf("audit log of %s lacks namespaces.create: %v", id, actions)
		}
		if w.Deleted[id] && actions["namespaces.delete/success"] == 0 {
			t.Errorf("audit log of %s lacks namespaces.delete: %v", id, actions)
		}
		if gone && actions["namespaces.lifecycle.delete/success"] != 1 {
			t.Errorf("audit log of deleted %s: want one successful namespaces.lifecycle.delete: %v", id, actions)
		}
		if !gone && actions["namespaces.lifecycle.ensure/success"] != 1 {
			t.Errorf("audit log of ready %s: want one successful namespaces.lifecycle.ensure: %v", id, actions)
		}
	}
	if t.Failed() {
		t.Logf("server log of the last start:\n%s", ReadTail(p.Logs))
		t.FailNow()
	}
}

// auditActions counts "action/outcome" of a resource's audit events.
func (w *CrashWorld) AuditActions(p *OccProc, id string) map[string]int {
	w.T.Helper()
	r := p.Must("GET", "/audit-events?pageSize=1000&resourceId="+url.QueryEscape(id), nil)
	if r.Status != 200 {
		w.T.Fatalf("GET /audit-events?resourceId=%s = %d %v", id, r.Status, r.Body)
	}
	out := map[string]int{}
	for _, ev := range r.List() {
		e := ev.(map[string]any)
		out[fmt.Sprintf("%v/%v", e["action"], e["outcome"])]++
	}
	return out
}

func (w *CrashWorld) nsDir(id string) string {
	return filepath.Join(w.DataDir, "compute", "namespaces", id)
}

func dirExists(t *testing.T, path string) bool {
	t.Helper()
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.IsDir()
}

// readTail returns the last 8 KiB of a log file, without the access log.
func ReadTail(path string) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(log %s: %v)", path, err)
	}
	// The access log of the test's own polls would crowd out the rest.
	var kept []string
	for line := range strings.Lines(string(raw)) {
		if !strings.Contains(line, "msg=request ") {
			kept = append(kept, line)
		}
	}
	tail := strings.Join(kept, "")
	if len(tail) > 8<<10 {
		tail = tail[len(tail)-8<<10:]
	}
	return tail
}

// RepoRoot is the module's root directory: the nearest directory above
// the test's working directory that holds go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("module root (go.mod) not found above the working directory")
		}
		dir = parent
	}
}
