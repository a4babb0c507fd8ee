package limit

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// ResolveClient decides the client address of a connection from its peer
// (host:port), the values of its X-Forwarded-For headers and the trusted
// proxies (http.trustedProxies). A peer outside every trusted prefix is
// the client, whatever the header says. A trusted peer forwarded for the
// right-most header entry that is not itself trusted (walking from the
// right past trusted proxies); when every entry is trusted, the left-most.
// A header absent or empty, or a malformed entry met on the walk, leaves
// the peer. The address is canonical: IPv4-mapped IPv6 as IPv4, no zone. A
// peer that is no IP address (not a TCP connection) is returned as is.
func ResolveClient(peer string, forwardedFor []string, trusted []netip.Prefix) string {
	host, _, err := net.SplitHostPort(peer)
	if err != nil {
		host = peer
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = canonical(ip)
	if !isTrusted(ip, trusted) {
		return ip.String()
	}
	var hops []string
	for _, v := range forwardedFor {
		hops = append(hops, strings.Split(v, ",")...)
	}
	if len(hops) == 1 && strings.TrimSpace(hops[0]) == "" {
		return ip.String()
	}
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil || hop.Zone() != "" {
			return ip.String()
		}
		hop = canonical(hop)
		if i == 0 || !isTrusted(hop, trusted) {
			return hop.String()
		}
	}
	return ip.String()
}

func canonical(ip netip.Addr) netip.Addr { return ip.Unmap().WithZone("") }

func isTrusted(ip netip.Addr, trusted []netip.Prefix) bool {
	return slices.ContainsFunc(trusted, func(p netip.Prefix) bool { return p.Contains(ip) })
}

type clientAddrKey struct{}

// ClientAddr is the client address of a request: the one Edge decided
// (ResolveClient), or, for a request that did not pass Edge, the peer.
// Every user of a client address (rate limits, sign-in limits, the
// X-Forwarded-For occ sends to gateways) takes it from here.
func ClientAddr(r *http.Request) string {
	if s, ok := r.Context().Value(clientAddrKey{}).(string); ok {
		return s
	}
	return ResolveClient(r.RemoteAddr, nil, nil)
}

// withClientAddr decides the client address of r and keeps it in r's
// context.
func withClientAddr(r *http.Request, trusted []netip.Prefix) *http.Request {
	addr := ResolveClient(r.RemoteAddr, r.Header.Values("X-Forwarded-For"), trusted)
	return r.WithContext(context.WithValue(r.Context(), clientAddrKey{}, addr))
}
