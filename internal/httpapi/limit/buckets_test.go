package limit

import (
	"testing"
	"time"
)

// clock is a settable time for Buckets.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestBucketsBurstThenRate(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	b := newBuckets(Rate{PerSecond: 2, Burst: 3}, c.now)
	for i := range 3 {
		if ok, _ := b.Take("a"); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	ok, wait := b.Take("a")
	if ok || !about(wait, 500*time.Millisecond) {
		t.Fatalf("over the burst: ok %v wait %v, want refused for 500ms", ok, wait)
	}
	if ok, _ := b.Take("b"); !ok {
		t.Fatal("another key shares the bucket")
	}
	c.t = c.t.Add(400 * time.Millisecond)
	if ok, wait := b.Take("a"); ok || !about(wait, 100*time.Millisecond) {
		t.Fatalf("before a token is back: ok %v wait %v, want refused for 100ms", ok, wait)
	}
	c.t = c.t.Add(100 * time.Millisecond)
	if ok, _ := b.Take("a"); !ok {
		t.Fatal("refused once a token is back")
	}
}

// about reports whether a wait computed in floating point is d.
func about(wait, d time.Duration) bool {
	return wait > d-time.Microsecond && wait < d+time.Microsecond
}

// TestBucketsForgetRefilled: a bucket unused long enough to be full again
// is dropped at the next sweep; a recently used one is kept.
func TestBucketsForgetRefilled(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	b := newBuckets(Rate{PerSecond: 1, Burst: 10}, c.now)
	b.Take("old")
	c.t = c.t.Add(sweepEvery - time.Second)
	b.Take("recent")
	if b.size() != 2 {
		t.Fatalf("size = %d before the sweep", b.size())
	}
	c.t = c.t.Add(time.Second)
	b.Take("recent")
	if b.size() != 1 {
		t.Fatalf("size = %d after the sweep, want only the recent bucket", b.size())
	}
}

// TestBucketsSweepOnSpray: many new keys within the minute trigger a
// sweep of the refilled ones before the minute is up.
func TestBucketsSweepOnSpray(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	b := newBuckets(Rate{PerSecond: 100, Burst: 1}, c.now)
	for i := range 5 * minSweepAt {
		c.t = c.t.Add(time.Millisecond)
		b.Take(time.Duration(i).String())
	}
	if n := b.size(); n > 2*minSweepAt {
		t.Fatalf("%d buckets held after a spray of %d keys", n, 5*minSweepAt)
	}
}

// TestClientKey: the key of a peer's address (through ResolveClient, no
// trusted proxy) is the IPv4 address, an IPv6 one by its /64.
func TestClientKey(t *testing.T) {
	for addr, want := range map[string]string{
		"192.0.2.7:5000":                 "192.0.2.7",
		"[::ffff:192.0.2.7]:5000":        "192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:443":     "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1%eth0]:80": "2001:db8:1:2::/64",
		"[::1]:80":                       "::/64",
		"@":                              "@",
	} {
		if got := ClientKey(ResolveClient(addr, nil, nil)); got != want {
			t.Errorf("ClientKey(%q) = %q, want %q", addr, got, want)
		}
	}
}
