// Package backendstest is a fake Backend for tests: an HTTP server that
// speaks occ's side of the Backend contract (package backends) and can be
// told to fail in each way the contract names.
package backendstest

import (
	"cmp"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openclaw/occ/internal/backends"
	"github.com/openclaw/occ/internal/occ"
)

// Mode is how the fake answers the next requests.
type Mode int

// Modes.
const (
	OK        Mode = iota // 201 with a fresh canary credential
	Fail                  // 500
	Reject                // 401
	Slow                  // never answers (until the caller gives up)
	Oversized             // 200 with a body larger than 4 MiB
	Malformed             // 200 with a body that is not the contract's object
)

// Request is one request the fake received.
type Request struct {
	Path           string
	IdempotencyKey string
	Body           map[string]any
}

// Server is the fake Backend.
type Server struct {
	*httptest.Server
	// Canary starts every credential the fake issues: tests search for it
	// in responses, logs and the database.
	Canary string

	mu       sync.Mutex
	mode     Mode
	kind     string // of the next credentials; "" = access_token
	requests []Request
	issued   int
	done     chan struct{}
}

// SetKind sets the kind of the credentials issued next (access_token,
// api_key or oauth_access_token).
func (s *Server) SetKind(kind string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kind = kind
}

func (s *Server) issuing() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kind
}

// New starts a fake Backend, closed when the test ends.
func New(t testing.TB) *Server {
	s := &Server{Canary: "canary-credential-" + strings.ReplaceAll(occ.NewUUID(), "-", ""), done: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(s.done) }) // runs first: frees slow handlers
	return s
}

// Backend returns a chatgpt Backend with this fake's URL.
func (s *Server) Backend(id string) backends.Backend {
	return backends.Backend{ID: id, Type: backends.TypeChatGPT, URL: s.URL}
}

// SetMode changes how the fake answers.
func (s *Server) SetMode(m Mode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode = m
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Issued counts the credentials the fake issued.
func (s *Server) Issued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, IdempotencyKey: r.Header.Get("Idempotency-Key"), Body: body})
	mode := s.mode
	if mode == OK && r.Method == http.MethodPost && r.URL.Path == "/v1/service-accounts/credentials" {
		s.issued++
	}
	s.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/service-accounts/credentials" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch mode {
	case OK:
		w.WriteHeader(http.StatusCreated)
		kind := cmp.Or(s.issuing(), "access_token")
		_ = json.NewEncoder(w).Encode(map[string]any{"credential": s.Canary + "-" + occ.NewUUID(), "kind": kind,
			"expiresAt": "2030-01-02T03:04:05Z"})
	case Fail:
		http.Error(w, `{"error":"boom `+s.Canary+`"}`, http.StatusInternalServerError)
	case Reject:
		http.Error(w, `{"error":"unknown workspace `+s.Canary+`"}`, http.StatusUnauthorized)
	case Slow:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
	case Oversized:
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"credential":"` + s.Canary + strings.Repeat("x", 4<<20) + `","kind":"access_token"}`))
	case Malformed:
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"credential": 42, "note": "` + s.Canary + `"}`))
	}
}
