package api_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// withLimits adjusts the request limits and HTTP timeouts (a boot option).
func withLimits(f func(l *config.Limits, h *config.HTTP)) func(*server.Main) {
	return func(m *server.Main) { f(&m.Config.Limits, &m.Config.HTTP) }
}

// shortReads gives a stalled request half a second (a boot option).
var shortReads = withLimits(func(_ *config.Limits, h *config.HTTP) {
	h.ReadHeaderTimeout, h.ReadTimeout = config.Duration(500*time.Millisecond), config.Duration(500*time.Millisecond)
})

// closeWait bounds how long a test waits for the server to close a
// connection it should close.
const closeWait = 30 * time.Second

// stall opens a raw connection and sends head (request line and headers,
// without the blank line) and then, when body is not "-", the blank line
// and the start of a 100-byte body: then nothing more.
func stall(t *testing.T, addr, head, body string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	msg := head + "\r\nHost: " + addr + "\r\n"
	if body != "-" {
		msg += "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n" + body
	}
	if _, err := io.WriteString(c, msg); err != nil {
		t.Fatal(err)
	}
	return c
}

// closedByServer reads c until the server closes it and returns what it
// answered; it fails the test when the connection is still open after
// closeWait.
func closedByServer(t *testing.T, c net.Conn, deadline time.Time) string {
	t.Helper()
	_ = c.SetReadDeadline(deadline)
	got, err := io.ReadAll(c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the server kept a stalled connection open (answered %q so far)", got)
	}
	return string(got) // io.EOF or a reset: closed either way
}

// TestStalledBodyIsCutOff: a client that sends headers and then stalls its
// body, signed in or not, is answered 400 INVALID_REQUEST and disconnected
// once http.readTimeout is over; one that stalls its headers is
// disconnected without an answer.
func TestStalledBodyIsCutOff(t *testing.T) {
	t.Parallel()
	e := servertest.Boot(t, storetest.Migrated(t, "sqlite"), servertest.NewFakeCompute(t), shortReads)
	addr := e.M.Addr()
	for name, head := range map[string]string{
		"unauthenticated": "POST /api/auth/sign-in HTTP/1.1",
		"authenticated":   "POST /namespaces HTTP/1.1\r\nAuthorization: Bearer " + e.Admin,
	} {
		t.Run(name, func(t *testing.T) {
			got := closedByServer(t, stall(t, addr, head, `{"name":`), time.Now().Add(closeWait))
			if !strings.HasPrefix(got, "HTTP/1.1 400 ") || !strings.Contains(got, `"code":"INVALID_REQUEST"`) ||
				!strings.Contains(got, "The request body could not be read.") || !strings.Contains(got, "Connection: close") {
				t.Fatalf("answer to a stalled body = %q", got)
			}
		})
	}
	t.Run("headers", func(t *testing.T) {
		if got := closedByServer(t, stall(t, addr, "GET /healthz HTTP/1.1", "-"), time.Now().Add(closeWait)); got != "" {
			t.Fatalf("answer to stalled headers = %q", got)
		}
	})
}

// TestStalledConnectionsOverTheCap: more stalled connections than
// limits.maxConnections are all disconnected, and a request sent after them
// is served.
func TestStalledConnectionsOverTheCap(t *testing.T) {
	t.Parallel()
	const limit, stalled = 10, 40
	e := servertest.Boot(t, storetest.Migrated(t, "sqlite"), servertest.NewFakeCompute(t), shortReads,
		withLimits(func(l *config.Limits, _ *config.HTTP) { l.MaxConnections = limit }))
	addr := e.M.Addr()
	var conns []net.Conn
	for i := range stalled {
		switch i % 3 {
		case 0:
			conns = append(conns, stall(t, addr, "POST /api/auth/sign-in HTTP/1.1", `{"email":`))
		case 1:
			conns = append(conns, stall(t, addr, "POST /namespaces HTTP/1.1\r\nAuthorization: Bearer "+e.Admin, `{"name":`))
		default:
			conns = append(conns, stall(t, addr, "GET /healthz HTTP/1.1", "-"))
		}
	}
	if r := e.Call("GET", "/healthz", "", nil); r.Status != 200 {
		t.Fatalf("healthz after %d stalled connections = %d %v", stalled, r.Status, r.Body)
	}
	deadline := time.Now().Add(closeWait)
	for _, c := range conns {
		closedByServer(t, c, deadline)
	}
}

