package api_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestReplicasLinearizable runs three occ processes on one PostgreSQL
// database and has concurrent clients, each talking to one replica, create,
// read, look up, change (with If-Match, and blindly) and delete the same
// few Configurations. The history of every name is checked for
// linearizability with porcupine against the model of one register per
// name: what every client saw must be explainable by the operations taking
// effect one at a time, each between its request and its answer. A copy of
// the history with one read answer altered must be refused, so the check
// cannot pass vacuously.
//
// OCC_TEST_LINEARIZABILITY_OPS sets the operations of each client (default
// 60; 8 clients on 2 names).
func TestReplicasLinearizable(t *testing.T) {
	t.Parallel()
	ops := 60
	if s := os.Getenv("OCC_TEST_LINEARIZABILITY_OPS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("OCC_TEST_LINEARIZABILITY_OPS=%q: want a positive number", s)
		}
		ops = n
	}
	const clients, names = 8, 2
	replicas := startReplicas(t, servertest.BuildOCC(t), storetest.URL(t, "postgres"), 3)
	ns := readyNamespace(t, replicas[0], "linear")
	h := &linHistory{start: time.Now(), coll: "/namespaces/" + ns + "/configurations"}
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() { h.client(replicas[c%len(replicas)], c, names, ops) })
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	began := time.Now()
	res, info := porcupine.CheckOperationsVerbose(registerModel, h.ops, time.Minute)
	t.Logf("%d operations (%v) on %d names through %d replicas: %s, checked in %v",
		len(h.ops), h.counts(), names, len(replicas), res, time.Since(began).Round(time.Millisecond))
	if res != porcupine.Ok {
		out := filepath.Join(t.TempDir(), "history.html")
		if err := porcupine.VisualizePath(registerModel, info, out); err == nil {
			t.Logf("visualization: %s", out)
		}
		t.Fatalf("the history is %s, want Ok", res)
	}
	if bad, ok := h.altered(); !ok {
		t.Fatal("the history has no successful read to alter")
	} else if res := porcupine.CheckOperationsTimeout(registerModel, bad, time.Minute); res != porcupine.Illegal {
		t.Fatalf("a history with one read altered is %s, want Illegal", res)
	}
	if n := h.count("patch-if-match", 412); n == 0 {
		t.Errorf("no If-Match PATCH lost a race (412): the clients did not conflict")
	}
	if n := h.count("patch-if-match", 200); n == 0 {
		t.Errorf("no If-Match PATCH succeeded")
	}
}

