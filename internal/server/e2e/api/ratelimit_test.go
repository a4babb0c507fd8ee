package api_test

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/httpapi/contracttest"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// untilLimited sends call until it is answered 429 (at most 50 times) and
// returns the statuses before it and the 429.
func untilLimited(t *testing.T, call func() servertest.Resp) ([]int, servertest.Resp) {
	t.Helper()
	var before []int
	for range 50 {
		r := call()
		if r.Status == 429 {
			return before, r
		}
		before = append(before, r.Status)
	}
	t.Fatalf("never limited: %v", before)
	return nil, servertest.Resp{}
}

// wantLimited checks a 429 RATE_LIMITED with its message and a Retry-After
// of whole seconds, at least 1.
func wantLimited(t *testing.T, r servertest.Resp, message string) {
	t.Helper()
	n, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if r.Status != 429 || r.Code() != string(occ.CodeRateLimited) || err != nil || n < 1 {
		t.Fatalf("refusal = %d %v Retry-After %q", r.Status, r.Body, r.Header.Get("Retry-After"))
	}
	if got := r.Body["error"].(map[string]any)["message"]; got != message {
		t.Fatalf("message = %q, want %q", got, message)
	}
}

// allSame reports whether every status is want and there are at least n.
func allSame(statuses []int, want, n int) bool {
	for _, s := range statuses {
		if s != want {
			return false
		}
	}
	return len(statuses) >= n
}

// TestRateLimitPerPrincipal: a principal's requests over its burst are 429
// RATE_LIMITED with Retry-After, denied ones included, and write no audit
// row; another principal is served meanwhile.
func TestRateLimitPerPrincipal(t *testing.T) {
	t.Parallel()
	const burst = 5
	e := servertest.Boot(t, storetest.Migrated(t, "sqlite"), servertest.NewFakeCompute(t), withLimits(func(l *config.Limits, _ *config.HTTP) {
		l.RequestsPerSecondPerPrincipal, l.BurstPerPrincipal = 1, burst
	}))
	reader, readerID := e.Principal(servertest.Grant{Perms: []occ.Permission{occ.P(occ.KindNamespace, occ.ActionRead)}})
	create := func() servertest.Resp { return e.Call("POST", "/namespaces", reader, map[string]any{"name": "denied"}) }
	before, r := untilLimited(t, create)
	if !allSame(before, 403, burst) {
		t.Fatalf("before the limit: %v, want at least %d denials", before, burst)
	}
	wantLimited(t, r, occ.MsgRateLimitedPrincipal)

	denials := func() int {
		r := e.Call("GET", "/audit-events?pageSize=1000&outcome=denied&actorId="+readerID, e.Admin, nil)
		if r.Status != 200 {
			t.Fatalf("audit query = %d %v", r.Status, r.Body)
		}
		return len(r.List())
	}
	was, answered := denials(), 0
	for range 5 {
		if create().Status == 403 { // a token came back meanwhile
			answered++
		}
	}
	if now := denials(); now != was+answered {
		t.Fatalf("denied audit rows went from %d to %d with %d requests denied and the rest limited", was, now, answered)
	}
	if r := e.Call("GET", "/namespaces", e.Admin, nil); r.Status != 200 {
		t.Fatalf("another principal = %d %v", r.Status, r.Body)
	}
}

// TestRateLimitPerClient: requests from one client address over its burst
// are 429 RATE_LIMITED with Retry-After, unauthenticated ones included and
// counted before authentication; another address is served meanwhile.
func TestRateLimitPerClient(t *testing.T) {
	t.Parallel()
	const burst = 5
	e := servertest.Boot(t, storetest.Migrated(t, "sqlite"), servertest.NewFakeCompute(t), withLimits(func(l *config.Limits, _ *config.HTTP) {
		l.RequestsPerSecondPerClient, l.BurstPerClient = 1, burst
	}))
	before, r := untilLimited(t, func() servertest.Resp { return e.Call("GET", "/namespaces", "", nil) })
	if !allSame(before, 401, burst) {
		t.Fatalf("before the limit: %v, want at least %d refusals", before, burst)
	}
	wantLimited(t, r, occ.MsgRateLimitedClient)
	if r := e.Call("GET", "/namespaces", e.Admin, nil); r.Status != 429 {
		t.Fatalf("a valid key from the same address = %d, want 429", r.Status)
	}
	// 127.0.0.2 is another client on the loopback interface.
	other := *e
	other.Client = &http.Client{Transport: contracttest.NewValidatingTransport(t, e.Spec, &http.Transport{
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext})}
	if r := other.Call("GET", "/namespaces", e.Admin, nil); r.Status != 200 {
		t.Fatalf("another client = %d %v", r.Status, r.Body)
	}
}

// heldDiagnoses holds every Diagnose call until release is closed, telling
// entered when one arrives.
type heldDiagnoses struct {
	*servertest.FakeCompute
	entered, release chan struct{}
}

func (h heldDiagnoses) Diagnose(ctx context.Context, r compute.RevisionRef) (compute.Diagnosis, error) {
	h.entered <- struct{}{}
	<-h.release
	return h.FakeCompute.Diagnose(ctx, r)
}

// TestInFlightCap: clients still sending their bodies do not count among
// the requests in flight; with limits.maxInFlight requests being worked on,
// one more is 429 RATE_LIMITED with Retry-After 1; once they end, requests
// are served again.
func TestInFlightCap(t *testing.T) {
	t.Parallel()
	const limit = 2
	held := heldDiagnoses{entered: make(chan struct{}, limit), release: make(chan struct{})}
	release := sync.OnceFunc(func() { close(held.release) })
	t.Cleanup(release)
	d := newDeployWorld(t, storetest.Migrated(t, "sqlite"), withLimits(func(l *config.Limits, _ *config.HTTP) { l.MaxInFlight = limit }),
		func(m *server.Main) { held.FakeCompute = m.Driver.(*servertest.FakeCompute); m.Driver = held })
	e := d.E
	for range limit + 1 {
		holdInFlight(t, e.M.Addr()) // a sign-in whose body never comes
	}
	if r := e.Call("GET", "/healthz", "", nil); r.Status != 200 {
		t.Fatalf("healthz beside stalled bodies = %d %v", r.Status, r.Body)
	}
	rev := d.Deploy(t, d.Agent)
	d.WaitDeployment(t, d.Agent, rev)
	statuses := make(chan int, limit)
	for range limit {
		go func() {
			req, _ := http.NewRequest("POST", e.Base+d.Path("/agents/"+d.Agent+"/deployments/"+rev+"/diagnostics"), nil)
			req.Header.Set("Authorization", "Bearer "+e.Admin)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				statuses <- 0
				return
			}
			res.Body.Close()
			statuses <- res.StatusCode
		}()
	}
	for range limit {
		select {
		case <-held.entered:
		case <-time.After(closeWait):
			t.Fatal("the diagnoses never reached the driver")
		}
	}
	r := e.Call("GET", "/healthz", "", nil)
	wantLimited(t, r, occ.MsgServerBusy)
	if r.Header.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After = %q, want 1", r.Header.Get("Retry-After"))
	}
	release()
	for range limit {
		if s := <-statuses; s != 200 {
			t.Fatalf("a held diagnosis = %d", s)
		}
	}
	if r := e.Call("GET", "/healthz", "", nil); r.Status != 200 {
		t.Fatalf("healthz once they ended = %d", r.Status)
	}
}
