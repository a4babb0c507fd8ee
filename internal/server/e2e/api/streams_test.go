package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
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

// heldDeployWorld is a deploy world whose Agent never becomes ready: its
// deployment stays pending until the test changes it.
func heldDeployWorld(t *testing.T, url string, opts ...func(*server.Main)) (*servertest.DeployWorld, string) {
	d := newDeployWorld(t, url, opts...)
	d.Fake.Set(func(f *servertest.FakeCompute) { f.NotReady[d.Agent] = -1 })
	return d, d.Deploy(t, d.Agent)
}

// TestDeploymentStreamWakesOnChange: with both of the stream's timers at
// 5 minutes, a change committed to the deployment (on PostgreSQL through
// another database handle, as another occ replica) still reaches the
// stream: it is announced, not polled.
func TestDeploymentStreamWakesOnChange(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		d, rev := heldDeployWorld(t, url, withStreams(16, 5*time.Minute, 5*time.Minute))
		s, r := d.OpenStream(t, d.E.Admin, rev)
		if s == nil {
			t.Fatalf("stream = %d %v", r.Status, r.Body)
		}
		if ev, data, _ := s.Next(t); ev != "status" || strings.Contains(data, `"failed"`) {
			t.Fatalf("first event = %s %s", ev, data)
		}
		writer := d.E.M.Store()
		if strings.HasPrefix(url, "postgres") {
			writer = storetest.Open(t, url)
		}
		fail(t, writer, d.Ns, d.Agent, rev)
		for {
			ev, data, ok := s.Next(t)
			if !ok {
				t.Fatal("the stream ended without the change")
			}
			if ev == "status" && strings.Contains(data, `"status":"failed"`) && strings.Contains(data, occ.DeployConvergenceDeadline) {
				break
			}
		}
		if ev, data, ok := s.Next(t); ok {
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
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		d, rev := heldDeployWorld(t, url, withStreams(16, 50*time.Millisecond, 50*time.Millisecond))
		reader, readerID := d.E.Principal(servertest.Grant{Perms: []occ.Permission{occ.P(occ.KindAgentRevision, occ.ActionRead)}, Namespace: d.Ns})
		s, r := d.OpenStream(t, reader, rev)
		if s == nil {
			t.Fatalf("reader's stream = %d %v", r.Status, r.Body)
		}
		admin, r := d.OpenStream(t, d.E.Admin, rev)
		if admin == nil {
			t.Fatalf("admin's stream = %d %v", r.Status, r.Body)
		}
		for _, st := range []*servertest.Sse{s, admin} {
			if ev, _, _ := st.Next(t); ev != "status" {
				t.Fatalf("first event = %q", ev)
			}
		}
		if _, err := d.E.M.Store().DB().Exec(`DELETE FROM bindings WHERE principal_id = $1`, readerID); err != nil {
			t.Fatal(err)
		}
		ev, data, ok := s.Next(t)
		for ok && ev == "status" {
			ev, data, ok = s.Next(t)
		}
		var e struct{ Code, Message string }
		if !ok || ev != "error" || json.Unmarshal([]byte(data), &e) != nil || (e.Code != "FORBIDDEN" && e.Code != "NOT_FOUND") || e.Message == "" {
			t.Fatalf("after the revocation: event %q %s (stream open: %v)", ev, data, ok)
		}
		if ev, data, ok := s.Next(t); ok {
			t.Fatalf("the stream went on after the error event: %s %s", ev, data)
		}
		// The administrator still follows the deployment to its end.
		fail(t, d.E.M.Store(), d.Ns, d.Agent, rev)
		for {
			ev, data, ok := admin.Next(t)
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
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		d, rev := heldDeployWorld(t, url, withStreams(2, 5*time.Minute, 5*time.Minute))
		read := []occ.Permission{occ.P(occ.KindAgentRevision, occ.ActionRead)}
		alice, _ := d.E.Principal(servertest.Grant{Perms: read, Namespace: d.Ns})
		bob, _ := d.E.Principal(servertest.Grant{Perms: read})
		var open []*servertest.Sse
		for i := range 2 {
			s, r := d.OpenStream(t, alice, rev)
			if s == nil {
				t.Fatalf("alice's stream %d = %d %v", i+1, r.Status, r.Body)
			}
			open = append(open, s)
		}
		_, r := d.OpenStream(t, alice, rev)
		if r.Status != http.StatusTooManyRequests || r.Code() != "RATE_LIMITED" || r.Header.Get("Retry-After") == "" {
			t.Fatalf("alice's third stream = %d %v (Retry-After %q)", r.Status, r.Body, r.Header.Get("Retry-After"))
		}
		if s, r := d.OpenStream(t, bob, rev); s == nil {
			t.Fatalf("bob's stream = %d %v", r.Status, r.Body)
		}
		// A caller without the permission is refused as before, not counted.
		stranger, _ := d.E.Principal(servertest.Grant{Perms: read, Namespace: d.E.CreateNamespace("elsewhere")})
		if _, r := d.OpenStream(t, stranger, rev); r.Status != http.StatusNotFound {
			t.Fatalf("stranger's stream = %d %v", r.Status, r.Body)
		}
		open[0].Close()
		servertest.WaitFor(t, "alice's slot to free", func() bool {
			s, _ := d.OpenStream(t, alice, rev)
			if s != nil {
				s.Close()
			}
			return s != nil
		})
	})
}
