// Package credgatewaytest is a fake Credential Gateway for tests: an HTTP
// server that speaks occ's side of the gateway contract (package
// credgateway), remembers what is registered and can be told to fail.
//
// It also delivers (deliver.go): a delivery of a registered source gets a
// placeholder "cgw-<hex>" and the base URL <server>/relay/v1. The relay
// answers POST /relay/v1/responses for a known placeholder as a provider
// would answer the source's real credential (its first Secret by field
// name): one containing "rejected" gets 401, "forbidden" 403, "broken"
// 500, "slow" no answer; any other 200. An unknown placeholder gets 401.
package credgatewaytest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openclaw/occ/internal/credgateway"
)

// Mode is how the fake answers the next requests.
type Mode int

// Modes.
const (
	OK     Mode = iota // registers and removes
	Fail               // 500
	Reject             // 422
	Slow               // never answers (until the caller gives up)
	// RefuseCredential answers deliveries 403 (the gateway refuses the
	// source's credential); registrations still succeed.
	RefuseCredential
)

// Server is the fake gateway.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	mode     Mode
	sources  map[string]credgateway.Registration
	removed  []string
	requests int
	// placeholders maps each delivered placeholder to what it was
	// delivered for.
	placeholders map[string]delivered
	deliveries   []credgateway.DeliveryRequest
	relayed      []string
	done         chan struct{}
}

// New starts a fake gateway, closed when the test ends.
func New(t testing.TB) *Server {
	s := &Server{sources: map[string]credgateway.Registration{}, placeholders: map[string]delivered{}, done: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(s.done) }) // runs first: frees slow handlers
	return s
}

// SetMode changes how the fake answers.
func (s *Server) SetMode(m Mode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode = m
}

// Source returns what is registered under id.
func (s *Server) Source(id string) (credgateway.Registration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.sources[id]
	return r, ok
}

// Removed lists the IDs removed so far, in order.
func (s *Server) Removed() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.removed...)
}

// Requests counts the requests received.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == relayPath+"/responses" {
		s.relay(w, r)
		return
	}
	id, ok := strings.CutPrefix(r.URL.Path, "/v1/credential-sources/")
	s.mu.Lock()
	s.requests++
	mode := s.mode
	s.mu.Unlock()
	if src, found := strings.CutSuffix(id, "/deliveries"); ok && found && r.Method == http.MethodPost {
		s.deliver(w, r, src, mode)
		return
	}
	if !ok || id == "" || strings.Contains(id, "/") {
		http.NotFound(w, r)
		return
	}
	switch mode {
	case RefuseCredential:
	case Fail:
		http.Error(w, "gateway broken", http.StatusInternalServerError)
		return
	case Reject:
		http.Error(w, "unknown source type", http.StatusUnprocessableEntity)
		return
	case Slow:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return
	}
	switch r.Method {
	case http.MethodPut:
		var reg credgateway.Registration
		if err := json.NewDecoder(r.Body).Decode(&reg); err != nil || reg.ID != id {
			http.Error(w, "bad registration", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.sources[id] = reg
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case http.MethodDelete:
		s.mu.Lock()
		_, known := s.sources[id]
		delete(s.sources, id)
		s.removed = append(s.removed, id)
		s.mu.Unlock()
		if !known {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}
