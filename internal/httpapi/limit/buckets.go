// Package limit bounds what one client address, one principal and the
// whole server may ask of the HTTP server: a token bucket per key
// (golang.org/x/time/rate; Edge per client address, Buckets per principal
// in authentication) and a cap on the requests in flight
// (golang.org/x/sync/semaphore; InFlight). A refusal is 429 RATE_LIMITED
// with Retry-After. The limits are per process: with several replicas each
// enforces its own.
package limit

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Rate is a sustained number of requests per second and how many may come
// at once above it.
type Rate struct {
	PerSecond int
	Burst     int
}

// sweepEvery is how often Buckets forgets the buckets that have refilled.
const sweepEvery = time.Minute

// Buckets holds one token bucket per key (a client address, a principal).
// A bucket that has refilled is the same as a new one, so Buckets forgets
// it: memory follows the keys active in the last minute or so.
type Buckets struct {
	rate  Rate
	now   func() time.Time
	mu    sync.Mutex
	byKey map[string]*bucket
	swept time.Time
	// sweepAt is the size that triggers a sweep before the minute is up:
	// twice what the last sweep left, so a spray of keys costs amortized
	// constant time per request.
	sweepAt int
}

type bucket struct {
	lim  *rate.Limiter
	used time.Time
}

// minSweepAt is the smallest size that triggers an early sweep.
const minSweepAt = 1024

// NewBuckets returns empty buckets of rate r.
func NewBuckets(r Rate) *Buckets {
	return newBuckets(r, time.Now)
}

func newBuckets(r Rate, now func() time.Time) *Buckets {
	return &Buckets{rate: r, now: now, byKey: map[string]*bucket{}, swept: now(), sweepAt: minSweepAt}
}

// Take takes one token from key's bucket. When the bucket is empty it takes
// nothing and returns false with how long until a token is there.
func (b *Buckets) Take(key string) (ok bool, wait time.Duration) {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sweep(now)
	bk := b.byKey[key]
	if bk == nil {
		bk = &bucket{lim: rate.NewLimiter(rate.Limit(b.rate.PerSecond), b.rate.Burst)}
		b.byKey[key] = bk
	}
	bk.used = now
	if bk.lim.AllowN(now, 1) {
		return true, 0
	}
	missing := 1 - bk.lim.TokensAt(now)
	return false, time.Duration(missing / float64(b.rate.PerSecond) * float64(time.Second))
}

// refill is how long an unused bucket takes to fill up from empty.
func (b *Buckets) refill() time.Duration {
	return time.Duration(float64(b.rate.Burst) / float64(b.rate.PerSecond) * float64(time.Second))
}

// sweep forgets the buckets unused for long enough to be full again.
func (b *Buckets) sweep(now time.Time) {
	if now.Sub(b.swept) < sweepEvery && len(b.byKey) < b.sweepAt {
		return
	}
	full := b.refill()
	for k, bk := range b.byKey {
		if now.Sub(bk.used) >= full {
			delete(b.byKey, k)
		}
	}
	b.swept = now
	b.sweepAt = max(minSweepAt, 2*len(b.byKey))
}

// size is the number of buckets held, for tests.
func (b *Buckets) size() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.byKey)
}
