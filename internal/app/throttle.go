package app

import (
	"sync"
	"time"
)

// throttle counts failures per key in a sliding one-minute window. It is
// per process: with several replicas each enforces its own limit.
type throttle struct {
	mu     sync.Mutex
	limit  int
	window time.Duration
	hits   map[string][]time.Time
}

func newThrottle(limit int, window time.Duration) *throttle {
	return &throttle{limit: limit, window: window, hits: map[string][]time.Time{}}
}

// blocked reports whether key is over its limit now, and for how long.
func (t *throttle) blocked(key string, now time.Time) (bool, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	hs := t.prune(key, now)
	if len(hs) < t.limit {
		return false, 0
	}
	return true, hs[0].Add(t.window).Sub(now)
}

// fail records one failure.
func (t *throttle) fail(key string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.hits[key] = append(t.prune(key, now), now)
	if len(t.hits) > 100_000 { // bound memory under a spray of keys
		for k := range t.hits {
			if len(t.prune(k, now)) == 0 {
				delete(t.hits, k)
			}
		}
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
