package limit

import (
	"net"
	"net/http"
	"net/netip"

	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/httpapi/contract"
	"github.com/openclaw/occ/internal/occ"
)

// Edge runs before anything else, authentication included, so that a flood
// costs no database work: it counts every request against its client
// address's bucket of rate perClient (unset, the config default) and
// answers 429 RATE_LIMITED when it is empty. The client address is the
// connection's peer; forwarded headers are not trusted.
func Edge(perClient Rate, next http.Handler) http.Handler {
	if perClient.PerSecond <= 0 || perClient.Burst <= 0 {
		d := config.Defaults().Limits
		perClient = Rate{PerSecond: d.RequestsPerSecondPerClient, Burst: d.BurstPerClient}
	}
	clients := NewBuckets(perClient)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok, wait := clients.Take(ClientKey(r.RemoteAddr)); !ok {
			contract.WriteError(w, r, occ.RateLimited(occ.MsgRateLimitedClient, wait))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ClientKey is the rate-limit key of a peer address (host:port): the IP
// address, IPv4-mapped IPv6 as IPv4, and an IPv6 address by its /64 (one
// site's prefix, which a single client can fill with addresses).
func ClientKey(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	return netip.PrefixFrom(ip, 64).Masked().String()
}
