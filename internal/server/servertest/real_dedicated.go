package servertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/cachetest"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
)

// runtimeWithCodex installs the pinned runtime with its Codex pieces into
// the runtime cache when missing and returns the cache.
func RuntimeWithCodex(t testing.TB) string {
	cache := cachetest.Runtime(t)
	began := time.Now()
	progress := LineLogger(t)
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
func (w *RealWorld) CodexConnected(agent, rev, log, workloadCheck string) {
	w.WaitUntil("the gateway's codex plugin connected to the app-server", 5*time.Minute, func() bool {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), "codex app-server remote WebSocket connection is healthy")
	})
	got := Verdicts(w.T, w.E.Call("POST", w.Path("/agents/"+agent+"/deployments/"+rev+"/diagnostics"), w.E.Admin, nil), rev)
	for _, k := range []string{workloadCheck, "harness/login", "harness/app-server", "gateway/readyz"} {
		if got[k] != "succeeded OK" {
			w.T.Errorf("diagnostics %s = %q (all: %v)", k, got[k], got)
		}
	}
}

// newDedicatedAgent creates a dedicated api_key Agent whose key is a new
// Secret holding key, its primary model openai/gpt-5.4 at baseURL, its
// principal allowed to read the Secret; it returns the Agent's ID.
func (w *RealWorld) NewDedicatedAgent(name, key, baseURL string) (agent string) {
	t, e := w.T, w.E
	r := e.Call("POST", w.Path("/secrets"), e.Admin, map[string]any{"name": name + "-key", "value": key})
	if r.Status != 201 {
		t.Fatalf("create secret = %d %v", r.Status, r.Body)
	}
	w.Secret = r.Data()["id"].(string)
	r = e.Call("POST", w.Path("/configurations"), e.Admin, map[string]any{"name": name, "kind": "agent", "values": map[string]any{
		"models": map[string]any{"providers": map[string]any{"openai": map[string]any{"baseUrl": baseURL}}},
		"agents": map[string]any{"defaults": map[string]any{"model": map[string]any{"primary": "openai/gpt-5.4"}}},
	}})
	if r.Status != 201 {
		t.Fatalf("create configuration = %d %v", r.Status, r.Body)
	}
	return w.createAgent(name, map[string]any{"name": name, "configurationId": r.Data()["id"], "executionMode": "dedicated",
		"harnessAuth": map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "id": w.Secret}}})
}

// responsesProvider is a fake OpenAI Responses API: keys starting
// "sk-good-" are accepted, others get 401; a WebSocket upgrade of
// /v1/responses (which the Codex CLI tries first) is refused, so that it
// falls back to HTTP.
type ResponsesProvider struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

// startResponsesProviderOn is startResponsesProvider listening on addr
// (a container's way to the host: the bridge's address).
func StartResponsesProviderOn(t *testing.T, addr string) *ResponsesProvider {
	p := &ResponsesProvider{}
	p.Server = gatewaytest.ServeOn(t, addr, http.HandlerFunc(p.serve))
	return p
}

func (p *ResponsesProvider) serve(w http.ResponseWriter, r *http.Request) {
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

func (p *ResponsesProvider) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// count returns how many requests carried the key.
func (p *ResponsesProvider) Count(key string) int {
	n := 0
	for _, r := range p.Requests() {
		if strings.HasSuffix(r, "Bearer "+key) {
			n++
		}
	}
	return n
}
