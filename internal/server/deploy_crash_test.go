package server_test

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestDeployCrashRestart kills occ with SIGKILL at a random moment of a
// burst of deploys, stops, deletes and workspace-file writes of a handful
// of Agents (the local
// driver running the fake gateway binary, OCC_COMPUTE_GATEWAY_COMMAND),
// starts it again on the same data directory and checks, once everything
// settled: every admitted deployment is terminal and stays so, no Agent has
// (or ever had, at any scan) two gateway processes, no process or directory
// outlives a deleted Agent, every running Agent has exactly one live
// gateway and every stopped one none, no revision changed, and a running
// Agent's SOUL.md holds its last acknowledged write (or a later one whose
// answer the kill cut off). Every other Agent is dedicated: its Codex
// harness (the fake Codex CLI, compute.harnessCommand) is a second
// workload, held to the same rules (exactly one while the Agent runs,
// none otherwise or once it is deleted).
//
// OCC_TEST_CRASH_ROUNDS raises the SQLite rounds (default 50); the
// PostgreSQL lane runs a few rounds, as each may wait for River's rescuer.
func TestDeployCrashRestart(t *testing.T) {
	// Not parallel: it runs alone in this package (see TestMain).
	rounds := 50
	if s := os.Getenv("OCC_TEST_CRASH_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("OCC_TEST_CRASH_ROUNDS=%q: want a positive number", s)
		}
		rounds = max(n, rounds)
	}
	bin := buildOCC(t)
	fake, codex := gatewaytest.BuildBinary(t), gatewaytest.BuildCodexBinary(t)
	t.Run("sqlite", func(t *testing.T) {
		l := newLocalCrashCompute(t, fake, codex)
		deployCrashLoop(t, bin, l, l.dataDir, "", rounds).last.stop()
	})
	t.Run("postgres", func(t *testing.T) {
		l := newLocalCrashCompute(t, fake, codex)
		deployCrashLoop(t, bin, l, l.dataDir, storetest.URL(t, "postgres"), 3).last.stop()
	})
}

// crashCompute is what the deploy crash test sees of the place that runs
// the gateways (the local driver's processes and directories, a
// cluster's objects and Pods).
type crashCompute interface {
	// env is occ's environment selecting and configuring the driver.
	env() []string
	// workloads maps an Agent ID to its live gateway workloads (a process,
	// a Pod not being deleted), each described in a line; a dedicated
	// Agent's harness workload is a line starting harnessLine.
	workloads() map[string][]string
	// held maps an Agent ID to everything the driver holds for it (a
	// directory, objects), each described in a line.
	held() map[string][]string
	// settleWait bounds the wait for everything to settle after a restart.
	settleWait() time.Duration
}

// deployCrash is what the deploy crash test knows across rounds.
type deployCrash struct {
	*crashWorld
	compute crashCompute
	last    *occProc // the running occ, once the rounds are over
	ns      string
	secret  string
	cfg     string
	role    string
	seq     int

	mu        sync.Mutex
	agents    map[string]bool   // created (201)
	sps       map[string]string // Agent → its service principal
	granted   map[string]bool   // the Agent's principal may operate the Secret
	dedicated map[string]bool   // created dedicated (a harness workload beside its gateway)
	deleted   map[string]bool   // DELETE answered 202
	tried     map[string]bool   // DELETE sent (its answer may be lost to the kill)
	gone      map[string]bool   // seen 404 after a restart (stays so: not asked again)
	deploys   map[string]string // revision → Agent, deploy answered 202
	revisions map[string]string // revision → its GET body, first seen
	terminal  map[string]string // revision → "status/code", first seen terminal
	files     map[string]*soul  // Agent → what its SOUL.md may hold
	souls     int               // SOUL.md reads checked
	harnesses int               // checks that found a running dedicated Agent's one harness
}

// soul is what the test wrote to an Agent's SOUL.md: one client owns each
// Agent's writes, so they are sequential.
type soul struct {
	owner int
	acked string   // the last write answered 200 ("" : none yet)
	maybe []string // writes sent after it whose outcome is unknown
}

