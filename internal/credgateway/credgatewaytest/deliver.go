package credgatewaytest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/openclaw/occ/internal/credgateway"
)

// relayPath is the base path of the fake's model relay.
const relayPath = "/relay/v1"

// delivered is what a placeholder was delivered for.
type delivered struct{ source, revision string }

// Deliveries lists the delivery requests answered with a placeholder (the
// same revision asking again gets the same one).
func (s *Server) Deliveries() []credgateway.DeliveryRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]credgateway.DeliveryRequest(nil), s.deliveries...)
}

// Relayed lists the sources whose credential the relay inserted, one per
// model request, in order.
func (s *Server) Relayed() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.relayed...)
}

func (s *Server) deliver(w http.ResponseWriter, r *http.Request, id string, mode Mode) {
	switch mode {
	case Fail:
		http.Error(w, "gateway broken", http.StatusInternalServerError)
		return
	case Reject:
		http.Error(w, "bad delivery", http.StatusUnprocessableEntity)
		return
	case RefuseCredential:
		http.Error(w, "the source's credential is refused", http.StatusForbidden)
		return
	case Slow:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return
	}
	var req credgateway.DeliveryRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "bad delivery", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	_, known := s.sources[id]
	placeholder := ""
	if known {
		// The same revision gets the same placeholder.
		for p, d := range s.placeholders {
			if d.source == id && d.revision == req.RevisionID {
				placeholder = p
			}
		}
		if placeholder == "" {
			var b [16]byte
			_, _ = rand.Read(b[:])
			placeholder = "cgw-" + hex.EncodeToString(b[:])
			s.placeholders[placeholder] = delivered{source: id, revision: req.RevisionID}
		}
		s.deliveries = append(s.deliveries, req)
	}
	s.mu.Unlock()
	if !known {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"baseUrl": s.URL + relayPath, "credential": placeholder, "loginMode": credgateway.LoginAPIKey})
}

// relay plays the provider for the source's real credential.
func (s *Server) relay(w http.ResponseWriter, r *http.Request) {
	placeholder, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	d, ok := s.placeholders[placeholder]
	id := d.source
	reg := s.sources[id]
	if ok {
		s.relayed = append(s.relayed, id)
	}
	s.mu.Unlock()
	if !ok {
		http.Error(w, "unknown placeholder", http.StatusUnauthorized)
		return
	}
	fields := make([]string, 0, len(reg.Secrets))
	for f := range reg.Secrets {
		fields = append(fields, f)
	}
	slices.Sort(fields)
	real := ""
	if len(fields) > 0 {
		real = reg.Secrets[fields[0]].Value
	}
	switch {
	case strings.Contains(real, "slow"):
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
	case real == "" || strings.Contains(real, "rejected"):
		http.Error(w, "Incorrect API key provided.", http.StatusUnauthorized)
	case strings.Contains(real, "forbidden"):
		http.Error(w, "forbidden", http.StatusForbidden)
	case strings.Contains(real, "broken"):
		http.Error(w, "boom", http.StatusInternalServerError)
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"completed","output_text":"OK"}` + "\n"))
	}
}
