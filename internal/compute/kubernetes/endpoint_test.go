package kubernetes

import (
	"io"
	"net"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestCarryEndsWhenTheFarSideNeverDoes: a connection whose client has gone
// ends, and frees its tunnel, even when the far side of the port-forward
// never answers nor closes (as when the kubelet refuses the forward after
// the client gave up).
func TestCarryEndsWhenTheFarSideNeverDoes(t *testing.T) {
	t.Parallel()
	far, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer far.Close()
	go func() {
		for {
			c, err := far.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, c) }() // reads to EOF, then holds the connection open
		}
	}()
	tun := &tunnel{port: far.Addr().(*net.TCPAddr).Port, stop: make(chan struct{}), done: make(chan struct{})}
	defer tun.close()
	s := &forwardSlot{pod: &corev1.Pod{}, t: tun, users: map[*Driver]bool{}}

	client, conn := net.Pipe()
	carried := make(chan struct{})
	go func() {
		defer close(carried)
		s.carry(conn)
	}()
	if _, err := client.Write([]byte("GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	client.Close()

	select {
	case <-carried:
	case <-time.After(time.Minute):
		t.Fatal("the connection is still carried a minute after its client left")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active != 0 || s.idle == nil {
		t.Fatalf("after the connection ended: %d active, idle timer armed %v", s.active, s.idle != nil)
	}
}
