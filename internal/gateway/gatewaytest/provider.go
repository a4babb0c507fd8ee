package gatewaytest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Provider is a minimal OpenAI-compatible model provider on loopback:
// POST /v1/chat/completions answers a one-word completion (streamed when
// asked) to "Authorization: Bearer sk-good" and 401 to anything else;
// GET /v1/models lists m1.
type Provider struct {
	*httptest.Server
	mu   sync.Mutex
	seen []ProviderRequest
}

// ProviderRequest is one request the fake provider answered.
type ProviderRequest struct {
	At   time.Time
	Line string // "METHOD PATH AUTHORIZATION [stream] → STATUS"
}

// StartProvider starts the fake provider listening on addr (127.0.0.1:0,
// or an address of a bridge a container reaches), closed when the test
// ends.
func StartProvider(t testing.TB, addr string) *Provider {
	p := &Provider{}
	p.Server = ServeOn(t, addr, http.HandlerFunc(p.serve))
	return p
}

// ServeOn starts a test server of h listening on addr (a fixed address,
// such as a bridge's, that httptest does not offer), closed when the test
// ends.
func ServeOn(t testing.TB, addr string, h http.Handler) *httptest.Server {
	s := httptest.NewUnstartedServer(h)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("test server: listen on %s: %v", addr, err)
	}
	s.Listener.Close()
	s.Listener = l
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (p *Provider) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	_ = json.Unmarshal(body, &req)
	auth := r.Header.Get("Authorization")
	line := r.Method + " " + r.URL.Path + " " + auth
	if req.Stream {
		line += " stream"
	}
	status := http.StatusOK
	defer func() {
		p.mu.Lock()
		p.seen = append(p.seen, ProviderRequest{At: time.Now(), Line: line + " → " + strconv.Itoa(status)})
		p.mu.Unlock()
	}()

	if auth != "Bearer sk-good" {
		status = http.StatusUnauthorized
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)
		return
	}
	model := req.Model
	if model == "" {
		model = "m1"
	}
	now := time.Now().Unix()
	switch {
	case r.Method == "GET" && r.URL.Path == "/v1/models":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"m1","object":"model","created":0,"owned_by":"fakeprov"}]}`)
	case r.Method == "POST" && r.URL.Path == "/v1/chat/completions" && req.Stream:
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta map[string]any, finish any, usage any) {
			c := map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": now, "model": model,
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
			if usage != nil {
				c["usage"] = usage
			}
			b, _ := json.Marshal(c)
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
		chunk(map[string]any{"role": "assistant", "content": "ok"}, nil, nil)
		chunk(map[string]any{}, "stop", map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2})
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	case r.Method == "POST" && r.URL.Path == "/v1/chat/completions":
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "created": now, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": "ok"}, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
		_, _ = w.Write(b)
	default:
		status = http.StatusNotFound
		http.NotFound(w, r)
	}
}

// Requests are the requests answered so far, in order.
func (p *Provider) Requests() []ProviderRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ProviderRequest(nil), p.seen...)
}

func (r ProviderRequest) String() string { return r.At.Format("15:04:05.000") + " " + r.Line }

// Count is how many requests carried the Authorization value.
func (p *Provider) Count(auth string) int {
	n := 0
	for _, r := range p.Requests() {
		if strings.Contains(r.Line, " "+auth+" ") {
			n++
		}
	}
	return n
}
