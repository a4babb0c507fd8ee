package app

import (
	"errors"
	"testing"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
	"github.com/openclaw/occ/internal/store/storetest"
)

// idemRequest is the request every idempotency test repeats: create the
// Namespace "idem" with key k-1.
var idemRequest = struct {
	key, op, path string
	body          []byte
}{"k-1", "createNamespace", "/namespaces", []byte(`{"name":"idem"}`)}

// send sends the request's key to a.
func (e *testEnv) send(a *App) (*IdempotencyClaim, *Replay, error) {
	return a.BeginIdempotent(e.ctx, e.admin, idemRequest.key, idemRequest.op, idemRequest.path, idemRequest.body)
}

// begin claims the request's key on a, failing the test on a replay or error.
func (e *testEnv) begin(a *App) *IdempotencyClaim {
	e.t.Helper()
	cl, rp, err := e.send(a)
	if err != nil || rp != nil {
		e.t.Fatalf("claim = replay %v, error %v; want a fresh start", rp, err)
	}
	return cl
}

// create runs the request's use case under cl, as the handler does.
func (e *testEnv) create(a *App, cl *IdempotencyClaim) (occ.Namespace, error) {
	return a.CreateNamespace(cl.Context(e.ctx), e.admin, "idem")
}

// wantRefused checks that the key answers 409 now, on a fresh process.
func (e *testEnv) wantRefused(why string) {
	e.t.Helper()
	_, rp, err := e.send(e.reopen(Options{}))
	if occ.CodeOf(err) != occ.CodeResourceConflict || rp != nil {
		e.t.Fatalf("%s: replay %v, error %v; want RESOURCE_CONFLICT", why, rp, err)
	}
}

// TestIdempotencyCrashBeforeCommit: a request whose process died before
// its transaction committed (the key's record and the change were written
// in it, and rolled back) leaves the key free: the retry runs once, and
// the next retry replays it.
func TestIdempotencyCrashBeforeCommit(t *testing.T) {
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := newTestEnv(t, url, Options{})
		cl := e.begin(e.app)
		killed := errors.New("the process was killed before the commit")
		err := e.app.tx(cl.Context(e.ctx), func(tx *store.Tx) error {
			if err := tx.InsertNamespace(e.ctx, occ.Namespace{ID: occ.NewID(occ.PrefixNamespace), Name: "idem",
				Status: occ.NamespaceProvisioning, CreatedAt: e.app.now(), UpdatedAt: e.app.now(), Version: 1}); err != nil {
				return err
			}
			return killed
		})
		if !errors.Is(err, killed) {
			t.Fatalf("transaction = %v", err)
		}
		// The process is gone: no Finish. A new one gets the retry.
		a := e.reopen(Options{})
		cl = e.begin(a)
		ns, err := e.create(a, cl)
		if err != nil {
			t.Fatalf("retry after the crash: %v", err)
		}
		body := `{"data":{"id":"` + ns.ID + `"}}`
		if err := cl.Finish(e.ctx, 201, body); err != nil {
			t.Fatal(err)
		}
		_, rp, err := e.send(e.reopen(Options{}))
		if err != nil || rp == nil || rp.Status != 201 || rp.Body != body {
			t.Fatalf("second retry = replay %v, error %v; want the first response", rp, err)
		}
		if n := count(t, e.st, "namespaces", "name = 'idem'"); n != 1 {
			t.Fatalf("%d Namespaces named idem, want 1", n)
		}
	})
}

// TestIdempotencyCommittedNeverRepeated: a request whose change committed
// but whose process died before its response was stored is never run
// again with its key: retries answer 409 and nothing more is created.
func TestIdempotencyCommittedNeverRepeated(t *testing.T) {
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := newTestEnv(t, url, Options{})
		if _, err := e.create(e.app, e.begin(e.app)); err != nil {
			t.Fatal(err)
		}
		// The process dies here, before Finish.
		e.wantRefused("retry after a committed create")
		e.wantRefused("another retry")
		if n := count(t, e.st, "namespaces", "name = 'idem'"); n != 1 {
			t.Fatalf("%d Namespaces named idem, want 1", n)
		}
	})
}

