package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/store"
	"github.com/openclaw/occ/internal/store/storetest"
)

// withStreams sets the streams.* settings (a boot option).
func withStreams(maxPerPrincipal int, recheck, poll time.Duration) func(*server.Main) {
	return func(m *server.Main) {
		m.Config.Streams.MaxPerPrincipal = maxPerPrincipal
		m.Config.Streams.RecheckInterval.UnmarshalText([]byte(recheck.String()))
		m.Config.Streams.PollInterval.UnmarshalText([]byte(poll.String()))
	}
}

// sse is one open event stream.
type sse struct {
	res *http.Response
	r   *bufio.Reader
}

// streamWait bounds how long a test reads one stream: an event that
// never comes ends it instead of hanging the test.
const streamWait = 60 * time.Second

// openStream opens …/deployments/{rev}/events with key and returns the
// response; the stream is closed when the test ends or after streamWait.
func (d *deployWorld) openStream(t *testing.T, key, rev string) (*sse, resp) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), streamWait)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", d.e.base+d.path("/agents/"+d.agent+"/deployments/"+rev+"/events"), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := d.e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	out := resp{Status: res.StatusCode, Header: res.Header}
	if res.StatusCode != http.StatusOK {
		_ = json.NewDecoder(res.Body).Decode(&out.Body)
		return nil, out
	}
	return &sse{res: res, r: bufio.NewReader(res.Body)}, out
}

// next returns the next event's type and data (keep-alive comments are
// skipped), or ok false at the end of the stream.
func (s *sse) next(t *testing.T) (event, data string, ok bool) {
	t.Helper()
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return "", "", false
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && event != "":
			return event, data, true
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		}
	}
}

// close ends the stream from the client's side.
func (s *sse) close() { s.res.Body.Close() }

// heldDeployWorld is a deploy world whose Agent never becomes ready: its
// deployment stays pending until the test changes it.
func heldDeployWorld(t *testing.T, url string, opts ...func(*server.Main)) (*deployWorld, string) {
	d := newDeployWorld(t, url, opts...)
	d.fake.set(func(f *fakeCompute) { f.notReady[d.agent] = -1 })
	return d, d.deploy(t, d.agent)
}

// TestDeploymentStreamWakesOnChange: with both of the stream's timers at
// 5 minutes, a change committed to the deployment (on PostgreSQL through
// another database handle, as another occ replica) still reaches the
// stream: it is announced, not polled.
func TestDeploymentStreamWakesOnChange(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, url string) {
		d, rev := heldDeployWorld(t, url, withStreams(16, 5*time.Minute, 5*time.Minute))
		s, r := d.openStream(t, d.e.admin, rev)
		if s == nil {
			t.Fatalf("stream = %d %v", r.Status, r.Body)
		}
		if ev, data, _ := s.next(t); ev != "status" || strings.Contains(data, `"failed"`) {
			t.Fatalf("first event = %s %s", ev, data)
		}
		writer := d.e.m.Store()
		if strings.HasPrefix(url, "postgres") {
			writer = storetest.Open(t, url)
		}
		fail(t, writer, d.ns, d.agent, rev)
		for {
			ev, data, ok := s.next(t)
			if !ok {
				t.Fatal("the stream ended without the change")
			}
			if ev == "status" && strings.Contains(data, `"status":"failed"`) && strings.Contains(data, occ.DeployConvergenceDeadline) {
				break
			}
		}
		if ev, data, ok := s.next(t); ok {
			t.Fatalf("the stream went on after a terminal status: %s %s", ev, data)
		}
	})
}

// fail makes the pending deployment fail (the convergence deadline), as
// a worker on st would.
func fail(t *testing.T, st *store.Store, ns, agent, rev string) {
	t.Helper()
	ctx := context.Background()
	dep, err := st.GetDeployment(ctx, ns, agent, rev)
	if err != nil {
		t.Fatal(err)
	}
	dep.Status, dep.ErrorCode, dep.FinishedAt, dep.UpdatedAt = occ.DeploymentFailed, occ.DeployConvergenceDeadline, occ.Millis(time.Now()), occ.Millis(time.Now())
	if err := st.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateDeployment(ctx, dep) }); err != nil {
		t.Fatal(err)
	}
}