func newDeployCrash(t *testing.T, bin string, cc crashCompute, dataDir, dbURL string) *deployCrash {
	return &deployCrash{crashWorld: &crashWorld{t: t, bin: bin, dbURL: dbURL, dataDir: dataDir, logDir: t.TempDir()},
		compute: cc, agents: map[string]bool{}, sps: map[string]string{}, granted: map[string]bool{}, dedicated: map[string]bool{}, deleted: map[string]bool{}, tried: map[string]bool{}, gone: map[string]bool{}, deploys: map[string]string{},
		revisions: map[string]string{}, terminal: map[string]string{}, files: map[string]*soul{}}
}

// deployCrashLoop runs rounds of burst, SIGKILL, restart, settle and
// checks on one data directory; dbURL "" means its SQLite file. occ is
// left running (w.last).
func deployCrashLoop(t *testing.T, bin string, cc crashCompute, dataDir, dbURL string, rounds int) *deployCrash {
	w := newDeployCrash(t, bin, cc, dataDir, dbURL)
	p := w.startOCC()
	w.setup(p)
	var total time.Duration
	for round := range rounds {
		start := time.Now()
		ops := w.burst(p, round)
		p = w.startOCC()
		settled := w.settle(p)
		w.check(p)
		d := time.Since(start)
		total += d
		t.Logf("round %d: %s; settled in %v; %d Agents created, %d deleted, %d deployments admitted; %v",
			round, ops, settled.Round(time.Millisecond), len(w.agents), len(w.deleted), len(w.deploys), d.Round(time.Millisecond))
	}
	t.Logf("%d rounds, %v per round on average; %d SOUL.md reads checked against the acknowledged writes", rounds,
		(total / time.Duration(rounds)).Round(time.Millisecond), w.souls)
	if _, ok := cc.(interface{ runsDedicated() }); ok {
		t.Logf("%d checks found a running dedicated Agent with its one gateway and one harness", w.harnesses)
		// The rounds rarely leave a dedicated Agent running when they kill
		// occ: one more kill while one surely runs.
		p = w.killRunningDedicated(p)
	}
	w.last = p
	return w
}

