package ssh

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"syscall"

	xssh "golang.org/x/crypto/ssh"
)

// occ reaches a gateway, which listens on its host's loopback only,
// through the SSH connection to the host: a local listener forwards each
// connection to 127.0.0.1:<port> on the host (an SSH direct-tcpip
// channel), so the gateway sees occ's backend client on direct loopback.
//
// The local address is a function of the host and the port alone —
// 127.77.<two bytes of sha256(host:port of SSH)>:<gateway port> — so that
// every driver instance, and every occ process on the machine, gives the
// same endpoint for an Agent: whichever listens first serves it, and a
// listen that finds the address taken leaves it to that one.

// tunnels holds the driver's listeners and its SSH connections for them.
type tunnels struct {
	t *Transport

	mu        sync.Mutex
	clients   map[string]*xssh.Client // by host:port of SSH
	listeners map[string]net.Listener // by local address
	closed    bool
}

func newTunnels(t *Transport) *tunnels {
	return &tunnels{t: t, clients: map[string]*xssh.Client{}, listeners: map[string]net.Listener{}}
}

// localAddress is the loopback address of the tunnel to a gateway port
// of the host.
func localAddress(h Host, port int) string {
	sum := sha256.Sum256([]byte(h.hostport()))
	return net.JoinHostPort(fmt.Sprintf("127.77.%d.%d", sum[0], max(sum[1], 1)), strconv.Itoa(port))
}

// ensure makes sure a listener of this process, or another, forwards the
// local address to the gateway port on the host, and returns the address.
func (ts *tunnels) ensure(h Host, port int) (string, error) {
	addr := localAddress(h, port)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return "", errors.New("ssh compute driver: closed")
	}
	if _, ok := ts.listeners[addr]; ok {
		return addr, nil
	}
	l, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return addr, nil // another instance or occ process serves it
	case err != nil:
		return "", fmt.Errorf("ssh compute driver: listen on %s for the gateway on %s: %w", addr, h.hostport(), err)
	}
	ts.listeners[addr] = l
	go ts.serve(l, h, port)
	return addr, nil
}

// serve forwards every connection to the gateway port on the host.
func (ts *tunnels) serve(l net.Listener, h Host, port int) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			r, err := ts.dial(h, port)
			if err != nil {
				return
			}
			defer r.Close()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(r, c); done <- struct{}{} }()
			go func() { _, _ = io.Copy(c, r); done <- struct{}{} }()
			<-done
		}()
	}
}

// dial opens a channel to 127.0.0.1:port on the host over the host's
// cached SSH connection, connecting again once when that one broke.
func (ts *tunnels) dial(h Host, port int) (net.Conn, error) {
	target := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for attempt := 0; ; attempt++ {
		c, err := ts.client(h)
		if err != nil {
			return nil, err
		}
		conn, err := c.Dial("tcp", target)
		if err == nil || attempt == 1 {
			return conn, err
		}
		ts.drop(h, c)
	}
}

func (ts *tunnels) client(h Host) (*xssh.Client, error) {
	ts.mu.Lock()
	c, ok := ts.clients[h.hostport()]
	ts.mu.Unlock()
	if ok {
		return c, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), ts.t.o.ConnectTimeout)
	defer cancel()
	c, err := ts.t.dial(ctx, h)
	if err != nil {
		return nil, err
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if prev, ok := ts.clients[h.hostport()]; ok {
		c.Close()
		return prev, nil
	}
	ts.clients[h.hostport()] = c
	return c, nil
}

func (ts *tunnels) drop(h Host, c *xssh.Client) {
	ts.mu.Lock()
	if ts.clients[h.hostport()] == c {
		delete(ts.clients, h.hostport())
	}
	ts.mu.Unlock()
	c.Close()
}

// close stops the listeners and closes the connections.
func (ts *tunnels) close() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.closed = true
	for _, l := range ts.listeners {
		l.Close()
	}
	for _, c := range ts.clients {
		c.Close()
	}
	ts.listeners, ts.clients = map[string]net.Listener{}, map[string]*xssh.Client{}
}
