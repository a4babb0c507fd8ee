package servertest

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// CrashCompute is what the deploy crash test sees of the place that runs
// the gateways (the local driver's processes and directories, a
// cluster's objects and Pods).
type CrashCompute interface {
	// env is occ's environment selecting and configuring the driver.
	Env() []string
	// workloads maps an Agent ID to its live gateway workloads (a process,
	// a Pod not being deleted), each described in a line; a dedicated
	// Agent's harness workload is a line starting harnessLine.
	Workloads() map[string][]string
	// held maps an Agent ID to everything the driver holds for it (a
	// directory, objects), each described in a line.
	Held() map[string][]string
	// settleWait bounds the wait for everything to settle after a restart.
	SettleWait() time.Duration
}

// DedicatedRunner is a CrashCompute whose driver runs dedicated Agents
// (their own harness beside the gateway): the rounds deploy some.
type DedicatedRunner interface{ RunsDedicated() }

// StraySweeper is a CrashCompute whose driver lists its workloads, so the
// worker removes those of Agents desired stopped (compute.WorkloadLister):
// settling waits for that too.
type StraySweeper interface{ SweepsStrays() }

// HarnessAuther is a CrashCompute whose dedicated harness authenticates
// in a way of its own: HarnessAuth is the Preset's harness auth setting.
type HarnessAuther interface{ HarnessAuth() map[string]any }

