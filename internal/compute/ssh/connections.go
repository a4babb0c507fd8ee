package ssh

import (
	"context"
	"errors"
	"sync"
	"time"

	xssh "golang.org/x/crypto/ssh"
)

// occ keeps one authenticated SSH connection per host and opens a session
// on it for each operation (and a channel for each tunnelled gateway
// connection), instead of logging in again every time: a login costs the
// host a process, a key exchange, a PAM session and its login scripts,
// and writes its authentication log; an operation on a kept connection
// costs a channel.
//
//   - At most sessionsPerConnection operations share a connection at once
//     (sshd's MaxSessions is 10 by default); one more gets a connection of
//     its own, closed when it ends.
//   - A connection idle for longer than TransportOptions.ConnectionIdle
//     (30 s) is closed and made again: a connection that a firewall or the host dropped silently is
//     never waited on for long.
//   - A connection on which a session cannot be opened within
//     ConnectTimeout is closed, and the operation tries once more on a new
//     one (the host restarted sshd, or the network dropped it).
//   - An operation that runs past its bound closes its connection, as
//     before: the host's sshd then ends what the session still runs.
const (
	sessionsPerConnection = 8
	defaultConnectionIdle = 30 * time.Second
)

// connections is the Transport's cache of one connection per host.
type connections struct {
	t *Transport

	mu     sync.Mutex
	byHost map[string]*conn // by host:port and user
	closed bool
}

// conn is a cached connection, with how many operations use it now and
// when the last one ended.
type conn struct {
	c        *xssh.Client
	inUse    int
	lastUsed time.Time
}

func (cs *connections) idle() time.Duration {
	if d := cs.t.o.ConnectionIdle; d > 0 {
		return d
	}
	return defaultConnectionIdle
}

func hostKey(h Host) string { return h.User + "@" + h.hostport() }

// acquire returns a connection to h for one use and its release: the
// cached one when it has room and was not idle too long, else a new one
// (cached when the host has none, of this use only when the cached one is
// full).
func (cs *connections) acquire(ctx context.Context, h Host) (*xssh.Client, func(), error) {
	key := hostKey(h)
	cs.mu.Lock()
	if cs.closed {
		cs.mu.Unlock()
		return nil, nil, errors.New("ssh compute driver: closed")
	}
	cur := cs.byHost[key]
	if cur != nil && cur.inUse == 0 && time.Since(cur.lastUsed) > cs.idle() {
		delete(cs.byHost, key)
		cur.c.Close()
		cur = nil
	}
	if cur != nil && cur.inUse < sessionsPerConnection {
		cur.inUse++
		cs.mu.Unlock()
		return cur.c, cs.releaser(cur), nil
	}
	full := cur != nil
	cs.mu.Unlock()

	c, err := cs.t.dial(ctx, h)
	if err != nil {
		return nil, nil, err
	}
	if full {
		return c, func() { c.Close() }, nil
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if prev := cs.byHost[key]; prev != nil || cs.closed {
		// Another operation cached one meanwhile (or the driver closed):
		// this one is of this use only.
		return c, func() { c.Close() }, nil
	}
	n := &conn{c: c, inUse: 1}
	cs.byHost[key] = n
	return c, cs.releaser(n), nil
}

func (cs *connections) releaser(n *conn) func() {
	return func() {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		n.inUse--
		n.lastUsed = time.Now()
	}
}

// drop closes c and forgets it if it is h's cached connection: it broke,
// or an operation on it ran past its bound.
func (cs *connections) drop(h Host, c *xssh.Client) {
	key := hostKey(h)
	cs.mu.Lock()
	if n := cs.byHost[key]; n != nil && n.c == c {
		delete(cs.byHost, key)
	}
	cs.mu.Unlock()
	c.Close()
}

// close closes every cached connection; later acquires fail.
func (cs *connections) close() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.closed = true
	for _, n := range cs.byHost {
		n.c.Close()
	}
	cs.byHost = map[string]*conn{}
}

// newSession opens a session on c within the Transport's ConnectTimeout
// (x/crypto's NewSession takes no context: a connection the network
// dropped silently would block it until TCP gives up).
func (cs *connections) newSession(ctx context.Context, c *xssh.Client) (*xssh.Session, error) {
	ctx, cancel := context.WithTimeout(ctx, cs.t.o.ConnectTimeout)
	defer cancel()
	type result struct {
		s   *xssh.Session
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := c.NewSession()
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		return r.s, r.err
	case <-ctx.Done():
		c.Close() // ends the NewSession above
		if r := <-done; r.s != nil {
			r.s.Close()
		}
		return nil, ctx.Err()
	}
}
