package app

import (
	"context"
	"sync"
	"time"

	"github.com/openclaw/occ/internal/occ"
)

// throttle counts attempts per key in a sliding window. It is per process:
// with several replicas each enforces its own limit.
type throttle struct {
	mu     sync.Mutex
	limit  int
	window time.Duration
	hits   map[string][]time.Time
}

func newThrottle(limit int, window time.Duration) *throttle {
	return &throttle{limit: limit, window: window, hits: map[string][]time.Time{}}
}

// take charges one attempt to key at now, unless key is at its limit; then
// it charges nothing and says how long until the oldest attempt leaves the
// window. Checking and charging are one step, so attempts made at once
// cannot all pass.
func (t *throttle) take(key string, now time.Time) (bool, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	hs := t.prune(key, now)
	if len(hs) >= t.limit {
		return false, hs[0].Add(t.window).Sub(now)
	}
	t.hits[key] = append(hs, now)
	if len(t.hits) > 100_000 { // bound memory under a spray of keys
		for k := range t.hits {
			t.prune(k, now)
		}
	}
	return true, 0
}

// refund takes back one attempt charged to key at the time at.
func (t *throttle) refund(key string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	hs := t.hits[key]
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i].Equal(at) {
			hs = append(hs[:i:i], hs[i+1:]...)
			break
		}
	}
	if len(hs) == 0 {
		delete(t.hits, key)
	} else {
		t.hits[key] = hs
	}
}

func (t *throttle) prune(key string, now time.Time) []time.Time {
	hs := t.hits[key]
	i := 0
	for i < len(hs) && now.Sub(hs[i]) >= t.window {
		i++
	}
	hs = hs[i:]
	if len(hs) == 0 {
		delete(t.hits, key)
	} else {
		t.hits[key] = hs
	}
	return hs
}

// hashGate bounds how many password hashes run at once in this process.
// Each argon2id hash holds 64 MiB while it runs, so the bound is also the
// bound on the memory password checks take.
type hashGate struct {
	slots chan struct{}
	wait  time.Duration // how long a hash waits for a slot before 429
}

// hashGateWait is how long a password hash waits for a free slot before
// the caller is told to come back (429 RATE_LIMITED, Retry-After 1).
const hashGateWait = 2 * time.Second

func newHashGate(n int) *hashGate {
	return &hashGate{slots: make(chan struct{}, n), wait: hashGateWait}
}

var errHashBusy = &occ.Error{Code: occ.CodeRateLimited, Message: occ.MsgPasswordChecksBusy, RetryAfter: 1}

// enter waits, at most the gate's wait, for a slot, and returns the
// function that gives it back; or RATE_LIMITED when none freed in time.
func (g *hashGate) enter(ctx context.Context) (func(), error) {
	leave := func() { <-g.slots }
	select {
	case g.slots <- struct{}{}:
		return leave, nil
	default:
	}
	timer := time.NewTimer(g.wait)
	defer timer.Stop()
	select {
	case g.slots <- struct{}{}:
		return leave, nil
	case <-timer.C:
		return nil, errHashBusy
	case <-ctx.Done():
		return nil, errHashBusy
	}
}
