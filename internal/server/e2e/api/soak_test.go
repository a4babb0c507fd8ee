package api_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestMutationSoak kills occ with SIGKILL at a random moment while
// concurrent clients create, change and delete resources through every
// family of mutating routes that needs no running gateway (Namespaces,
// Configurations, Secrets, Presets, Agents, Namespace and installation
// roles, bindings and restrictions, service principals, service keys,
// human principals and their disabling, Service Accounts), starts it again on the same
// database and checks after every round:
//
//   - every acknowledged create is present exactly once, and a create whose
//     answer was lost is present at most once; repeating it with its
//     Idempotency-Key answers its 201 (a replay, or the create that had not
//     committed, run now) or 409 (committed, its response not stored), and
//     after either it is present exactly once (service keys and human
//     principals take no key: a lost one is only counted);
//   - every acknowledged change is there (a value later changes could not
//     have replaced: the last acknowledged one or one sent after it);
//   - every acknowledged deletion is 404;
//   - the audit log has exactly one success event for every create and
//     deletion that committed, and between the acknowledged and the sent
//     number of changes;
//   - no River job is left unfinished.
//
// Deploy, stop and Agent deletion with running gateways are
// TestDeployCrashRestart's (and on PostgreSQL Agent deletion altogether:
// see owned); workspace files need a running gateway too.
// OCC_TEST_SOAK_ROUNDS sets the rounds of each database (default 50).
func TestMutationSoak(t *testing.T) {
	t.Parallel()
	rounds := 50
	if s := os.Getenv("OCC_TEST_SOAK_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("OCC_TEST_SOAK_ROUNDS=%q: want a positive number", s)
		}
		rounds = n
	}
	bin := servertest.BuildOCC(t)
	t.Run("sqlite", func(t *testing.T) { soakLoop(t, bin, "", rounds) })
	t.Run("postgres", func(t *testing.T) { soakLoop(t, bin, storetest.URL(t, "postgres"), rounds) })
}

// soakClients send requests at once; each owns what it creates, so the
// requests about one resource are sequential and the last acknowledged
// change is well defined.
const soakClients, soakOpsPerClient = 4, 8

func soakLoop(t *testing.T, bin, dbURL string, rounds int) {
	cfg := filepath.Join(t.TempDir(), "occ.yaml")
	if err := os.WriteFile(cfg, []byte("backends:\n  - id: "+soakBackend+"\n    type: github\n    url: https://github.internal.example\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w := &soak{CrashWorld: &servertest.CrashWorld{T: t, Bin: bin, DbURL: dbURL, DataDir: gatewaytest.ReachableDir(t), LogDir: t.TempDir(),
		Env: []string{"OCC_CONFIG=" + cfg}}}
	p := w.Start()
	w.setup(p)
	var total time.Duration
	var acked, lost, resent int
	for round := range rounds {
		began := time.Now()
		a, l := w.burst(p)
		p = w.Start()
		r := w.recover(p)
		settleBegan := time.Now()
		if jobs := w.UnfinishedJobs(); len(jobs) > 0 {
			t.Logf("round %d: unfinished after the restart: %v", round, jobs)
		}
		w.settleJobs(p)
		settled := time.Since(settleBegan)
		w.check(p)
		acked, lost, resent = acked+a, lost+l, resent+r
		d := time.Since(began)
		total += d
		t.Logf("round %d: %d acknowledged, %d in flight at the kill, %d creates repeated with their key; %d resources; jobs settled in %v; %v",
			round, a, l, r, len(w.res), settled.Round(time.Millisecond), d.Round(time.Millisecond))
	}
	t.Logf("%d rounds: %d acknowledged mutations, %d in flight at the kill, %d creates repeated; %v a round on average",
		rounds, acked, lost, resent, (total / time.Duration(rounds)).Round(time.Millisecond))
	p.Stop()
}

// resource is one resource the soak made (or may have made).
type resource struct {
	f       *family
	coll    string
	tag     string // its create's tag (unique)
	idemKey string
	owner   int
	pinned  bool   // another resource refers to it: never deleted
	id      string // "" until known
	acked   bool   // the create answered 201
	// value is the last acknowledged change's value; maybe the values of
	// changes sent after it whose answers were lost.
	value string
	maybe []string
	// updates acknowledged and sent; the audit count lies between.
	updAcked, updSent int
	delSent, delAcked bool
	gone              bool // seen 404 after a deletion: retired
	dirty             bool // touched since the last check
}

func (r *resource) path() string { return r.coll + "/" + r.id }

// soak is what the soak knows across rounds.
type soak struct {
	*servertest.CrashWorld
	ns   string   // the Namespace the Namespace-scoped families live in
	cfgs []string // two Configurations Agents switch between
	sp   string   // a service principal bindings and keys name

	mu    sync.Mutex
	seq   int
	res   []*resource
	clock atomic.Int64 // answers in this round, for the kill
}

