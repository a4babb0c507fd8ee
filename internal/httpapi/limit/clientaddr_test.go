package limit

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

// TestResolveClient: an untrusted peer is the client whatever its
// X-Forwarded-For says; a trusted peer's client is the right-most entry
// that is not a trusted proxy (all trusted: the left-most); a malformed
// entry on the way, or no header, leaves the peer.
func TestResolveClient(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8"),
		netip.MustParsePrefix("192.0.2.9/32")}
	for _, tt := range []struct {
		name    string
		peer    string
		xff     []string
		trusted []netip.Prefix
		want    string
	}{
		{"no trusted proxies: the peer", "10.0.0.1:4000", []string{"203.0.113.5"}, nil, "10.0.0.1"},
		{"untrusted peer with a spoofed header", "198.51.100.7:4000", []string{"203.0.113.5"}, trusted, "198.51.100.7"},
		{"untrusted peer with a trusted-looking header", "198.51.100.7:4000", []string{"10.0.0.2"}, trusted, "198.51.100.7"},
		{"trusted peer, one client", "10.0.0.1:4000", []string{"203.0.113.5"}, trusted, "203.0.113.5"},
		{"trusted peer, right-most untrusted wins", "10.0.0.1:4000", []string{"1.1.1.1, 203.0.113.5"}, trusted, "203.0.113.5"},
		{"chain of trusted proxies", "10.0.0.1:4000", []string{"1.1.1.1, 203.0.113.5, 192.0.2.9, 10.2.3.4"}, trusted, "203.0.113.5"},
		{"chain over several header lines", "10.0.0.1:4000", []string{"1.1.1.1, 203.0.113.5", "192.0.2.9", "10.2.3.4"}, trusted, "203.0.113.5"},
		{"every hop trusted: the left-most", "10.0.0.1:4000", []string{"10.9.9.9, 192.0.2.9"}, trusted, "10.9.9.9"},
		{"IPv6 peer and client", "[fd00::1]:4000", []string{"2001:db8::7, fd00::2"}, trusted, "2001:db8::7"},
		{"IPv6 peer, IPv4 client", "[fd00::1]:4000", []string{"203.0.113.5"}, trusted, "203.0.113.5"},
		{"IPv4-mapped peer and client", "[::ffff:10.0.0.1]:4000", []string{"::ffff:203.0.113.5"}, trusted, "203.0.113.5"},
		{"untrusted IPv6 peer", "[2001:db8::1]:4000", []string{"203.0.113.5"}, trusted, "2001:db8::1"},
		{"malformed entry", "10.0.0.1:4000", []string{"203.0.113.5, not-an-ip"}, trusted, "10.0.0.1"},
		{"entry with a port", "10.0.0.1:4000", []string{"203.0.113.5:1234"}, trusted, "10.0.0.1"},
		{"entry with a zone", "10.0.0.1:4000", []string{"fe80::1%eth0"}, trusted, "10.0.0.1"},
		{"empty entry", "10.0.0.1:4000", []string{"203.0.113.5, "}, trusted, "10.0.0.1"},
		{"malformed entry left of the client is not read", "10.0.0.1:4000", []string{"junk, 203.0.113.5"}, trusted, "203.0.113.5"},
		{"no header", "10.0.0.1:4000", nil, trusted, "10.0.0.1"},
		{"empty header", "10.0.0.1:4000", []string{""}, trusted, "10.0.0.1"},
		{"blank header", "10.0.0.1:4000", []string{"  "}, trusted, "10.0.0.1"},
		{"peer without a port", "10.0.0.1", []string{"203.0.113.5"}, trusted, "203.0.113.5"},
		{"peer that is no address", "@", []string{"203.0.113.5"}, trusted, "@"},
	} {
		if got := ResolveClient(tt.peer, tt.xff, tt.trusted); got != tt.want {
			t.Errorf("%s: ResolveClient(%q, %q) = %q, want %q", tt.name, tt.peer, tt.xff, got, tt.want)
		}
	}
}

// TestEdgeDecidesClientAddr: behind Edge, ClientAddr is the decided
// address; without Edge it is the peer, and the header is not read.
func TestEdgeDecidesClientAddr(t *testing.T) {
	var got string
	h := Edge(Rate{PerSecond: 1000, Burst: 1000}, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = ClientAddr(r) }))
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.0.0.1:4000"
	r.Header.Set("X-Forwarded-For", "203.0.113.5")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if got != "203.0.113.5" {
		t.Fatalf("behind Edge: %q, want 203.0.113.5", got)
	}
	if got := ClientAddr(r); got != "10.0.0.1" {
		t.Fatalf("without Edge: %q, want the peer 10.0.0.1", got)
	}
}