// killRunningDedicated deploys a dedicated Agent to succeeded, kills occ
// with SIGKILL while it runs, and checks everything after the restart:
// among the rest, that Agent still runs with exactly one gateway and one
// harness.
func (w *deployCrash) killRunningDedicated(p *occProc) *occProc {
	t := w.t
	agt := ""
	for agt == "" || !w.dedicated[agt] {
		id, err := w.newAgent(p)
		if err != nil {
			t.Fatal(err)
		}
		agt = id
	}
	base := "/namespaces/" + w.ns + "/agents/" + agt
	r := p.must("POST", base+"/deploy", nil)
	if r.Status != 202 {
		t.Fatalf("deploy dedicated Agent %s = %d %v", agt, r.Status, r.Body)
	}
	rev := r.data()["id"].(string)
	w.mu.Lock()
	w.deploys[rev] = agt
	w.mu.Unlock()
	deadline := time.Now().Add(2 * time.Minute)
	for st := ""; st != "succeeded"; {
		st, _ = p.must("GET", base+"/deployments/"+rev, nil).data()["status"].(string)
		if st == "failed" || time.Now().After(deadline) {
			t.Fatalf("dedicated deployment %s of Agent %s: %q", rev, agt, st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.kill()
	p = w.startOCC()
	w.settle(p)
	before := w.harnesses
	w.check(p)
	if w.harnesses == before {
		t.Errorf("after the kill, the running dedicated Agent %s was not found with its one gateway and one harness", agt)
	}
	return p
}

// deleteEverything deletes every Agent left, then the Namespace, and waits
// (bounded) until both are gone.
func (w *deployCrash) deleteEverything() {
	t, p := w.t, w.last
	t.Helper()
	var left []string
	for _, agt := range slices.Sorted(maps.Keys(w.agents)) {
		if !w.gone[agt] {
			left = append(left, agt)
		}
	}
	// A create whose answer was lost to a kill may have committed: every
	// Agent the Namespace lists goes too.
	if r := p.must("GET", "/namespaces/"+w.ns+"/agents?pageSize=1000", nil); r.Status == 200 {
		items, _ := r.Body["data"].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				if id, _ := m["id"].(string); id != "" && !slices.Contains(left, id) {
					left = append(left, id)
				}
			}
		}
	}
	for _, agt := range left {
		if r := p.must("DELETE", "/namespaces/"+w.ns+"/agents/"+agt, nil); r.Status != 202 && r.Status != 409 && r.Status != 404 {
			t.Fatalf("DELETE agent %s = %d %v", agt, r.Status, r.Body)
		}
	}
	gone := func(what, path string) {
		deadline := time.Now().Add(w.compute.settleWait())
		for p.must("GET", path, nil).Status != 404 {
			if time.Now().After(deadline) {
				t.Fatalf("%s not gone after %v\n%s", what, w.compute.settleWait(), readTail(p.logs))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, agt := range left {
		gone("Agent "+agt, "/namespaces/"+w.ns+"/agents/"+agt)
	}
	for _, path := range []string{"/configurations/" + w.cfg, "/secrets/" + w.secret} {
		if r := p.must("DELETE", "/namespaces/"+w.ns+path, nil); r.Status/100 != 2 {
			t.Fatalf("DELETE %s = %d %v", path, r.Status, r.Body)
		}
	}
	if r := p.must("DELETE", "/namespaces/"+w.ns, nil); r.Status != 202 {
		t.Fatalf("DELETE namespace = %d %v", r.Status, r.Body)
	}
	gone("Namespace "+w.ns, "/namespaces/"+w.ns)
}

// startOCC is crashWorld.start with the driver's environment.
func (w *deployCrash) startOCC() *occProc {
	w.env = w.compute.env()
	return w.start()
}

// setup makes a ready Namespace, a Secret, a Configuration and a role that
// lets an Agent's service principal operate the Secret.
func (w *deployCrash) setup(p *occProc) {
	t := w.t
	r := p.must("POST", "/namespaces", map[string]any{"name": "deploy-crash"})
	if r.Status != 201 {
		t.Fatalf("create namespace = %d %v", r.Status, r.Body)
	}
	w.ns = r.data()["id"].(string)
	deadline := time.Now().Add(30 * time.Second)
	for p.must("GET", "/namespaces/"+w.ns, nil).data()["status"] != "ready" {
		if time.Now().After(deadline) {
			t.Fatal("namespace not ready")
		}
		time.Sleep(20 * time.Millisecond)
	}
	mk := func(path string, body map[string]any) string {
		r := p.must("POST", "/namespaces/"+w.ns+path, body)
		if r.Status != 201 {
			t.Fatalf("POST %s = %d %v", path, r.Status, r.Body)
		}
		return r.data()["id"].(string)
	}
	w.secret = mk("/secrets", map[string]any{"name": "openai", "value": "sk-crash-canary"})
	w.cfg = mk("/configurations", map[string]any{"name": "c", "kind": "agent",
		"values": map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": "openai/gpt-5"}}}})
	w.role = mk("/iam/roles", map[string]any{"name": "operate-secrets", "permissions": []string{"secret:operate"}})
}

// newAgent creates a deployable Agent (its principal may operate the
// Secret); it returns "" when the request was lost to the kill.
func (w *deployCrash) newAgent(p *occProc) (string, error) {
	w.mu.Lock()
	w.seq++
	seq := w.seq
	w.mu.Unlock()
	name := fmt.Sprintf("bot-%d", seq)
	harness := map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "id": w.secret}}
	if h, ok := w.compute.(interface{ harnessAuth() map[string]any }); ok {
		harness = h.harnessAuth() // a driver that takes another method
	}
	body := map[string]any{"name": name, "configurationId": w.cfg, "harnessAuth": harness}
	_, runsDedicated := w.compute.(interface{ runsDedicated() })
	dedicated := runsDedicated && seq%2 == 0
	if dedicated {
		body["executionMode"] = "dedicated"
	}
	r, err := p.do("POST", "/namespaces/"+w.ns+"/agents", body)
	if err != nil {
		return "", err
	}
	if r.Status != 201 {
		return "", fmt.Errorf("create agent = %d %v", r.Status, r.Body)
	}
	id, sp := r.data()["id"].(string), r.data()["servicePrincipalId"].(string)
	w.mu.Lock()
	w.agents[id], w.sps[id], w.dedicated[id] = true, sp, dedicated
	w.mu.Unlock()
	return id, w.grant(p, id)
}

// grant binds the role to the Agent's principal.
func (w *deployCrash) grant(p *occProc, agt string) error {
	w.mu.Lock()
	sp := w.sps[agt]
	w.mu.Unlock()
	r, err := p.do("POST", "/namespaces/"+w.ns+"/iam/bindings", map[string]any{"principalId": sp, "roleId": w.role})
	if err != nil {
		return err
	}
	if r.Status != 201 {
		return fmt.Errorf("grant = %d %v", r.Status, r.Body)
	}
	w.mu.Lock()
	w.granted[agt] = true
	w.mu.Unlock()
	return nil
}

// live lists the Agents created, granted and not deleted.
func (w *deployCrash) live() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for id := range w.agents {
		if !w.deleted[id] && w.granted[id] {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// burst keeps a handful of Agents busy with deploys, stops and deletes from
// a few concurrent clients (making new Agents as old ones are deleted) and
// SIGKILLs occ at a random moment of it.
func (w *deployCrash) burst(p *occProc, round int) string {
	const clients, handful = 4, 5
	// Grants lost to the last kill.
	for _, agt := range slices.Sorted(maps.Keys(w.agents)) {
		if !w.granted[agt] && !w.deleted[agt] {
			if err := w.grant(p, agt); err != nil {
				w.t.Fatalf("round %d: %v", round, err)
			}
		}
	}
	for len(w.live()) < handful {
		if _, err := w.newAgent(p); err != nil {
			w.t.Fatalf("round %d: %v", round, err)
		}
	}
	killAfter := time.Duration(rand.IntN(500)) * time.Millisecond
	killed := make(chan struct{})
	var counts sync.Map // op → count answered
	count := func(op string) {
		v, _ := counts.LoadOrStore(op, new(int64))
		w.mu.Lock()
		*v.(*int64)++
		w.mu.Unlock()
	}
	errs := make(chan error, 1000)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for {
				select {
				case <-killed:
					return
				default:
				}
				agents := w.live()
				if len(agents) < 3 {
					if _, err := w.newAgent(p); err != nil {
						errs <- err
					} else {
						count("create")
					}
					continue
				}
				agt := agents[rand.IntN(len(agents))]
				base := "/namespaces/" + w.ns + "/agents/" + agt
				var op, method, path string
				var body any
				switch n := rand.IntN(10); {
				case n < 2 && w.ownsSoul(agt, c):
					content := w.sendSoul(agt)
					op, method, path, body = "write", "PUT", base+"/workspace/files/SOUL.md", map[string]any{"content": content}
				case n < 6:
					op, method, path = "deploy", "POST", base+"/deploy"
				case n < 8:
					op, method, path = "stop", "POST", base+"/stop"
				default:
					op, method, path = "delete", "DELETE", base
					w.mu.Lock()
					w.tried[agt] = true
					w.mu.Unlock()
				}
				r, err := p.do(method, path, body)
				if err != nil {
					errs <- err
					continue
				}
				switch {
				case op == "write" && r.Status == 200:
					w.ackSoul(agt, body.(map[string]any)["content"].(string))
				case op == "write" && (r.Status == 503 || r.Status == 409):
					// No gateway serving, or stopping or deleting: what the
					// API documents; the write stays possible (503).
					op += "-" + r.code()
				case r.Status == 202 && op == "deploy":
					w.mu.Lock()
					w.deploys[r.data()["id"].(string)] = agt
					w.mu.Unlock()
				case r.Status == 202 && op == "delete":
					w.mu.Lock()
					w.deleted[agt] = true
					w.mu.Unlock()
				case r.Status == 202:
				case r.Status == 409 && r.code() == "AGENT_DELETING", r.Status == 404 && w.wasDeleted(agt):
					// Another client deleted it meanwhile (perhaps in a
					// request whose answer the kill cut off).
					op += "-raced"
				default:
					errs <- fmt.Errorf("%s %s = %d %v", method, path, r.Status, r.Body)
					continue
				}
				count(op)
				time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond)
			}
		})
	}
	time.Sleep(killAfter)
	close(killed)
	p.kill()
	wg.Wait()
	close(errs)
	lost := 0
	for err := range errs {
		var ue *url.Error
		if errors.As(err, &ue) {
			lost++
			continue
		}
		w.t.Errorf("round %d: %v", round, err)
	}
	var parts []string
	counts.Range(func(k, v any) bool { parts = append(parts, fmt.Sprintf("%d %s", *v.(*int64), k)); return true })
	slices.Sort(parts)
	return fmt.Sprintf("killed after %v: %s answered, %d lost", killAfter, strings.Join(parts, ", "), lost)
}

// ownsSoul reports whether client c writes the Agent's SOUL.md (the
// first client to try does, from then on).
func (w *deployCrash) ownsSoul(agt string, c int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.files[agt] == nil {
		w.files[agt] = &soul{owner: c}
	}
	return w.files[agt].owner == c
}

// sendSoul returns new content for the Agent's SOUL.md, noted as possible.
func (w *deployCrash) sendSoul(agt string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	content := fmt.Sprintf("soul %d\n", w.seq)
	f := w.files[agt]
	f.maybe = append(f.maybe, content)
	return content
}

// ackSoul records an acknowledged write.
func (w *deployCrash) ackSoul(agt, content string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.files[agt].acked, w.files[agt].maybe = content, nil
}

// checkSoul reads a running Agent's SOUL.md: after an acknowledged write
// it holds that write's content or a later one's whose answer was lost.
func (w *deployCrash) checkSoul(p *occProc, agt string) {
	f := w.files[agt]
	if f == nil || f.acked == "" {
		return
	}
	path := "/namespaces/" + w.ns + "/agents/" + agt + "/workspace/files/SOUL.md"
	var r resp
	for try := 0; try < 100; try++ { // the re-adopted gateway may still be starting
		if r = p.must("GET", path, nil); r.Status != 503 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	got, _ := r.data()["content"].(string)
	if r.Status != 200 || !slices.Contains(append([]string{f.acked}, f.maybe...), got) {
		w.t.Errorf("SOUL.md of %s = %d %q; want the acknowledged %q or one of the unanswered %q", agt, r.Status, got, f.acked, f.maybe)
		return
	}
	f.acked, f.maybe = got, nil
	w.souls++
}

// wasDeleted reports whether a client asked to delete the Agent (answered
// 202, or cut off by a kill after occ may have admitted it).
func (w *deployCrash) wasDeleted(agt string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.deleted[agt] || w.tried[agt]
}

// pending lists what keeps the world from being settled: deployments not
// terminal, Agents deleting (or deleted but still there), stopped Agents
// with an active revision, unfinished River jobs.
func (w *deployCrash) pending(p *occProc) []string {
	var out []string
	agents := map[string]map[string]any{}
	for _, agt := range slices.Sorted(maps.Keys(w.agents)) {
		if w.gone[agt] {
			continue
		}
		r := p.must("GET", "/namespaces/"+w.ns+"/agents/"+agt, nil)
		switch {
		case r.Status == 404 && w.tried[agt]:
			w.deleted[agt] = true // a deletion admitted whose answer the kill lost
			continue
		case r.Status != 200:
			w.t.Fatalf("GET agent %s = %d %v", agt, r.Status, r.Body)
		}
		a := r.data()
		agents[agt] = a
		if a["status"] != "active" {
			out = append(out, fmt.Sprintf("agent %s %v", agt, a["status"]))
		} else if a["desiredRuntimeState"] == "stopped" && a["activeRevisionId"] != nil {
			out = append(out, fmt.Sprintf("agent %s stopped with active revision %v", agt, a["activeRevisionId"]))
		}
	}
	for _, rev := range slices.Sorted(maps.Keys(w.deploys)) {
		agt := w.deploys[rev]
		if agents[agt] == nil {
			continue // the Agent is gone, with its revisions
		}
		r := p.must("GET", "/namespaces/"+w.ns+"/agents/"+agt+"/deployments/"+rev, nil)
		if r.Status == 404 && w.tried[agt] {
			continue // deleted since the Agent was read
		}
		if r.Status != 200 {
			w.t.Fatalf("GET deployment %s of %s = %d %v", rev, agt, r.Status, r.Body)
		}
		if s := r.data()["status"]; s != "succeeded" && s != "failed" {
			d := r.data()
			out = append(out, fmt.Sprintf("deployment %s of %s %v (progress %v, last attempt %v)", rev, agt, s, d["progress"], d["lastAttempt"]))
		}
	}
	if len(out) == 0 {
		out = append(out, w.liveJobs()...)
	}
	return out
}

// settle waits (bounded) until nothing is pending, scanning the gateway
// workloads at every poll.
func (w *deployCrash) settle(p *occProc) time.Duration {
	t := w.t
	t.Helper()
	start := time.Now()
	wait := w.compute.settleWait()
	if w.dbURL != "" {
		wait = 150 * time.Second // River's rescuer runs every 30 s
	}
	for {
		w.scanDuplicates()
		pend := w.pending(p)
		if len(pend) == 0 {
			return time.Since(start)
		}
		if time.Since(start) > wait {
			t.Fatalf("not settled %v after the restart: %v\nunfinished jobs: %v\n%s", wait, pend, w.liveJobs(), readTail(p.logs))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// harnessLine starts a workload line of a dedicated Agent's harness.
const harnessLine = "harness "

// byRole splits an Agent's workload lines into its gateways and harnesses.
func byRole(lines []string) (gateways, harnesses []string) {
	for _, l := range lines {
		if strings.HasPrefix(l, harnessLine) {
			harnesses = append(harnesses, l)
		} else {
			gateways = append(gateways, l)
		}
	}
	return gateways, harnesses
}

// scanDuplicates fails the test when any Agent has two gateway workloads
// or two harnesses.
func (w *deployCrash) scanDuplicates() map[string][]string {
	g := w.compute.workloads()
	for agt, lines := range g {
		gateways, harnesses := byRole(lines)
		if len(gateways) > 1 {
			w.t.Errorf("Agent %s has %d gateway workloads: %v", agt, len(gateways), gateways)
		}
		if len(harnesses) > 1 {
			w.t.Errorf("Agent %s has %d harness workloads: %v", agt, len(harnesses), harnesses)
		}
	}
	return g
}

// check asserts the settled state after a restart.
func (w *deployCrash) check(p *occProc) {
	t := w.t
	t.Helper()
	procs, held := w.scanDuplicates(), w.compute.held()
	for _, agt := range slices.Sorted(maps.Keys(w.agents)) {
		r := resp{Status: 404}
		if !w.gone[agt] {
			r = p.must("GET", "/namespaces/"+w.ns+"/agents/"+agt, nil)
		}
		if r.Status == 404 {
			if !w.deleted[agt] {
				t.Errorf("Agent %s is gone but its deletion was never admitted", agt)
			}
			if len(procs[agt]) > 0 {
				t.Errorf("deleted Agent %s still has gateway workloads %v", agt, procs[agt])
			}
			if left := held[agt]; len(left) > 0 {
				t.Errorf("deleted Agent %s left %v", agt, left)
			}
			w.gone[agt] = true
			continue
		}
		if r.Status != 200 {
			t.Fatalf("GET agent %s = %d %v", agt, r.Status, r.Body)
		}
		if w.deleted[agt] {
			t.Errorf("Agent %s: deletion admitted, still there: %v", agt, r.data())
		}
		a := r.data()
		running := a["desiredRuntimeState"] == "running" && a["activeRevisionId"] != nil
		gateways, harnesses := byRole(procs[agt])
		wantHarnesses := 0
		if w.dedicated[agt] {
			wantHarnesses = 1
		}
		switch {
		case running && (len(gateways) != 1 || len(harnesses) != wantHarnesses):
			t.Errorf("running Agent %s (active %v) has workloads %v, want 1 gateway and %d harness", agt, a["activeRevisionId"], procs[agt], wantHarnesses)
		case !running && len(procs[agt]) != 0:
			t.Errorf("Agent %s (desired %v, active %v) has gateway workloads %v, want none", agt, a["desiredRuntimeState"], a["activeRevisionId"], procs[agt])
		case running:
			w.harnesses += wantHarnesses
			w.checkSoul(p, agt)
		}
	}
	// Nothing of an Agent occ does not know.
	for agt, ps := range procs {
		if !w.agents[agt] {
			t.Errorf("gateway workloads %v of an unknown Agent %s", ps, agt)
		}
	}
	for agt, what := range held {
		if !w.agents[agt] {
			t.Errorf("%v of an unknown Agent %s", what, agt)
		}
	}
	// Deployments stay terminal with the same result; revisions never change.
	for _, rev := range slices.Sorted(maps.Keys(w.deploys)) {
		agt := w.deploys[rev]
		if w.gone[agt] {
			continue
		}
		base := "/namespaces/" + w.ns + "/agents/" + agt
		d := p.must("GET", base+"/deployments/"+rev, nil)
		if d.Status == 404 {
			if !w.deleted[agt] {
				t.Errorf("deployment %s of live Agent %s is 404", rev, agt)
			}
			continue
		}
		res := fmt.Sprint(d.data()["status"])
		if e, ok := d.data()["error"].(map[string]any); ok {
			res += "/" + fmt.Sprint(e["code"])
		}
		if prev, ok := w.terminal[rev]; ok && prev != res {
			t.Errorf("deployment %s of %s was %s, now %s", rev, agt, prev, res)
		} else if !ok {
			w.terminal[rev] = res
		}
		rv := p.must("GET", base+"/revisions/"+rev, nil)
		if rv.Status != 200 {
			t.Errorf("GET revision %s = %d %v", rev, rv.Status, rv.Body)
			continue
		}
		body := toJSON(rv.data())
		if prev, ok := w.revisions[rev]; ok && prev != body {
			t.Errorf("revision %s changed:\nwas %s\nnow %s", rev, prev, body)
		} else if !ok {
			w.revisions[rev] = body
		}
	}
	if t.Failed() {
		t.Logf("server log of the last start:\n%s", readTail(p.logs))
		t.FailNow()
	}
}

// localCrashCompute is the local driver running the fake gateway binary
// (OCC_COMPUTE_GATEWAY_COMMAND) under the test's data directory.
type localCrashCompute struct {
	t       *testing.T
	fake    string
	codex   string // the fake Codex CLI: dedicated Agents' harness
	dataDir string
}

// newLocalCrashCompute makes the data directory occ runs on; the gateways
// left running under it are killed when the test ends (occ leaves Agents
// running when it stops).
func newLocalCrashCompute(t *testing.T, fake, codex string) *localCrashCompute {
	l := &localCrashCompute{t: t, fake: fake, codex: codex, dataDir: gatewaytest.ReachableDir(t)}
	t.Cleanup(func() { killGatewayProcs(l.root()) })
	return l
}

func (l *localCrashCompute) env() []string {
	return []string{"OCC_COMPUTE_GATEWAY_COMMAND=" + l.fake, "OCC_COMPUTE_HARNESS_COMMAND=" + l.codex}
}

// runsDedicated: with the fake Codex as its harness command, occ runs
// dedicated Agents.
func (l *localCrashCompute) runsDedicated() {}

func (l *localCrashCompute) settleWait() time.Duration { return 60 * time.Second }

func (l *localCrashCompute) root() string { return filepath.Join(l.dataDir, "compute", "namespaces") }

// workloads: the gateway and harness processes of the data directory.
func (l *localCrashCompute) workloads() map[string][]string {
	out := map[string][]string{}
	for agt, procs := range gatewayProcs(l.root()) {
		for pid, cmd := range procs {
			out[agt] = append(out[agt], pid+" "+cmd)
		}
	}
	for agt, procs := range harnessProcs(l.root()) {
		for pid, cmd := range procs {
			out[agt] = append(out[agt], harnessLine+pid+" "+cmd)
		}
	}
	return out
}

// held: the Agents' directories.
func (l *localCrashCompute) held() map[string][]string {
	out := map[string][]string{}
	nss, _ := os.ReadDir(l.root())
	for _, ns := range nss {
		dir := filepath.Join(l.root(), ns.Name(), "agents")
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			l.t.Fatal(err)
		}
		for _, e := range entries {
			out[e.Name()] = append(out[e.Name()], "directory "+filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// liveJobs lists River jobs that are not finalized (unfinishedJobs) in
// the database the server uses.
func (w *deployCrash) liveJobs() []string {
	dbURL := w.dbURL
	if dbURL == "" {
		dbURL = "sqlite://" + filepath.Join(w.dataDir, "occ.db")
	}
	return unfinishedJobs(w.t, dbURL)
}