func (w *soak) setup(p *servertest.OccProc) {
	t := w.T
	r := p.Must("POST", "/namespaces", map[string]any{"name": "soak"})
	if r.Status != 201 {
		t.Fatalf("create namespace = %d %v", r.Status, r.Body)
	}
	w.ns = r.Data()["id"].(string)
	deadline := time.Now().Add(30 * time.Second)
	for p.Must("GET", "/namespaces/"+w.ns, nil).Data()["status"] != "ready" {
		if time.Now().After(deadline) {
			t.Fatal("namespace not ready")
		}
		time.Sleep(20 * time.Millisecond)
	}
	mk := func(path string, body map[string]any) string {
		r := p.Must("POST", path, body)
		if r.Status != 201 {
			t.Fatalf("POST %s = %d %v", path, r.Status, r.Body)
		}
		return r.Data()["id"].(string)
	}
	for i := range 2 {
		w.cfgs = append(w.cfgs, mk("/namespaces/"+w.ns+"/configurations",
			map[string]any{"name": fmt.Sprintf("base-%d", i), "kind": "agent", "values": model("openai/gpt-5")}))
	}
	w.sp = mk("/iam/service-principals", map[string]any{"name": "soak-sp", "namespaceId": w.ns})
	// Each client renames a Namespace of its own.
	nsFamily := soakFamilies[len(soakFamilies)-1]
	for c := range soakClients {
		tag := fmt.Sprintf("soak-ns-%d", c)
		id := mk("/namespaces", map[string]any{"name": tag})
		w.res = append(w.res, &resource{f: nsFamily, coll: "/namespaces", tag: tag, owner: c, pinned: true, id: id, acked: true, value: tag})
	}
	w.settleJobs(p) // the Namespaces are ready before the first kill
}

// lostToKill reports a transport error (the request raced the kill).
func lostToKill(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue)
}

// create sends a create of family f as client c; it returns the new ID and
// whether the create was acknowledged. pinned resources are never deleted.
func (w *soak) create(p *servertest.OccProc, c int, f *family, pinned bool) (string, bool) {
	body := map[string]any{}
	if f.prep != nil {
		extra, ok := f.prep(w, p, c)
		if !ok {
			return "", false
		}
		for k, v := range extra {
			body[k] = v
		}
	}
	w.mu.Lock()
	w.seq++
	tag := fmt.Sprintf("s%d", w.seq)
	w.mu.Unlock()
	if f.body != nil {
		for k, v := range f.body(w, tag) {
			body[k] = v
		}
	}
	if f.key != "name" && f.key != "email" {
		tag = body[f.key].(string) // found by the fresh ID it names
	}
	if f.key == "email" {
		tag = body["email"].(string)
	}
	r := &resource{f: f, coll: f.coll(w), tag: tag, owner: c, pinned: pinned, dirty: true}
	if !f.noKey {
		r.idemKey = "soak-" + tag
	}
	if f.first != nil {
		r.value = f.first(w)
	}
	w.mu.Lock()
	w.res = append(w.res, r)
	w.mu.Unlock()
	ans, err := p.DoKeyed("POST", r.coll, body, r.idemKey)
	if err != nil {
		if !lostToKill(err) {
			w.T.Errorf("POST %s: %v", r.coll, err)
		}
		return "", false
	}
	w.clock.Add(1)
	if ans.Status != 201 {
		w.T.Errorf("POST %s %v = %d %v", r.coll, body, ans.Status, ans.Body)
		return "", false
	}
	w.mu.Lock()
	r.id, r.acked = ans.Data()["id"].(string), true
	w.mu.Unlock()
	return r.id, true
}

// owned lists client c's live resources that can take op ("change" or
// "delete").
func (w *soak) owned(c int, op string) []*resource {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*resource
	for _, r := range w.res {
		if r.owner != c || r.id == "" || r.delSent || r.gone {
			continue
		}
		// On PostgreSQL a job the kill left running waits for River's
		// rescuer (every 30 s): an Agent's deletion, the one family with
		// a job, is left to TestDeployCrashRestart there.
		jobWait := w.DbURL != "" && r.f.name == "agents"
		if (op == "change" && r.f.change != nil) || (op == "delete" && r.f.del != "" && !r.pinned && !jobWait) {
			out = append(out, r)
		}
	}
	return out
}