// TestConnectionCap: while limits.maxConnections connections are open, the
// next one is not served; it is as soon as one of them closes.
func TestConnectionCap(t *testing.T) {
	t.Parallel()
	const limit = 3
	e := servertest.Boot(t, storetest.Migrated(t, "sqlite"), servertest.NewFakeCompute(t),
		withLimits(func(l *config.Limits, _ *config.HTTP) { l.MaxConnections = limit }))
	addr := e.M.Addr()
	var held []net.Conn
	for range limit {
		held = append(held, holdInFlight(t, addr))
	}
	next, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if _, err := io.WriteString(next, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(next)
	// No answer may come while the cap is full: a short look (a slow
	// machine can only hide a missing cap, never fail a present one).
	_ = next.SetReadDeadline(time.Now().Add(time.Second))
	if line, err := rd.ReadString('\n'); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a connection over the cap was answered %q (%v)", line, err)
	}
	held[0].Close()
	_ = next.SetReadDeadline(time.Now().Add(closeWait))
	res, err := http.ReadResponse(rd, nil)
	if err != nil {
		t.Fatalf("no answer once a connection closed: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("healthz = %d", res.StatusCode)
	}
}

// holdInFlight opens a connection whose sign-in request is being read: the
// server has asked for its body (100 Continue), which never comes.
func holdInFlight(t *testing.T, addr string) net.Conn {
	t.Helper()
	c := stall(t, addr, "POST /api/auth/sign-in HTTP/1.1\r\nExpect: 100-continue", "")
	_ = c.SetReadDeadline(time.Now().Add(closeWait))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
		t.Fatalf("holding a request: %q %v", line, err)
	}
	_ = c.SetReadDeadline(time.Time{})
	return c
}

// TestEventStreamOutlivesWriteTimeout: a deployment's event stream stays
// open past http.writeTimeout and delivers the terminal event; while it is
// open it does not count among the requests in flight.
func TestEventStreamOutlivesWriteTimeout(t *testing.T) {
	t.Parallel()
	const writeTimeout = 2 * time.Second
	d := newDeployWorld(t, storetest.Migrated(t, "sqlite"), withLimits(func(l *config.Limits, h *config.HTTP) {
		h.WriteTimeout, l.MaxInFlight = config.Duration(writeTimeout), 1
	}))
	e := d.E
	d.Fake.Set(func(f *servertest.FakeCompute) { f.NotReady[d.Agent] = -1 }) // not ready until the test says so
	rev := d.Deploy(t, d.Agent)
	res := d.Events(t, d.Agent, rev)
	defer res.Body.Close()
	rd := bufio.NewReader(res.Body)
	if first, err := rd.ReadString('\n'); err != nil || first != "event: status\n" {
		t.Fatalf("first line = %q %v", first, err)
	}
	if r := e.Call("GET", d.Path("/agents/"+d.Agent+"/deployments/"+rev), e.Admin, nil); r.Status != 200 {
		t.Fatalf("a request beside the stream = %d %v", r.Status, r.Body)
	}
	time.Sleep(2 * writeTimeout) // the server's write deadline of the request is long over
	d.Fake.Set(func(f *servertest.FakeCompute) { f.NotReady[d.Agent] = 0 })
	raw, err := io.ReadAll(rd) // the stream ends once terminal
	if err != nil {
		t.Fatalf("the stream was cut: %v after %q", err, raw)
	}
	events := strings.Split(strings.TrimSpace(string(raw)), "\n\n")
	if last := events[len(events)-1]; !strings.Contains(last, `"status":"succeeded"`) {
		t.Fatalf("last event = %q", last)
	}
}

// TestOversizedHeadersRefused: a request whose headers exceed
// http.maxHeaderBytes is answered 431 and never reaches occ.
func TestOversizedHeadersRefused(t *testing.T) {
	t.Parallel()
	e := servertest.Boot(t, storetest.Migrated(t, "sqlite"), servertest.NewFakeCompute(t),
		withLimits(func(_ *config.Limits, h *config.HTTP) { h.MaxHeaderBytes = 4096 }))
	req, _ := http.NewRequest("GET", e.Base+"/healthz", nil)
	req.Header.Set("X-Filler", strings.Repeat("x", 16<<10))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("16 KiB of headers = %d, want 431", res.StatusCode)
	}
	if r := e.Call("GET", "/healthz", "", nil); r.Status != 200 {
		t.Fatalf("healthz = %d", r.Status)
	}
}
