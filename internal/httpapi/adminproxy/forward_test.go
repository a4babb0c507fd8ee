package adminproxy

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/openclaw/occ/internal/httpapi/limit"
)

// TestForwardedForIsTheDecidedClient: the X-Forwarded-For occ sends to a
// gateway names the client address limit.Edge decided (behind a trusted
// proxy, the client it forwarded for), never the browser's own header;
// loopback becomes fallbackClient.
func TestForwardedForIsTheDecidedClient(t *testing.T) {
	p := New(Options{PublicOrigin: "https://occ.example.com"})
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tt := range []struct{ peer, xff, want string }{
		{"10.0.0.1:4000", "203.0.113.5, 10.0.0.9", "203.0.113.5"}, // trusted proxy
		{"198.51.100.7:4000", "203.0.113.5", "198.51.100.7"},      // untrusted peer: header ignored
		{"[2001:db8::1]:4000", "", "2001:db8::1"},                 // no header
		{"127.0.0.1:4000", "203.0.113.5", fallbackClient},         // loopback, untrusted
		{"10.0.0.1:4000", "127.0.0.1", fallbackClient},            // a trusted proxy forwarding for loopback
	} {
		var out http.Header
		h := limit.Edge(limit.Rate{PerSecond: 1000, Burst: 1000}, trusted, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			out = r.Header.Clone()
			p.stripRequest(out, r, "occ-identity")
		}))
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tt.peer
		if tt.xff != "" {
			r.Header.Set("X-Forwarded-For", tt.xff)
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
		if got := out.Values("X-Forwarded-For"); len(got) != 1 || got[0] != tt.want {
			t.Errorf("peer %s, X-Forwarded-For %q: the gateway gets %q, want %q", tt.peer, tt.xff, got, tt.want)
		}
	}
}