// burst runs the clients and kills p after a random number of answers,
// while other requests are in flight; no client sends after the kill.
func (w *soak) burst(p *servertest.OccProc) (acked, lost int) {
	w.clock.Store(0)
	killAt := int64(soakClients + rand.IntN(soakClients*soakOpsPerClient-soakClients))
	var killed atomic.Bool
	var killOnce sync.Once
	kill := func() {
		killOnce.Do(func() {
			time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
			killed.Store(true)
			p.Kill()
		})
	}
	var wg sync.WaitGroup
	var nAcked, nLost atomic.Int64
	for c := range soakClients {
		wg.Go(func() {
			for range soakOpsPerClient {
				if killed.Load() {
					return
				}
				if w.step(p, c) {
					nAcked.Add(1)
				} else {
					nLost.Add(1)
				}
				if w.clock.Load() >= killAt {
					kill()
				}
			}
		})
	}
	wg.Wait()
	kill()
	return int(nAcked.Load()), int(nLost.Load())
}

// step sends one random mutation as client c; false when its answer was
// lost.
func (w *soak) step(p *servertest.OccProc, c int) bool {
	switch n := rand.IntN(10); {
	case n < 3:
		if rs := w.owned(c, "change"); len(rs) > 0 {
			return w.change(p, rs[rand.IntN(len(rs))])
		}
	case n < 5:
		if rs := w.owned(c, "delete"); len(rs) > 0 {
			return w.delete(p, rs[rand.IntN(len(rs))])
		}
	}
	var creatable []*family
	for _, f := range soakFamilies {
		if f.body != nil || f.prep != nil {
			creatable = append(creatable, f)
		}
	}
	_, ok := w.create(p, c, creatable[rand.IntN(len(creatable))], false)
	return ok
}

func (w *soak) change(p *servertest.OccProc, r *resource) bool {
	w.mu.Lock()
	r.updSent++
	v := r.updSent
	r.dirty = true
	w.mu.Unlock()
	method, path, body, value := r.f.change(w, r, v)
	ans, err := p.DoKeyed(method, path, body, "")
	if err != nil {
		if !lostToKill(err) {
			w.T.Errorf("%s %s: %v", method, path, err)
		}
		w.mu.Lock()
		r.maybe = append(r.maybe, value)
		w.mu.Unlock()
		return false
	}
	w.clock.Add(1)
	if ans.Status != 200 && ans.Status != 204 {
		w.T.Errorf("%s %s %v = %d %v", method, path, body, ans.Status, ans.Body)
		return false
	}
	w.mu.Lock()
	r.value, r.maybe, r.updAcked = value, nil, r.updAcked+1
	w.mu.Unlock()
	return true
}

func (w *soak) delete(p *servertest.OccProc, r *resource) bool {
	w.mu.Lock()
	r.delSent, r.dirty = true, true
	w.mu.Unlock()
	ans, err := p.DoKeyed("DELETE", r.path(), nil, "")
	if err != nil {
		if !lostToKill(err) {
			w.T.Errorf("DELETE %s: %v", r.path(), err)
		}
		return false
	}
	w.clock.Add(1)
	if ans.Status != 204 && ans.Status != 202 {
		w.T.Errorf("DELETE %s = %d %v", r.path(), ans.Status, ans.Body)
		return false
	}
	w.mu.Lock()
	r.delAcked = true
	w.mu.Unlock()
	return true
}

// recover repeats every create whose answer was lost with its
// Idempotency-Key: 201 (a replay, or the create run now because it had
// not committed) or 409 (it committed, its response was not stored).
func (w *soak) recover(p *servertest.OccProc) int {
	t := w.T
	n := 0
	for _, r := range w.res {
		if r.id != "" || r.gone || r.idemKey == "" {
			continue // known, or not to be repeated: check finds it listed at most once
		}
		n++
		body := map[string]any{}
		// The same request: the same body, so the key matches.
		if r.f.prep != nil {
			body[r.f.key] = r.tag
			if r.f.name == "iam.bindings" {
				body["principalId"] = w.sp
			} else {
				body["permission"] = "secret:read"
			}
		}
		if r.f.body != nil {
			tag := r.tag
			if r.f.key == "email" {
				tag = tag[:len(tag)-len("@soak.test")]
			}
			for k, v := range r.f.body(w, tag) {
				body[k] = v
			}
		}
		ans := p.MustKeyed("POST", r.coll, body, r.idemKey)
		switch ans.Status {
		case 201:
			r.id, r.acked = ans.Data()["id"].(string), true
		case 409:
			// Committed before the kill: it is listed once (check).
			r.acked = true
		default:
			t.Errorf("repeating POST %s %v with its key = %d %v", r.coll, body, ans.Status, ans.Body)
		}
	}
	return n
}

