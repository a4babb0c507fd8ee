package servertest

import (
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// asker runs Shared as a test would, with a recording TB, and returns
// what it answered and whether it failed the asker.
func asker[T any](key string, prepare func(testing.TB) T) (T, *binaryTB) {
	tb := &binaryTB{name: "asker"}
	var v T
	done := make(chan struct{})
	go func() {
		defer close(done)
		v = Shared(tb, key, prepare)
	}()
	<-done
	return v, tb
}

// TestSharedPreparesOnceForEveryTest: many tests asking at once get the
// one value, prepared once; its cleanups and temporary directories last
// until the binary releases them, the last registered first.
func TestSharedPreparesOnceForEveryTest(t *testing.T) {
	var prepared atomic.Int32
	var order []string
	var dir string
	prepare := func(tb testing.TB) string {
		prepared.Add(1)
		dir = tb.TempDir()
		tb.Cleanup(func() { order = append(order, "first") })
		tb.Cleanup(func() { order = append(order, "second") })
		tb.Logf("engine up")
		return "engine-1"
	}
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Go(func() {
			v, tb := asker("once", prepare)
			if tb.Failed() {
				t.Errorf("asker %d failed: %s", i, tb.output())
			}
			got[i] = v
		})
	}
	wg.Wait()
	if n := prepared.Load(); n != 1 {
		t.Fatalf("prepared %d times, want once", n)
	}
	for i, v := range got {
		if v != "engine-1" {
			t.Fatalf("asker %d got %q", i, v)
		}
	}
	if _, err := os.Stat(dir); err != nil || len(order) != 0 {
		t.Fatalf("released before the binary ended: dir %v, cleanups %v", err, order)
	}
	releaseShared()
	if strings.Join(order, ",") != "second,first" {
		t.Fatalf("cleanups ran %v, want second,first", order)
	}
}

// TestSharedFailureFailsEveryAsker: a preparation that fails fails each
// test that asks, with the preparation's log, and is not tried again.
func TestSharedFailureFailsEveryAsker(t *testing.T) {
	var tries atomic.Int32
	prepare := func(tb testing.TB) int {
		tries.Add(1)
		tb.Logf("starting the engine")
		tb.Fatalf("the engine did not answer")
		return 1
	}
	for i := range 2 {
		_, tb := asker("failing", prepare)
		if out := tb.output(); !tb.Failed() || !strings.Contains(out, "starting the engine") || !strings.Contains(out, "the engine did not answer") {
			t.Fatalf("asker %d: failed %v, log %q", i, tb.Failed(), out)
		}
	}
	if n := tries.Load(); n != 1 {
		t.Fatalf("tried %d times, want once", n)
	}
}

// TestSharedContextEndsWithTheBinary: a preparation's context lives until
// the release, and is canceled before the cleanups run.
func TestSharedContextEndsWithTheBinary(t *testing.T) {
	var errAtCleanup error
	ctx, _ := asker("context", func(tb testing.TB) interface{ Err() error } {
		c := tb.Context()
		tb.Cleanup(func() { errAtCleanup = c.Err() })
		return c
	})
	if ctx.Err() != nil {
		t.Fatalf("canceled before the release: %v", ctx.Err())
	}
	releaseShared()
	if errAtCleanup == nil {
		t.Fatal("the context was still live when the cleanups ran")
	}
}
