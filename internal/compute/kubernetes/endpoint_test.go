package kubernetes

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/streaming/pkg/httpstream"
)

// farSide stands in for a port-forward connection: each stream pair it
// opens is handed to pair, which plays the kubelet's side of it.
type farSide struct {
	mu      sync.Mutex
	streams []*farStream
	pending *farStream // the error stream of the pair being opened
	pair    func(failure, data *farStream)
	closed  chan bool
	once    sync.Once
}

func newFarSide(pair func(failure, data *farStream)) *farSide {
	return &farSide{pair: pair, closed: make(chan bool)}
}

func (f *farSide) CreateStream(h http.Header) (httpstream.Stream, error) {
	s := newFarStream(h.Clone())
	f.mu.Lock()
	defer f.mu.Unlock()
	f.streams = append(f.streams, s)
	switch h.Get(corev1.StreamType) {
	case corev1.StreamTypeError:
		f.pending = s
	case corev1.StreamTypeData:
		go f.pair(f.pending, s)
	}
	return s, nil
}

func (f *farSide) Close() error {
	f.once.Do(func() { close(f.closed) })
	return nil
}

func (f *farSide) CloseChan() <-chan bool             { return f.closed }
func (f *farSide) SetIdleTimeout(time.Duration)       {}
func (f *farSide) RemoveStreams(...httpstream.Stream) {}

// farStream is one stream: what occ writes, the far side reads from
// toFar; what the far side writes, occ reads from fromFar.
type farStream struct {
	headers   http.Header
	toFarR    *io.PipeReader
	toFarW    *io.PipeWriter
	fromFarR  *io.PipeReader
	fromFarW  *io.PipeWriter
	reset     chan struct{}
	resetOnce sync.Once
}

func newFarStream(h http.Header) *farStream {
	s := &farStream{headers: h, reset: make(chan struct{})}
	s.toFarR, s.toFarW = io.Pipe()
	s.fromFarR, s.fromFarW = io.Pipe()
	return s
}

func (s *farStream) Read(p []byte) (int, error)  { return s.fromFarR.Read(p) }
func (s *farStream) Write(p []byte) (int, error) { return s.toFarW.Write(p) }
func (s *farStream) Close() error                { return s.toFarW.Close() }
func (s *farStream) Headers() http.Header        { return s.headers }
func (s *farStream) Identifier() uint32          { return 0 }
func (s *farStream) Reset() error {
	s.resetOnce.Do(func() {
		close(s.reset)
		err := errors.New("stream reset")
		s.fromFarR.CloseWithError(err)
		s.toFarW.CloseWithError(err)
	})
	return nil
}

// carried runs carry on one end of a pipe whose client writes a request
// and leaves, and reports when carry returns.
func carried(t *testing.T, s *forwardSlot) <-chan struct{} {
	t.Helper()
	client, conn := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.carry(conn)
	}()
	if _, err := client.Write([]byte("GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	client.Close()
	return done
}

// TestCarryEndsWhenTheFarSideNeverDoes: a connection whose client has gone
// ends, and frees its tunnel, even when the far side of the port-forward
// never answers nor closes its streams (as when the kubelet refuses the
// forward after the client gave up).
func TestCarryEndsWhenTheFarSideNeverDoes(t *testing.T) {
	t.Parallel()
	far := newFarSide(func(_, data *farStream) {
		_, _ = io.Copy(io.Discard, data.toFarR) // reads to the end, then holds both streams open
	})
	tun := &tunnel{conn: far, port: 18789, pod: "ns/gateway", logger: slog.New(slog.DiscardHandler)}
	defer tun.close()
	s := &forwardSlot{pod: &corev1.Pod{}, t: tun, users: map[*Driver]bool{}}

	select {
	case <-carried(t, s):
	case <-time.After(time.Minute):
		t.Fatal("the connection is still carried a minute after its client left")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active != 0 || s.idle == nil {
		t.Fatalf("after the connection ended: %d active, idle timer armed %v", s.active, s.idle != nil)
	}
	if !tun.alive() {
		t.Fatal("a connection that ended without a failure closed the tunnel")
	}
	far.mu.Lock()
	defer far.mu.Unlock()
	if len(far.streams) != 2 {
		t.Fatalf("%d streams opened, want an error and a data stream", len(far.streams))
	}
	for i, want := range []string{corev1.StreamTypeError, corev1.StreamTypeData} {
		h := far.streams[i].headers
		if h.Get(corev1.StreamType) != want || h.Get(corev1.PortHeader) != "18789" || h.Get(corev1.PortForwardRequestIDHeader) != "1" {
			t.Errorf("stream %d headers %v: want type %s, port 18789, request 1", i, h, want)
		}
	}
}

// TestCarryEndsTheTunnelOnAReportedFailure: a failure the far side reports
// on a pair's error stream (the gateway port refused the connection) ends
// the tunnel, so that the next connection dials a new one.
func TestCarryEndsTheTunnelOnAReportedFailure(t *testing.T) {
	t.Parallel()
	far := newFarSide(func(failure, data *farStream) {
		_, _ = failure.fromFarW.Write([]byte("failed to connect to localhost:18789: connection refused"))
		failure.fromFarW.Close()
		data.fromFarW.Close()
	})
	tun := &tunnel{conn: far, port: 18789, pod: "ns/gateway", logger: slog.New(slog.DiscardHandler)}
	s := &forwardSlot{pod: &corev1.Pod{}, t: tun, users: map[*Driver]bool{}}

	select {
	case <-carried(t, s):
	case <-time.After(time.Minute):
		t.Fatal("the connection is still carried a minute after the far side failed it")
	}
	if tun.alive() {
		t.Fatal("the tunnel is still open after the far side reported a failure")
	}
}