// startReplicas starts n occ processes on one database, sharing the
// secrets keyset (and the first one's bootstrap key).
func startReplicas(t *testing.T, bin, dbURL string, n int) []*servertest.OccProc {
	t.Helper()
	keyset := filepath.Join(t.TempDir(), "secrets.keyset")
	var out []*servertest.OccProc
	var key []byte
	for i := range n {
		w := &servertest.CrashWorld{T: t, Bin: bin, DbURL: dbURL, DataDir: gatewaytest.ReachableDir(t), LogDir: t.TempDir(),
			Env: []string{"OCC_SECRETS_KEYSET_FILE=" + keyset}}
		if i > 0 {
			if err := os.WriteFile(filepath.Join(w.DataDir, "bootstrap-admin.key"), key, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, w.Start())
		if i == 0 {
			key = []byte(out[0].Key + "\n")
		}
	}
	return out
}

// readyNamespace creates a Namespace and waits until it is ready.
func readyNamespace(t *testing.T, p *servertest.OccProc, name string) string {
	t.Helper()
	r := p.Must("POST", "/namespaces", map[string]any{"name": name})
	if r.Status != 201 {
		t.Fatalf("create namespace = %d %v", r.Status, r.Body)
	}
	id := r.Data()["id"].(string)
	deadline := time.Now().Add(60 * time.Second)
	for p.Must("GET", "/namespaces/"+id, nil).Data()["status"] != "ready" {
		if time.Now().After(deadline) {
			t.Fatal("namespace not ready")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return id
}

// linInput is one request: op on the Configuration named name (with id,
// the If-Match etag and the value written, where the op has them).
type linInput struct {
	op, name, id, etag, value string
}

// linOutput is what the client saw: the status, and the ID, value and
// ETag of the answer.
type linOutput struct {
	status          int
	id, value, etag string
}

// linState is one name's register: the Configuration that has it, or none.
type linState struct{ id, value, etag string }

var registerModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var names []string
		for _, op := range history {
			n := op.Input.(linInput).name
			if by[n] == nil {
				names = append(names, n)
			}
			by[n] = append(by[n], op)
		}
		var out [][]porcupine.Operation
		for _, n := range names {
			out = append(out, by[n])
		}
		return out
	},
	Init: func() any { return linState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(linState), input.(linInput), output.(linOutput)
		exists := s.id != "" && s.id == in.id
		switch in.op {
		case "create":
			if s.id == "" {
				return out.status == 201 && out.value == in.value, linState{out.id, in.value, out.etag}
			}
			return out.status == 409, s
		case "lookup":
			return out.status == 200 && out.id == s.id, s
		case "get":
			if exists {
				return out.status == 200 && out.value == s.value && out.etag == s.etag, s
			}
			return out.status == 404, s
		case "patch", "patch-if-match":
			switch {
			case !exists:
				return out.status == 404, s
			case in.etag != "" && in.etag != s.etag:
				return out.status == 412, s
			}
			return out.status == 200 && out.value == in.value, linState{s.id, in.value, out.etag}
		case "delete":
			if exists {
				return out.status == 204, linState{}
			}
			return out.status == 404, s
		}
		return false, s
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(linInput), output.(linOutput)
		return fmt.Sprintf("%s %s id=%s if-match=%s value=%s → %d id=%s value=%s etag=%s",
			in.op, in.name, in.id, in.etag, in.value, out.status, out.id, out.value, out.etag)
	},
}

// linHistory is every operation the clients made.
type linHistory struct {
	start time.Time
	coll  string
	mu    sync.Mutex
	ops   []porcupine.Operation
}

func (h *linHistory) now() int64 { return int64(time.Since(h.start)) }

// client runs ops random operations on the names through p, remembering
// the last ID and ETag it saw of each name.
func (h *linHistory) client(p *servertest.OccProc, c, names, ops int) {
	t := p.T
	ids, etags := map[string]string{}, map[string]string{}
	for i := range ops {
		name := fmt.Sprintf("lin-%d", rand.IntN(names))
		in := linInput{name: name, id: ids[name], etag: etags[name], value: fmt.Sprintf("openai/c%d-%d", c, i)}
		var method, path string
		var body any
		switch n := rand.IntN(20); {
		case in.id == "" && n < 10, n < 3:
			in.op, method, path = "create", "POST", h.coll
			body = map[string]any{"name": name, "kind": "agent", "values": model(in.value)}
		case in.id == "":
			in.op, method, path = "lookup", "GET", h.coll+"?pageSize=1000"
		case n < 8:
			in.op, method, path = "get", "GET", h.coll+"/"+in.id
		case n < 14:
			in.op, method, path = "patch-if-match", "PATCH", h.coll+"/"+in.id
			body = map[string]any{"values": model(in.value)}
		case n < 17:
			in.op, method, path, in.etag = "patch", "PATCH", h.coll+"/"+in.id, ""
			body = map[string]any{"values": model(in.value)}
		default:
			in.op, method, path = "delete", "DELETE", h.coll+"/"+in.id
		}
		if in.op != "patch-if-match" {
			in.etag = ""
		}
		if in.op == "create" || in.op == "lookup" {
			in.id = ""
		}
		call := h.now()
		r, err := p.DoIfMatch(method, path, body, in.etag)
		ret := h.now()
		if err != nil {
			t.Errorf("%s %s: %v", method, path, err)
			return
		}
		out := linOutput{status: r.Status, etag: r.Header.Get("ETag")}
		if d := r.Data(); d != nil {
			out.id, _ = d["id"].(string)
			out.value, _ = servertest.Dig(d, "values", "agents", "defaults", "model").(string)
		}
		if in.op == "lookup" {
			for _, it := range r.List() {
				if m := it.(map[string]any); m["name"] == name {
					out.id = m["id"].(string)
				}
			}
		}
		if r.Status >= 500 || r.Status == 400 || r.Status == 403 {
			t.Errorf("%s %s = %d %v", method, path, r.Status, r.Body)
			return
		}
		switch {
		case r.Status == 404 || in.op == "delete":
			delete(ids, name)
			delete(etags, name)
		case out.id != "" && out.etag != "":
			ids[name], etags[name] = out.id, out.etag
		case out.id != "":
			ids[name] = out.id
		}
		if in.op == "create" && r.Status == 409 || in.op == "patch-if-match" && r.Status == 412 {
			delete(etags, name) // read it again
			if r.Status == 409 {
				delete(ids, name)
			}
		}
		h.mu.Lock()
		h.ops = append(h.ops, porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: ret})
		h.mu.Unlock()
	}
}

// counts summarizes the history: op/status → how many.
func (h *linHistory) counts() map[string]int {
	out := map[string]int{}
	for _, op := range h.ops {
		out[fmt.Sprintf("%s/%d", op.Input.(linInput).op, op.Output.(linOutput).status)]++
	}
	return out
}

func (h *linHistory) count(op string, status int) int {
	return h.counts()[fmt.Sprintf("%s/%d", op, status)]
}

// altered returns a copy of the history whose last successful read
// answers a value never written.
func (h *linHistory) altered() ([]porcupine.Operation, bool) {
	bad := append([]porcupine.Operation(nil), h.ops...)
	for i := len(bad) - 1; i >= 0; i-- {
		if bad[i].Input.(linInput).op == "get" && bad[i].Output.(linOutput).status == 200 {
			out := bad[i].Output.(linOutput)
			out.value = "openai/never-written"
			bad[i].Output = out
			return bad, true
		}
	}
	return nil, false
}
