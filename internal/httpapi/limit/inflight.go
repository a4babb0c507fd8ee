package limit

import (
	"context"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/httpapi/contract"
	"github.com/openclaw/occ/internal/occ"
)

// busyRetry is the Retry-After of a request refused by the in-flight cap:
// slots free up as fast as requests finish.
const busyRetry = time.Second

// InFlight caps the requests occ works on at once at max (unset, the config
// default): it takes a slot before next runs and holds it until next
// returns or the request calls Streaming; with no slot free it answers 429
// RATE_LIMITED with Retry-After 1. It belongs after the request body has
// been read, so that clients who are slow to send (or stall) wait on their
// connection, bounded by the read timeout, without holding a slot.
func InFlight(max int) func(http.Handler) http.Handler {
	if max <= 0 {
		max = config.Defaults().Limits.MaxInFlight
	}
	slots := semaphore.NewWeighted(int64(max))
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !slots.TryAcquire(1) {
				contract.WriteError(w, r, occ.RateLimited(occ.MsgServerBusy, busyRetry))
				return
			}
			s := &slot{release: func() { slots.Release(1) }}
			defer s.free()
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), slotKey{}, s)))
		})
	}
}

// slot is one request's place among the requests in flight.
type slot struct {
	once    sync.Once
	release func()
}

func (s *slot) free() { s.once.Do(s.release) }

type slotKey struct{}

// Streaming gives back the in-flight slot of a request that has become a
// long-lived stream (Server-Sent Events): it then waits on its client, not
// on occ, and is bounded by limits.maxConnections and its own write
// deadlines instead. Outside InFlight it does nothing.
func Streaming(ctx context.Context) {
	if s, ok := ctx.Value(slotKey{}).(*slot); ok {
		s.free()
	}
}
