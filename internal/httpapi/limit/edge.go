package limit

import (
	"net/http"
	"net/netip"

	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/httpapi/contract"
	"github.com/openclaw/occ/internal/occ"
)

// Edge runs before anything else, authentication included, so that a flood
// costs no database work: it counts every request against its client
// address's bucket of rate perClient (unset, the config default) and
// answers 429 RATE_LIMITED when it is empty. The client address is decided
// here, once, by ResolveClient with the trusted proxies (none: the
// connection's peer), and kept for ClientAddr.
func Edge(perClient Rate, trusted []netip.Prefix, next http.Handler) http.Handler {
	if perClient.PerSecond <= 0 || perClient.Burst <= 0 {
		d := config.Defaults().Limits
		perClient = Rate{PerSecond: d.RequestsPerSecondPerClient, Burst: d.BurstPerClient}
	}
	clients := NewBuckets(perClient)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = withClientAddr(r, trusted)
		if ok, wait := clients.Take(ClientKey(ClientAddr(r))); !ok {
			contract.WriteError(w, r, occ.RateLimited(occ.MsgRateLimitedClient, wait))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ClientKey is the rate-limit key of a client address (ClientAddr): the IP
// address, IPv4-mapped IPv6 as IPv4, and an IPv6 address by its /64 (one
// site's prefix, which a single client can fill with addresses).
func ClientKey(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	ip = canonical(ip)
	if ip.Is4() {
		return ip.String()
	}
	return netip.PrefixFrom(ip, 64).Masked().String()
}
