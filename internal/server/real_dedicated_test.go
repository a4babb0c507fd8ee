package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/cachetest"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestRealDedicatedCodexLane is the real lane of dedicated Codex: the
// pinned runtime with its Codex pieces (installed once per machine into the
// runtime cache), the real local driver, and a fake OpenAI Responses API on
// loopback. Through the HTTP API it deploys a dedicated api_key Agent: the
// real Codex CLI logs in with the key and probes the model against the
// fake provider, the real app-server listens with a capability token, the
// real gateway installs the official codex plugin and connects to it; the
// deployment succeeds, and neither the gateway's environment nor its
// openclaw.json holds the key. A second Agent whose key the provider
// rejects fails with RUNTIME_AUTHENTICATION_FAILED before any gateway
// starts. It asserts no timing; it logs how long the deploy took.
func TestRealDedicatedCodexLane(t *testing.T) {
	t.Parallel()
	cache := runtimeWithCodex(t)

	prov := startResponsesProvider(t)
	events := &eventLog{min: slog.LevelDebug}
	root := gatewaytest.ReachableDir(t)
	ld, err := local.Open(local.Options{Root: root, Command: local.InstalledRuntime(cache), Harness: local.InstalledHarness(cache, nil),
		UIDRange: gatewayUIDs(t), Logger: slog.New(events)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopEveryAgent(t, ld, root, events) })
	drv := &timedDriver{Driver: ld}
	e := boot(t, storetest.URL(t, "sqlite"), drv, func(m *server.Main) {
		m.Config.Worker.ConvergenceTimeout = config.Duration(15 * time.Minute)
	})
	ns := e.createNamespace("real-dedicated")
	w := &realWorld{t: t, e: e, ns: ns, drv: drv, events: events}

	newDedicated := func(name, key string) string { return w.newDedicatedAgent(name, key, prov.URL+"/v1") }

	t.Run("api-key-succeeds", func(t *testing.T) {
		w := w.withT(t)
		key := "sk-good-" + randomHex(8)
		agent := newDedicated("codex", key)
		ref := compute.AgentRef{NamespaceID: ns, AgentID: agent}
		dir := drv.AgentDir(ref)
		requested := time.Now()
		rev, _ := w.deploy(agent)
		st, at := w.waitDeployment(agent, rev, 15*time.Minute)
		if st["status"] != "succeeded" {
			dumpDedicated(t, dir)
			t.Fatalf("dedicated deployment = %v; provider saw %v", st, prov.requests())
		}
		t.Logf("dedicated deploy: succeeded %s after the request", at.Sub(requested).Round(time.Millisecond))
		if prov.count(key) == 0 {
			t.Fatalf("the provider never saw the harness's key: %v", prov.requests())
		}
		gws := processesWithEnv(t, "OPENCLAW_STATE_DIR="+filepath.Join(dir, "state"))
		if len(gws) == 0 {
			t.Fatal("no gateway process after success")
		}
		for _, pid := range gws {
			env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
			if err != nil {
				continue // a child that ended meanwhile
			}
			if strings.Contains(string(env), key) {
				t.Fatalf("gateway process %d holds the model key in its environment", pid)
			}
		}
		if b, err := os.ReadFile(filepath.Join(dir, gateway.ConfigFileName)); err != nil || strings.Contains(string(b), key) {
			t.Fatalf("openclaw.json: %v, or it holds the model key", err)
		}
		if os.Geteuid() == 0 {
			// The real Codex ran as a second user of the Agent: its login
			// is that user's, not the gateway's.
			var login, gw syscall.Stat_t
			if err := syscall.Stat(filepath.Join(dir, "harness", "codex", "auth.json"), &login); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Stat(fmt.Sprintf("/proc/%d", gws[0]), &gw); err != nil {
				t.Fatal(err)
			}
			if login.Uid == 0 || login.Uid == gw.Uid || login.Mode&0o077 != 0 {
				t.Fatalf("the harness's auth.json is uid %d mode %o; the gateway runs as %d: want a user of its own, 0600", login.Uid, login.Mode&0o777, gw.Uid)
			}
		}
		w.codexConnected(agent, rev, filepath.Join(dir, "console.log"), "harness/process")
	})

	t.Run("rejected-key-fails-authentication", func(t *testing.T) {
		w := w.withT(t)
		agent := newDedicated("codex-bad", "sk-bad-"+randomHex(8))
		ref := compute.AgentRef{NamespaceID: ns, AgentID: agent}
		dir := drv.AgentDir(ref)
		rev, _ := w.deploy(agent)
		st, _ := w.waitDeployment(agent, rev, 10*time.Minute)
		er, _ := st["error"].(map[string]any)
		if st["status"] != "failed" || er["code"] != "RUNTIME_AUTHENTICATION_FAILED" {
			dumpDedicated(t, dir)
			t.Fatalf("dedicated deployment with a rejected key = %v; provider saw %v", st, prov.requests())
		}
		if pids := processesWithEnv(t, "OPENCLAW_STATE_DIR="+filepath.Join(dir, "state")); len(pids) != 0 {
			t.Fatalf("a gateway runs (%v) although its harness was rejected", pids)
		}
	})
}