// TestDeploymentStreamEndsWhenPermissionLost: a reader whose grant is
// revoked while its stream is open gets one error event and the end of
// the stream at the next recheck; the administrator's stream goes on.
func TestDeploymentStreamEndsWhenPermissionLost(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, url string) {
		d, rev := heldDeployWorld(t, url, withStreams(16, 50*time.Millisecond, 50*time.Millisecond))
		reader, readerID := d.e.principal(grant{perms: []occ.Permission{occ.P(occ.KindAgentRevision, occ.ActionRead)}, namespace: d.ns})
		s, r := d.openStream(t, reader, rev)
		if s == nil {
			t.Fatalf("reader's stream = %d %v", r.Status, r.Body)
		}
		admin, r := d.openStream(t, d.e.admin, rev)
		if admin == nil {
			t.Fatalf("admin's stream = %d %v", r.Status, r.Body)
		}
		for _, st := range []*sse{s, admin} {
			if ev, _, _ := st.next(t); ev != "status" {
				t.Fatalf("first event = %q", ev)
			}
		}
		if _, err := d.e.m.Store().DB().Exec(`DELETE FROM bindings WHERE principal_id = $1`, readerID); err != nil {
			t.Fatal(err)
		}
		ev, data, ok := s.next(t)
		for ok && ev == "status" {
			ev, data, ok = s.next(t)
		}
		var e struct{ Code, Message string }
		if !ok || ev != "error" || json.Unmarshal([]byte(data), &e) != nil || (e.Code != "FORBIDDEN" && e.Code != "NOT_FOUND") || e.Message == "" {
			t.Fatalf("after the revocation: event %q %s (stream open: %v)", ev, data, ok)
		}
		if ev, data, ok := s.next(t); ok {
			t.Fatalf("the stream went on after the error event: %s %s", ev, data)
		}
		// The administrator still follows the deployment to its end.
		fail(t, d.e.m.Store(), d.ns, d.agent, rev)
		for {
			ev, data, ok := admin.next(t)
			if !ok || ev != "status" {
				t.Fatalf("admin's stream: %q %s %v", ev, data, ok)
			}
			if strings.Contains(data, `"status":"failed"`) {
				break
			}
		}
	})
}

// TestDeploymentStreamCap: one principal holds at most
// streams.maxPerPrincipal open streams; one more is refused with 429
// RATE_LIMITED and Retry-After while another principal (in another
// Namespace binding) is served, and closing a stream frees its slot.
func TestDeploymentStreamCap(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, url string) {
		d, rev := heldDeployWorld(t, url, withStreams(2, 5*time.Minute, 5*time.Minute))
		read := []occ.Permission{occ.P(occ.KindAgentRevision, occ.ActionRead)}
		alice, _ := d.e.principal(grant{perms: read, namespace: d.ns})
		bob, _ := d.e.principal(grant{perms: read})
		var open []*sse
		for i := range 2 {
			s, r := d.openStream(t, alice, rev)
			if s == nil {
				t.Fatalf("alice's stream %d = %d %v", i+1, r.Status, r.Body)
			}
			open = append(open, s)
		}
		_, r := d.openStream(t, alice, rev)
		if r.Status != http.StatusTooManyRequests || r.code() != "RATE_LIMITED" || r.Header.Get("Retry-After") == "" {
			t.Fatalf("alice's third stream = %d %v (Retry-After %q)", r.Status, r.Body, r.Header.Get("Retry-After"))
		}
		if s, r := d.openStream(t, bob, rev); s == nil {
			t.Fatalf("bob's stream = %d %v", r.Status, r.Body)
		}
		// A caller without the permission is refused as before, not counted.
		stranger, _ := d.e.principal(grant{perms: read, namespace: d.e.createNamespace("elsewhere")})
		if _, r := d.openStream(t, stranger, rev); r.Status != http.StatusNotFound {
			t.Fatalf("stranger's stream = %d %v", r.Status, r.Body)
		}
		open[0].close()
		waitFor(t, "alice's slot to free", func() bool {
			s, _ := d.openStream(t, alice, rev)
			if s != nil {
				s.close()
			}
			return s != nil
		})
	})
}
