package servertest

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Shared prepares what several tests of one binary use (an engine, a
// cluster, a host, an image loaded into it) once, the first time a test
// asks for key, and gives every test the same value; what the preparation
// registers with Cleanup is released when Main ends, after the last test.
// Each test still brings its own occ, Namespace and Agents, so tests that
// share a lane keep running in parallel. When the preparation fails,
// every test that asks fails with its log.
func Shared[T any](t testing.TB, key string, prepare func(tb testing.TB) T) T {
	t.Helper()
	shared.mu.Lock()
	if shared.byKey == nil {
		shared.byKey = map[string]*sharedLane{}
	}
	l := shared.byKey[key]
	if l == nil {
		l = &sharedLane{}
		shared.byKey[key] = l
	}
	shared.mu.Unlock()
	prepared := false
	l.once.Do(func() {
		prepared = true
		tb := &binaryTB{name: key}
		began := time.Now()
		done := make(chan struct{})
		go func() { // Fatal ends this goroutine (runtime.Goexit), as in a test
			defer close(done)
			l.value = prepare(tb)
		}()
		<-done
		tb.Logf("prepared in %s", time.Since(began).Round(time.Second))
		l.log, l.failed = tb.output(), tb.Failed()
	})
	if l.failed {
		t.Fatalf("the shared %s could not be prepared:\n%s", key, l.log)
	}
	if prepared {
		t.Logf("prepared the shared %s for every test of this binary:\n%s", key, l.log)
	}
	return l.value.(T)
}

// shared is what Shared prepared in this binary, by key, and the cleanups
// Main runs.
var shared struct {
	mu       sync.Mutex
	byKey    map[string]*sharedLane
	cancels  []func()
	cleanups []func()
}

// sharedLane is one prepared value.
type sharedLane struct {
	once   sync.Once
	value  any
	log    string
	failed bool
}

// releaseShared cancels the shared preparations' contexts and runs their
// cleanups, the last registered first.
func releaseShared() {
	shared.mu.Lock()
	cancels, cleanups := shared.cancels, shared.cleanups
	shared.cancels, shared.cleanups = nil, nil
	shared.mu.Unlock()
	for _, cancel := range cancels {
		cancel()
	}
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
}

// binaryTB is the testing.TB of a shared preparation: it lives as long as
// the test binary. Its log is kept (shown by the test that prepared it,
// and by every test that asks when it failed); its cleanups and temporary
// directories last until Main ends.
type binaryTB struct {
	testing.TB // not set: a method not written below panics
	name       string
	mu         sync.Mutex
	log        strings.Builder
	failed     bool
	ctx        context.Context
}

func (b *binaryTB) Helper()      {}
func (b *binaryTB) Name() string { return "shared/" + b.name }

func (b *binaryTB) Logf(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fmt.Fprintf(&b.log, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
func (b *binaryTB) Log(args ...any) { b.Logf("%s", strings.TrimSuffix(fmt.Sprintln(args...), "\n")) }

func (b *binaryTB) Errorf(format string, args ...any) { b.Logf(format, args...); b.Fail() }
func (b *binaryTB) Error(args ...any)                 { b.Log(args...); b.Fail() }
func (b *binaryTB) Fatalf(format string, args ...any) { b.Errorf(format, args...); b.FailNow() }
func (b *binaryTB) Fatal(args ...any)                 { b.Error(args...); b.FailNow() }
func (b *binaryTB) FailNow()                          { b.Fail(); runtime.Goexit() }

func (b *binaryTB) Fail() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failed = true
}

func (b *binaryTB) Failed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failed
}

func (b *binaryTB) output() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.log.String()
}

func (b *binaryTB) Cleanup(f func()) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.cleanups = append(shared.cleanups, f)
}

// TempDir is a new directory under the binary's directory, removed by
// Main.
func (b *binaryTB) TempDir() string {
	dir, err := binaryDir()
	if err == nil {
		dir, err = os.MkdirTemp(dir, "shared-")
	}
	if err != nil {
		b.Fatalf("TempDir: %v", err)
	}
	return dir
}

// Context is canceled when Main ends, before the cleanups run.
func (b *binaryTB) Context() context.Context {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ctx == nil {
		var cancel context.CancelFunc
		b.ctx, cancel = context.WithCancel(context.Background())
		shared.mu.Lock()
		shared.cancels = append(shared.cancels, cancel)
		shared.mu.Unlock()
	}
	return b.ctx
}

// Setenv would change the environment of every test of the binary.
func (b *binaryTB) Setenv(key, _ string) {
	b.Fatalf("a shared preparation cannot set %s: it would change every test's environment", key)
}