// runtimeWithCodex installs the pinned runtime with its Codex pieces into
// the runtime cache when missing and returns the cache.
func runtimeWithCodex(t *testing.T) string {
	cache := cachetest.Runtime(t)
	began := time.Now()
	progress := lineLogger(t)
	rt, err := agentruntime.Install(t.Context(), agentruntime.Options{Dir: cache, Progress: progress})
	if err != nil {
		t.Fatalf("install the pinned runtime into %s: %v", cache, err)
	}
	if _, err := agentruntime.InstallCodex(t.Context(), agentruntime.Options{Dir: cache, Progress: progress}, rt); err != nil {
		t.Fatalf("install the Codex pieces into %s: %v", cache, err)
	}
	t.Logf("runtime with Codex ready in %s", time.Since(began).Round(time.Millisecond))
	return cache
}

// codexConnected waits until the real codex plugin reached the real
// app-server with the per-startup token (the gateway logs it once
// connected, in log) and checks the revision's fresh diagnostics: the
// harness's (its workload check, login, app-server) and the gateway's
// readyz all OK.
func (w *realWorld) codexConnected(agent, rev, log, workloadCheck string) {
	w.waitUntil("the gateway's codex plugin connected to the app-server", 5*time.Minute, func() bool {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), "codex app-server remote WebSocket connection is healthy")
	})
	got := verdicts(w.t, w.e.call("POST", w.path("/agents/"+agent+"/deployments/"+rev+"/diagnostics"), w.e.admin, nil), rev)
	for _, k := range []string{workloadCheck, "harness/login", "harness/app-server", "gateway/readyz"} {
		if got[k] != "succeeded OK" {
			w.t.Errorf("diagnostics %s = %q (all: %v)", k, got[k], got)
		}
	}
}

// newDedicatedAgent creates a dedicated api_key Agent whose key is a new
// Secret holding key, its primary model openai/gpt-5.4 at baseURL, its
// principal allowed to read the Secret; it returns the Agent's ID.
func (w *realWorld) newDedicatedAgent(name, key, baseURL string) (agent string) {
	t, e := w.t, w.e
	r := e.call("POST", w.path("/secrets"), e.admin, map[string]any{"name": name + "-key", "value": key})
	if r.Status != 201 {
		t.Fatalf("create secret = %d %v", r.Status, r.Body)
	}
	w.secret = r.data()["id"].(string)
	r = e.call("POST", w.path("/configurations"), e.admin, map[string]any{"name": name, "kind": "agent", "values": map[string]any{
		"models": map[string]any{"providers": map[string]any{"openai": map[string]any{"baseUrl": baseURL}}},
		"agents": map[string]any{"defaults": map[string]any{"model": map[string]any{"primary": "openai/gpt-5.4"}}},
	}})
	if r.Status != 201 {
		t.Fatalf("create configuration = %d %v", r.Status, r.Body)
	}
	return w.createAgent(name, map[string]any{"name": name, "configurationId": r.data()["id"], "executionMode": "dedicated",
		"harnessAuth": map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "id": w.secret}}})
}

func dumpDedicated(t *testing.T, dir string) {
	for _, name := range []string{"run.json", "harness.log", "console.log", "console.prev.log"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		if len(b) > 8000 {
			b = b[len(b)-8000:]
		}
		t.Logf("%s:\n%s", name, b)
	}
}

// responsesProvider is a fake OpenAI Responses API: keys starting
// "sk-good-" are accepted, others get 401; a WebSocket upgrade of
// /v1/responses (which the Codex CLI tries first) is refused, so that it
// falls back to HTTP.
type responsesProvider struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func startResponsesProvider(t *testing.T) *responsesProvider {
	return startResponsesProviderOn(t, "127.0.0.1:0")
}

// startResponsesProviderOn is startResponsesProvider listening on addr
// (a container's way to the host: the bridge's address).
func startResponsesProviderOn(t *testing.T, addr string) *responsesProvider {
	p := &responsesProvider{}
	p.Server = gatewaytest.ServeOn(t, addr, http.HandlerFunc(p.serve))
	return p
}

func (p *responsesProvider) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 4<<20))
	auth := r.Header.Get("Authorization")
	p.mu.Lock()
	p.seen = append(p.seen, r.Method+" "+r.URL.Path+" "+auth)
	p.mu.Unlock()
	if !strings.HasPrefix(auth, "Bearer sk-good-") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)
		return
	}
	switch {
	case r.URL.Path == "/v1/models":
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"gpt-5.4","object":"model","created":0,"owned_by":"fake"}]}`)
	case r.URL.Path == "/v1/responses" && r.Method == http.MethodGet:
		http.Error(w, "no websocket here", http.StatusUpgradeRequired)
	case r.URL.Path == "/v1/responses" && r.Method == http.MethodPost:
		w.Header().Set("Content-Type", "text/event-stream")
		event := func(v map[string]any) {
			b, _ := json.Marshal(v)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], b)
		}
		item := map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": "OK", "annotations": []any{}}}}
		event(map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_1", "object": "response", "status": "in_progress", "output": []any{}}})
		event(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
		event(map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_1", "object": "response", "status": "completed",
			"output": []any{item}, "usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
				"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}}})
	default:
		http.NotFound(w, r)
	}
}

func (p *responsesProvider) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// count returns how many requests carried the key.
func (p *responsesProvider) count(key string) int {
	n := 0
	for _, r := range p.requests() {
		if strings.HasSuffix(r, "Bearer "+key) {
			n++
		}
	}
	return n
}