// settleJobs waits until River has no unfinished job.
func (w *soak) settleJobs(p *servertest.OccProc) {
	wait := 30 * time.Second
	if w.DbURL != "" {
		wait = 120 * time.Second // River's rescuer runs every 30 s
	}
	deadline := time.Now().Add(wait)
	for {
		jobs := w.UnfinishedJobs()
		if len(jobs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			w.T.Fatalf("River jobs unfinished %v after restart: %v\n%s", wait, jobs, servertest.ReadTail(p.Logs))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// check asserts the invariants after a restart.
func (w *soak) check(p *servertest.OccProc) {
	t := w.T
	lists := map[string]map[string][]map[string]any{} // collection → key value → items
	listed := func(r *resource) []map[string]any {
		byKey, ok := lists[r.coll]
		if !ok {
			byKey = map[string][]map[string]any{}
			for _, it := range p.ListAll(r.coll) {
				if r.f.ended != nil && r.f.ended(it) {
					continue
				}
				k := fmt.Sprint(it[r.f.key])
				byKey[k] = append(byKey[k], it)
			}
			lists[r.coll] = byKey
		}
		return byKey[r.tag]
	}
	for _, r := range w.res {
		if r.gone || !r.dirty {
			continue
		}
		r.dirty = false
		if r.f.name == "namespaces" {
			w.checkValue(p, r)
			w.checkAudit(p, r, false)
			continue
		}
		items := listed(r)
		if len(items) > 1 {
			t.Errorf("%s %s is listed %d times: %v", r.f.name, r.tag, len(items), items)
			continue
		}
		if r.id == "" && len(items) == 1 {
			r.id = items[0]["id"].(string)
		}
		switch {
		case r.delAcked && len(items) != 0:
			t.Errorf("%s %s (%s): deletion acknowledged, still listed", r.f.name, r.tag, r.id)
		case r.acked && !r.delSent && len(items) != 1:
			t.Errorf("%s %s (%s): create acknowledged, listed %d times", r.f.name, r.tag, r.id, len(items))
		}
		if r.id == "" {
			continue // never committed (its repetition was refused and said so)
		}
		gone := len(items) == 0
		if gone && !r.delSent {
			t.Errorf("%s %s (%s) vanished without a deletion", r.f.name, r.tag, r.id)
		}
		if !gone {
			w.checkValue(p, r)
		}
		w.checkAudit(p, r, gone)
		r.gone = gone
	}
	w.checkNoOrphans(p)
	if t.Failed() {
		t.Logf("server log of the last start:\n%s", servertest.ReadTail(p.Logs))
		t.FailNow()
	}
}

// checkNoOrphans: no driver directory outlives its Agent.
func (w *soak) checkNoOrphans(p *servertest.OccProc) {
	listed := map[string]bool{}
	for _, it := range p.ListAll("/namespaces/" + w.ns + "/agents") {
		listed[it["id"].(string)] = true
	}
	dir := filepath.Join(w.DataDir, "compute", "namespaces", w.ns, "agents")
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		w.T.Fatal(err)
	}
	for _, e := range entries {
		if !listed[e.Name()] {
			w.T.Errorf("driver directory %s belongs to no listed Agent", filepath.Join(dir, e.Name()))
		}
	}
}

// checkValue compares a resource's changed value with what was sent.
func (w *soak) checkValue(p *servertest.OccProc, r *resource) {
	if r.f.value == nil || r.updSent == 0 {
		return
	}
	ans := p.Must("GET", r.path(), nil)
	if ans.Status != 200 {
		w.T.Errorf("GET %s = %d %v", r.path(), ans.Status, ans.Body)
		return
	}
	got := r.f.value(ans.Data())
	if allowed := append([]string{r.value}, r.maybe...); !slices.Contains(allowed, got) {
		w.T.Errorf("%s %s: value %q after %d acknowledged changes (last %q) and lost ones %v", r.f.name, r.id, got, r.updAcked, r.value, r.maybe)
		return
	}
	r.value, r.maybe = got, nil
}

// checkAudit counts a resource's success events.
func (w *soak) checkAudit(p *servertest.OccProc, r *resource, gone bool) {
	counts := w.AuditActions(p, r.id)
	if r.f.name != "namespaces" {
		if n := counts[r.f.name+".create/success"]; n != 1 {
			w.T.Errorf("%s %s: %d successful %s.create events; want 1 (%v)", r.f.name, r.id, n, r.f.name, counts)
		}
	}
	if gone {
		if n := counts[r.f.remove+"/success"]; n != 1 {
			w.T.Errorf("%s %s is gone with %d successful %s events; want 1 (%v)", r.f.name, r.id, n, r.f.remove, counts)
		}
	}
	if r.f.update != "" {
		n := counts[r.f.update+"/success"]
		if r.f.name == "iam.principals" {
			n = counts["iam.principals.disable/success"] + counts["iam.principals.enable/success"]
		}
		if n < r.updAcked || n > r.updSent {
			w.T.Errorf("%s %s: %d successful change events; %d changes acknowledged, %d sent (%v)", r.f.name, r.id, n, r.updAcked, r.updSent, counts)
		}
	}
}