// DeployCrash is what the deploy crash test knows across rounds.
type DeployCrash struct {
	*CrashWorld
	compute CrashCompute
	Last    *OccProc // the running occ, once the rounds are over
	Ns      string
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

func NewDeployCrash(t *testing.T, bin string, cc CrashCompute, dataDir, dbURL string) *DeployCrash {
	return &DeployCrash{CrashWorld: &CrashWorld{T: t, Bin: bin, DbURL: dbURL, DataDir: dataDir, LogDir: t.TempDir()},
		compute: cc, agents: map[string]bool{}, sps: map[string]string{}, granted: map[string]bool{}, dedicated: map[string]bool{}, deleted: map[string]bool{}, tried: map[string]bool{}, gone: map[string]bool{}, deploys: map[string]string{},
		revisions: map[string]string{}, terminal: map[string]string{}, files: map[string]*soul{}}
}

// deployCrashLoop runs rounds of burst, SIGKILL, restart, settle and
// checks on one data directory; dbURL "" means its SQLite file. occ is
// left running (w.last).
func DeployCrashLoop(t *testing.T, bin string, cc CrashCompute, dataDir, dbURL string, rounds int) *DeployCrash {
	w := NewDeployCrash(t, bin, cc, dataDir, dbURL)
	p := w.StartOCC()
	w.Setup(p)
	var total time.Duration
	for round := range rounds {
		start := time.Now()
		ops := w.burst(p, round)
		p = w.StartOCC()
		settled := w.settle(p)
		w.check(p)
		d := time.Since(start)
		total += d
		t.Logf("round %d: %s; settled in %v; %d Agents created, %d deleted, %d deployments admitted; %v",
			round, ops, settled.Round(time.Millisecond), len(w.agents), len(w.deleted), len(w.deploys), d.Round(time.Millisecond))
	}
	t.Logf("%d rounds, %v per round on average; %d SOUL.md reads checked against the acknowledged writes", rounds,
		(total / time.Duration(rounds)).Round(time.Millisecond), w.souls)
	if _, ok := cc.(DedicatedRunner); ok {
		t.Logf("%d checks found a running dedicated Agent with its one gateway and one harness", w.harnesses)
		// The rounds rarely leave a dedicated Agent running when they kill
		// occ: one more kill while one surely runs.
		p = w.killRunningDedicated(p)
	}
	w.Last = p
	return w
}

// killRunningDedicated deploys a dedicated Agent to succeeded, kills occ
// with SIGKILL while it runs, and checks everything after the restart:
// among the rest, that Agent still runs with exactly one gateway and one
// harness.
func (w *DeployCrash) killRunningDedicated(p *OccProc) *OccProc {
	t := w.T
	agt := ""
	for agt == "" || !w.dedicated[agt] {
		id, err := w.NewAgent(p)
		if err != nil {
			t.Fatal(err)
		}
		agt = id
	}
	base := "/namespaces/" + w.Ns + "/agents/" + agt
	r := p.Must("POST", base+"/deploy", nil)
	if r.Status != 202 {
		t.Fatalf("deploy dedicated Agent %s = %d %v", agt, r.Status, r.Body)
	}
	rev := r.Data()["id"].(string)
	w.mu.Lock()
	w.deploys[rev] = agt
	w.mu.Unlock()
	deadline := time.Now().Add(2 * time.Minute)
	for st := ""; st != "succeeded"; {
		st, _ = p.Must("GET", base+"/deployments/"+rev, nil).Data()["status"].(string)
		if st == "failed" || time.Now().After(deadline) {
			t.Fatalf("dedicated deployment %s of Agent %s: %q", rev, agt, st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.Kill()
	p = w.StartOCC()
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
func (w *DeployCrash) DeleteEverything() {
	t, p := w.T, w.Last
	t.Helper()
	var left []string
	for _, agt := range slices.Sorted(maps.Keys(w.agents)) {
		if !w.gone[agt] {
			left = append(left, agt)
		}
	}
	// A create whose answer was lost to a kill may have committed: every
	// Agent the Namespace lists goes too.
	if r := p.Must("GET", "/namespaces/"+w.Ns+"/agents?pageSize=1000", nil); r.Status == 200 {
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
		if r := p.Must("DELETE", "/namespaces/"+w.Ns+"/agents/"+agt, nil); r.Status != 202 && r.Status != 409 && r.Status != 404 {
			t.Fatalf("DELETE agent %s = %d %v", agt, r.Status, r.Body)
		}
	}
	gone := func(what, path string) {
		deadline := time.Now().Add(w.compute.SettleWait())
		for p.Must("GET", path, nil).Status != 404 {
			if time.Now().After(deadline) {
				t.Fatalf("%s not gone after %v\n%s", what, w.compute.SettleWait(), ReadTail(p.Logs))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, agt := range left {
		gone("Agent "+agt, "/namespaces/"+w.Ns+"/agents/"+agt)
	}
	for _, path := range []string{"/configurations/" + w.cfg, "/secrets/" + w.secret} {
		if r := p.Must("DELETE", "/namespaces/"+w.Ns+path, nil); r.Status/100 != 2 {
			t.Fatalf("DELETE %s = %d %v", path, r.Status, r.Body)
		}
	}
	if r := p.Must("DELETE", "/namespaces/"+w.Ns, nil); r.Status != 202 {
		t.Fatalf("DELETE namespace = %d %v", r.Status, r.Body)
	}
	gone("Namespace "+w.Ns, "/namespaces/"+w.Ns)
}

// startOCC is crashWorld.start with the driver's environment.
func (w *DeployCrash) StartOCC() *OccProc {
	w.Env = w.compute.Env()
	return w.Start()
}

// setup makes a ready Namespace, a Secret, a Configuration and a role that
// lets an Agent's service principal operate the Secret.
func (w *DeployCrash) Setup(p *OccProc) {
	t := w.T
	r := p.Must("POST", "/namespaces", map[string]any{"name": "deploy-crash"})
	if r.Status != 201 {
		t.Fatalf("create namespace = %d %v", r.Status, r.Body)
	}
	w.Ns = r.Data()["id"].(string)
	deadline := time.Now().Add(30 * time.Second)
	for p.Must("GET", "/namespaces/"+w.Ns, nil).Data()["status"] != "ready" {
		if time.Now().After(deadline) {
			t.Fatal("namespace not ready")
		}
		time.Sleep(20 * time.Millisecond)
	}
	mk := func(path string, body map[string]any) string {
		r := p.Must("POST", "/namespaces/"+w.Ns+path, body)
		if r.Status != 201 {
			t.Fatalf("POST %s = %d %v", path, r.Status, r.Body)
		}
		return r.Data()["id"].(string)
	}
	w.secret = mk("/secrets", map[string]any{"name": "openai", "value": "sk-crash-canary"})
	w.cfg = mk("/configurations", map[string]any{"name": "c", "kind": "agent",
		"values": map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": "openai/gpt-5"}}}})
	w.role = mk("/iam/roles", map[string]any{"name": "operate-secrets", "permissions": []string{"secret:operate"}})
}

// newAgent creates a deployable Agent (its principal may operate the
// Secret); it returns "" when the request was lost to the kill.
func (w *DeployCrash) NewAgent(p *OccProc) (string, error) {
	w.mu.Lock()
	w.seq++
	seq := w.seq
	w.mu.Unlock()
	name := fmt.Sprintf("bot-%d", seq)
	harness := map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "id": w.secret}}
	if h, ok := w.compute.(HarnessAuther); ok {
		harness = h.HarnessAuth() // a driver that takes another method
	}
	body := map[string]any{"name": name, "configurationId": w.cfg, "harnessAuth": harness}
	_, runsDedicated := w.compute.(DedicatedRunner)
	dedicated := runsDedicated && seq%2 == 0
	if dedicated {
		body["executionMode"] = "dedicated"
	}
	r, err := p.do("POST", "/namespaces/"+w.Ns+"/agents", body)
	if err != nil {
		return "", err
	}
	if r.Status != 201 {
		return "", fmt.Errorf("create agent = %d %v", r.Status, r.Body)
	}
	id, sp := r.Data()["id"].(string), r.Data()["servicePrincipalId"].(string)
	w.mu.Lock()
	w.agents[id], w.sps[id], w.dedicated[id] = true, sp, dedicated
	w.mu.Unlock()
	return id, w.grant(p, id)
}

// grant binds the role to the Agent's principal.
func (w *DeployCrash) grant(p *OccProc, agt string) error {
	w.mu.Lock()
	sp := w.sps[agt]
	w.mu.Unlock()
	r, err := p.do("POST", "/namespaces/"+w.Ns+"/iam/bindings", map[string]any{"principalId": sp, "roleId": w.role})
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
func (w *DeployCrash) live() []string {
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
func (w *DeployCrash) burst(p *OccProc, round int) string {
	const clients, handful = 4, 5
	// Grants lost to the last kill.
	for _, agt := range slices.Sorted(maps.Keys(w.agents)) {
		if !w.granted[agt] && !w.deleted[agt] {
			if err := w.grant(p, agt); err != nil {
				w.T.Fatalf("round %d: %v", round, err)
			}
		}
	}
	for len(w.live()) < handful {
		if _, err := w.NewAgent(p); err != nil {
			w.T.Fatalf("round %d: %v", round, err)
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
					if _, err := w.NewAgent(p); err != nil {
						errs <- err
					} else {
						count("create")
					}
					continue
				}
				agt := agents[rand.IntN(len(agents))]
				base := "/namespaces/" + w.Ns + "/agents/" + agt
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
					op += "-" + r.Code()
				case r.Status == 202 && op == "deploy":
					w.mu.Lock()
					w.deploys[r.Data()["id"].(string)] = agt
					w.mu.Unlock()
				case r.Status == 202 && op == "delete":
					w.mu.Lock()
					w.deleted[agt] = true
					w.mu.Unlock()
				case r.Status == 202:
				case r.Status == 409 && r.Code() == "AGENT_DELETING", r.Status == 404 && w.wasDeleted(agt):
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
	p.Kill()
	wg.Wait()
	close(errs)
	lost := 0
	for err := range errs {
		var ue *url.Error
		if errors.As(err, &ue) {
			lost++
			continue
		}
		w.T.Errorf("round %d: %v", round, err)
	}
	var parts []string
	counts.Range(func(k, v any) bool { parts = append(parts, fmt.Sprintf("%d %s", *v.(*int64), k)); return true })
	slices.Sort(parts)
	return fmt.Sprintf("killed after %v: %s answered, %d lost", killAfter, strings.Join(parts, ", "), lost)
}

// ownsSoul reports whether client c writes the Agent's SOUL.md (the
// first client to try does, from then on).
func (w *DeployCrash) ownsSoul(agt string, c int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.files[agt] == nil {
		w.files[agt] = &soul{owner: c}
	}
	return w.files[agt].owner == c
}

// sendSoul returns new content for the Agent's SOUL.md, noted as possible.
func (w *DeployCrash) sendSoul(agt string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	content := fmt.Sprintf("soul %d\n", w.seq)
	f := w.files[agt]
	f.maybe = append(f.maybe, content)
	return content
}

// ackSoul records an acknowledged write.
func (w *DeployCrash) ackSoul(agt, content string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.files[agt].acked, w.files[agt].maybe = content, nil
}

// checkSoul reads a running Agent's SOUL.md: after an acknowledged write
// it holds that write's content or a later one's whose answer was lost.
func (w *DeployCrash) checkSoul(p *OccProc, agt string) {
	f := w.files[agt]
	if f == nil || f.acked == "" {
		return
	}
	path := "/namespaces/" + w.Ns + "/agents/" + agt + "/workspace/files/SOUL.md"
	var r Resp
	for try := 0; try < 100; try++ { // the re-adopted gateway may still be starting
		if r = p.Must("GET", path, nil); r.Status != 503 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	got, _ := r.Data()["content"].(string)
	if r.Status != 200 || !slices.Contains(append([]string{f.acked}, f.maybe...), got) {
		w.T.Errorf("SOUL.md of %s = %d %q; want the acknowledged %q or one of the unanswered %q", agt, r.Status, got, f.acked, f.maybe)
		return
	}
	f.acked, f.maybe = got, nil
	w.souls++
}

// wasDeleted reports whether a client asked to delete the Agent (answered
// 202, or cut off by a kill after occ may have admitted it).
func (w *DeployCrash) wasDeleted(agt string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.deleted[agt] || w.tried[agt]
}

// pending lists what keeps the world from being settled: deployments not
// terminal, Agents deleting (or deleted but still there), stopped Agents
// with an active revision, or with workloads on a driver whose strays the
// worker sweeps (one an engine created after the stop), unfinished River
// jobs.
func (w *DeployCrash) pending(p *OccProc) []string {
	var out []string
	var strays map[string][]string
	if _, ok := w.compute.(StraySweeper); ok {
		strays = w.compute.Workloads()
	}
	agents := map[string]map[string]any{}
	for _, agt := range slices.Sorted(maps.Keys(w.agents)) {
		if w.gone[agt] {
			continue
		}
		r := p.Must("GET", "/namespaces/"+w.Ns+"/agents/"+agt, nil)
		switch {
		case r.Status == 404 && w.tried[agt]:
			w.deleted[agt] = true // a deletion admitted whose answer the kill lost
			continue
		case r.Status != 200:
			w.T.Fatalf("GET agent %s = %d %v", agt, r.Status, r.Body)
		}
		a := r.Data()
		agents[agt] = a
		if a["status"] != "active" {
			out = append(out, fmt.Sprintf("agent %s %v", agt, a["status"]))
		} else if a["desiredRuntimeState"] == "stopped" && a["activeRevisionId"] != nil {
			out = append(out, fmt.Sprintf("agent %s stopped with active revision %v", agt, a["activeRevisionId"]))
		} else if a["desiredRuntimeState"] == "stopped" && len(strays[agt]) > 0 {
			out = append(out, fmt.Sprintf("agent %s stopped with workloads %v", agt, strays[agt]))
		}
	}
	for _, rev := range slices.Sorted(maps.Keys(w.deploys)) {
		agt := w.deploys[rev]
		if agents[agt] == nil {
			continue // the Agent is gone, with its revisions
		}
		if _, ok := w.terminal[rev]; ok {
			continue // terminal at an earlier check, which check holds it to
		}
		r := p.Must("GET", "/namespaces/"+w.Ns+"/agents/"+agt+"/deployments/"+rev, nil)
		if r.Status == 404 && w.tried[agt] {
			continue // deleted since the Agent was read
		}
		if r.Status != 200 {
			w.T.Fatalf("GET deployment %s of %s = %d %v", rev, agt, r.Status, r.Body)
		}
		if s := r.Data()["status"]; s != "succeeded" && s != "failed" {
			d := r.Data()
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
func (w *DeployCrash) settle(p *OccProc) time.Duration {
	t := w.T
	t.Helper()
	start := time.Now()
	wait := w.compute.SettleWait()
	if w.DbURL != "" {
		wait = 150 * time.Second // River's rescuer runs every 30 s
	}
	for {
		w.scanDuplicates()
		pend := w.pending(p)
		if len(pend) == 0 {
			return time.Since(start)
		}
		if time.Since(start) > wait {
			t.Fatalf("not settled %v after the restart: %v\nunfinished jobs: %v\n%s", wait, pend, w.liveJobs(), ReadTail(p.Logs))
		}
		// Each poll reads every unsettled Agent and deployment: more often
		// would only load the machine the lanes share.
		time.Sleep(200 * time.Millisecond)
	}
}

// harnessLine starts a workload line of a dedicated Agent's harness.
const HarnessLine = "harness "

// byRole splits an Agent's workload lines into its gateways and harnesses.
func byRole(lines []string) (gateways, harnesses []string) {
	for _, l := range lines {
		if strings.HasPrefix(l, HarnessLine) {
			harnesses = append(harnesses, l)
		} else {
			gateways = append(gateways, l)
		}
	}
	return gateways, harnesses
}

// scanDuplicates fails the test when any Agent has two gateway workloads
// or two harnesses.
func (w *DeployCrash) scanDuplicates() map[string][]string {
	g := w.compute.Workloads()
	for agt, lines := range g {
		gateways, harnesses := byRole(lines)
		if len(gateways) > 1 {
			w.T.Errorf("Agent %s has %d gateway workloads: %v", agt, len(gateways), gateways)
		}
		if len(harnesses) > 1 {
			w.T.Errorf("Agent %s has %d harness workloads: %v", agt, len(harnesses), harnesses)
		}
	}
	return g
}

// check asserts the settled state after a restart.
func (w *DeployCrash) check(p *OccProc) {
	t := w.T
	t.Helper()
	procs, held := w.scanDuplicates(), w.compute.Held()
	for _, agt := range slices.Sorted(maps.Keys(w.agents)) {
		r := Resp{Status: 404}
		if !w.gone[agt] {
			r = p.Must("GET", "/namespaces/"+w.Ns+"/agents/"+agt, nil)
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
			t.Errorf("Agent %s: deletion admitted, still there: %v", agt, r.Data())
		}
		a := r.Data()
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
		base := "/namespaces/" + w.Ns + "/agents/" + agt
		d := p.Must("GET", base+"/deployments/"+rev, nil)
		if d.Status == 404 {
			if !w.deleted[agt] {
				t.Errorf("deployment %s of live Agent %s is 404", rev, agt)
			}
			continue
		}
		res := fmt.Sprint(d.Data()["status"])
		if e, ok := d.Data()["error"].(map[string]any); ok {
			res += "/" + fmt.Sprint(e["code"])
		}
		if prev, ok := w.terminal[rev]; ok && prev != res {
			t.Errorf("deployment %s of %s was %s, now %s", rev, agt, prev, res)
		} else if !ok {
			w.terminal[rev] = res
		}
		rv := p.Must("GET", base+"/revisions/"+rev, nil)
		if rv.Status != 200 {
			t.Errorf("GET revision %s = %d %v", rev, rv.Status, rv.Body)
			continue
		}
		body := ToJSON(rv.Data())
		if prev, ok := w.revisions[rev]; ok && prev != body {
			t.Errorf("revision %s changed:\nwas %s\nnow %s", rev, prev, body)
		} else if !ok {
			w.revisions[rev] = body
		}
	}
	if t.Failed() {
		t.Logf("server log of the last start:\n%s", ReadTail(p.Logs))
		t.FailNow()
	}
}

// liveJobs lists River jobs that are not finalized (unfinishedJobs) in
// the database the server uses.
func (w *DeployCrash) liveJobs() []string {
	dbURL := w.DbURL
	if dbURL == "" {
		dbURL = "sqlite://" + filepath.Join(w.DataDir, "occ.db")
	}
	return unfinishedJobs(w.T, dbURL)
}