// TestIdempotencyOneKeyAtOnce: two requests with one key at once. In one
// process the second is refused before it starts; in two (replicas) both
// start, one commits and the other's transaction is refused, and its
// failure never forgets the winner's record: the next retry replays.
func TestIdempotencyOneKeyAtOnce(t *testing.T) {
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := newTestEnv(t, url, Options{})
		first := e.begin(e.app)
		if _, _, err := e.send(e.app); occ.CodeOf(err) != occ.CodeResourceConflict {
			t.Fatalf("same key in the same process while running = %v, want RESOURCE_CONFLICT", err)
		}
		replica := e.reopen(Options{})
		second := e.begin(replica)
		ns, err := e.create(e.app, first)
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.create(replica, second)
		if ae := occ.AsError(err); ae == nil || ae.Message != occ.MsgIdempotencyUnfinished {
			t.Fatalf("the replica's request = %v, want the unfinished-key conflict", err)
		}
		if err := second.Finish(e.ctx, 409, ""); err != nil {
			t.Fatal(err)
		}
		e.wantRefused("while the first response is not stored")
		if err := first.Finish(e.ctx, 201, `{"data":{"id":"`+ns.ID+`"}}`); err != nil {
			t.Fatal(err)
		}
		_, rp, err := e.send(replica)
		if err != nil || rp == nil || rp.Status != 201 {
			t.Fatalf("retry = replay %v, error %v; want the first response", rp, err)
		}
	})
}

// TestIdempotencyCommitThenError: the create's commit took effect but
// reported an error (a connection lost mid-commit). With an
// Idempotency-Key the request reads its key's record back, finds that it
// committed and answers its 201, which the retry replays; without one it
// answers UNKNOWN_OUTCOME, never a failure a client would repeat blindly.
// Either way the Namespace exists once.
func TestIdempotencyCommitThenError(t *testing.T) {
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e, faults := newFaultyTestEnv(t, url, Options{})
		faults.Inject(storetest.CommitFault{Match: "INSERT INTO namespaces", After: true})
		cl := e.begin(e.app)
		ns, err := e.create(e.app, cl)
		if err != nil {
			t.Fatalf("create whose commit happened and then failed = %v; want its success", err)
		}
		body := `{"data":{"id":"` + ns.ID + `"}}`
		if err := cl.Finish(e.ctx, 201, body); err != nil {
			t.Fatal(err)
		}
		_, rp, err := e.send(e.reopen(Options{}))
		if err != nil || rp == nil || rp.Status != 201 || rp.Body != body {
			t.Fatalf("retry = replay %v, error %v; want the first response", rp, err)
		}

		faults.Inject(storetest.CommitFault{Match: "INSERT INTO namespaces", After: true})
		_, err = e.app.CreateNamespace(e.ctx, e.admin, "unkeyed")
		if occ.CodeOf(err) != occ.CodeUnknownOutcome {
			t.Fatalf("create without a key whose commit failed after it happened = %v; want UNKNOWN_OUTCOME", err)
		}
		_, err = e.app.CreateNamespace(e.ctx, e.admin, "unkeyed")
		if occ.CodeOf(err) != occ.CodeResourceConflict {
			t.Fatalf("its repetition = %v; want RESOURCE_CONFLICT (the name exists)", err)
		}
		for _, name := range []string{"idem", "unkeyed"} {
			if n := count(t, e.st, "namespaces", "name = '"+name+"'"); n != 1 {
				t.Fatalf("%d Namespaces named %s, want 1", n, name)
			}
		}
	})
}

// TestIdempotencyCommitFailedBeforeItHappened: a commit that failed
// without taking effect, reported the same way, leaves the key free: the
// retry runs once.
func TestIdempotencyCommitFailedBeforeItHappened(t *testing.T) {
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e, faults := newFaultyTestEnv(t, url, Options{})
		faults.Inject(storetest.CommitFault{Match: "INSERT INTO namespaces"})
		cl := e.begin(e.app)
		if _, err := e.create(e.app, cl); occ.CodeOf(err) != occ.CodeUnknownOutcome {
			t.Fatalf("create whose commit failed = %v; want UNKNOWN_OUTCOME", err)
		}
		if err := cl.Finish(e.ctx, 503, ""); err != nil {
			t.Fatal(err)
		}
		a := e.reopen(Options{})
		cl = e.begin(a)
		if _, err := e.create(a, cl); err != nil {
			t.Fatalf("retry = %v", err)
		}
		if n := count(t, e.st, "namespaces", "name = 'idem'"); n != 1 {
			t.Fatalf("%d Namespaces named idem, want 1", n)
		}
	})
}
