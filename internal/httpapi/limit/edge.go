package limit

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/httpapi/contract"
	"github.com/openclaw/occ/internal/occ"
)

// Options configure Edge; an unset one takes its config default.
type Options struct {
	// PerClient is the rate of one client address.
	PerClient Rate
	// MaxInFlight caps the requests being handled at once.
	MaxInFlight int
}

func (o *Options) fill() {
	d := config.Defaults().Limits
	if o.PerClient.PerSecond <= 0 || o.PerClient.Burst <= 0 {
		o.PerClient = Rate{PerSecond: d.RequestsPerSecondPerClient, Burst: d.BurstPerClient}
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = d.MaxInFlight
	}
}

// busyRetry is the Retry-After of a request refused by the in-flight cap:
// slots free up as fast as requests finish.
const busyRetry = time.Second

// Edge runs before anything else, authentication included, so that a flood
// costs no database work: it counts the request against its client
// address's bucket (429 RATE_LIMITED when empty), then takes a slot among
// the requests in flight (429 RATE_LIMITED when none is free) and holds it
// until next returns or the request calls Streaming. The client address is
// the connection's peer; forwarded headers are not trusted.
func Edge(o Options, next http.Handler) http.Handler {
	o.fill()
	clients := NewBuckets(o.PerClient)
	slots := semaphore.NewWeighted(int64(o.MaxInFlight))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok, wait := clients.Take(ClientKey(r.RemoteAddr)); !ok {
			contract.WriteError(w, r, occ.RateLimited(occ.MsgRateLimitedClient, wait))
			return
		}
		if !slots.TryAcquire(1) {
			contract.WriteError(w, r, occ.RateLimited(occ.MsgServerBusy, busyRetry))
			return
		}
		s := &slot{release: func() { slots.Release(1) }}
		defer s.free()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), slotKey{}, s)))
	})
}

// slot is one request's place among the requests in flight.
type slot struct {
	once    sync.Once
	release func()
}

func (s *slot) free() { s.once.Do(s.release) }

type slotKey struct{}

// Streaming gives back the in-flight slot of a request that has become a
// long-lived stream (Server-Sent Events, a relayed WebSocket): it then waits
// on its client, not on occ, and is bounded by limits.maxConnections and
// its own write deadlines instead. Outside Edge it does nothing.
func Streaming(ctx context.Context) {
	if s, ok := ctx.Value(slotKey{}).(*slot); ok {
		s.free()
	}
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
