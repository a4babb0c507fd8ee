package ssh_test

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/openclaw/occ/internal/compute/ssh"
	"github.com/openclaw/occ/internal/compute/ssh/sshtest"
	"github.com/openclaw/occ/internal/occ"
)

// countingProxy forwards TCP connections to the test host's sshd and
// counts them: how many were made, how many are open, and it can cut
// every open one (what a host's restarted sshd or a dropped network does).
type countingProxy struct {
	l net.Listener

	mu       sync.Mutex
	accepted int
	open     map[net.Conn]net.Conn
}

func startCountingProxy(t *testing.T, to string) *countingProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{l: l, open: map[net.Conn]net.Conn{}}
	t.Cleanup(func() { l.Close(); p.cut() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			r, err := net.Dial("tcp", to)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.accepted++
			p.open[c] = r
			p.mu.Unlock()
			go func() {
				done := make(chan struct{}, 2)
				go func() { _, _ = io.Copy(r, c); done <- struct{}{} }()
				go func() { _, _ = io.Copy(c, r); done <- struct{}{} }()
				<-done
				c.Close()
				r.Close()
				p.mu.Lock()
				delete(p.open, c)
				p.mu.Unlock()
			}()
		}
	}()
	return p
}

func (p *countingProxy) counts() (accepted, open int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted, len(p.open)
}

func (p *countingProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c, r := range p.open {
		c.Close()
		r.Close()
	}
}

// through is a transport's target and options reaching the host through
// the proxy (known_hosts names the host's key at the proxy's address).
func (p *countingProxy) through(t *testing.T, h *sshtest.Host) (ssh.Host, ssh.TransportOptions) {
	addr := p.l.Addr().(*net.TCPAddr)
	target := ssh.Host{Address: "127.0.0.1", Port: addr.Port, User: "root"}
	o := transportOptions(t, h)
	o.KnownHostsFile = writeFile(t, "known_hosts", []byte(knownhosts.Line([]string{addr.String()}, h.HostKey)+"\n"))
	return target, o
}

// TestTransportKeepsItsConnection: operations on a host share one SSH
// connection (a session each) instead of logging in every time; a ninth
// operation at once gets a connection of its own, closed when it ends; a
// connection the host dropped, one left idle too long and one an
// operation timed out on are each replaced by a new one, and the next
// operation succeeds on it.
func TestTransportKeepsItsConnection(t *testing.T) {
	h := testHost(t)
	p := startCountingProxy(t, h.Address+":"+strconv.Itoa(h.Port))
	target, o := p.through(t, h)
	o.ConnectionIdle = 2 * time.Second
	tr := newTransport(t, o)
	run := func(script string) {
		t.Helper()
		if out, err := tr.Run(context.Background(), target, script); err != nil || strings.TrimSpace(string(out)) != "ok" {
			t.Fatalf("run %q = %q, %v", script, out, err)
		}
	}
	want := func(what string, accepted, open int) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			a, n := p.counts()
			if a == accepted && n == open {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d connections made, %d open; want %d and %d", what, a, n, accepted, open)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	for range 3 {
		run("echo ok")
	}
	want("three operations one after the other", 1, 1)

	// Eight at once share it (one holds the host lock, seven wait on it);
	// a ninth opens a second connection, closed when it ended.
	dir := "/root/" + t.Name()
	if _, err := h.Run("mkdir -p " + dir); err != nil {
		t.Fatal(err)
	}
	waiting := func(n int) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			out, _ := h.Run("pgrep -c -f 'flock -w [0-9]+ -E 75 " + o.LockFile + "'")
			if got, _ := strconv.Atoi(strings.TrimSpace(out)); got == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s operations under the lock, want %d", strings.TrimSpace(out), n)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	var wg sync.WaitGroup
	start := func() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := tr.Run(context.Background(), target, "while [ ! -e "+dir+"/release ]; do sleep 0.05; done\necho ok")
			if err != nil || strings.TrimSpace(string(out)) != "ok" {
				t.Errorf("an operation of the nine = %q, %v", out, err)
			}
		}()
	}
	for i := range 8 {
		start()
		waiting(i + 1)
	}
	want("eight operations at once", 1, 1)
	start()
	waiting(9)
	want("a ninth at once", 2, 2)
	if _, err := h.Run("touch " + dir + "/release"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	want("the nine ended", 2, 1)

	// The host drops it: the next operation logs in again and succeeds.
	p.cut()
	run("echo ok")
	want("after the host dropped the connection", 3, 1)

	// Idle past ConnectionIdle: closed and made again.
	time.Sleep(o.ConnectionIdle + 500*time.Millisecond)
	run("echo ok")
	want("after the connection stayed idle", 4, 1)

	// An operation past its bound closes its connection; the next one
	// gets a new one.
	short := o
	short.OperationTimeout = 2 * time.Second
	ts := newTransport(t, short)
	_, err := ts.Run(context.Background(), target, "sleep 31")
	wantCode(t, err, occ.SSHOperationTimeout, false, false)
	// What the operation started runs on (the host lock with it), as after
	// any operation occ gave up on: end it.
	if _, err := h.Run("pkill -f 'sleep 3[1]'; true"); err != nil {
		t.Fatal(err)
	}
	if out, err := ts.Run(context.Background(), target, "echo ok"); err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("the operation after a timeout = %q, %v", out, err)
	}
	want("after an operation timed out (a second transport)", 6, 2)
}
