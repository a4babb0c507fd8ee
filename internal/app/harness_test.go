package app

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/riverqueue/river"

	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/secrets"
	"github.com/openclaw/occ/internal/store"
	"github.com/openclaw/occ/internal/store/storetest"
)

// noJobs is an Enqueuer that drops work: use case tests run no worker.
type noJobs struct{}

func (noJobs) Enqueue(context.Context, *store.Tx, river.JobArgs) error { return nil }

// count returns the number of rows of table matching where ("" = all).
func count(t *testing.T, st *store.Store, table, where string) int {
	t.Helper()
	q := "SELECT COUNT(*) FROM " + table
	if where != "" {
		q += " WHERE " + where
	}
	var n int
	if err := st.DB().QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// testAdminPassword and testAdminKey are the bootstrap credentials of every
// testEnv.
const (
	testAdminEmail    = "admin@occ.test"
	testAdminPassword = "correct horse battery staple"
	testAdminKey      = "occ_0123456789abcdef0123456789abcdef0123456789abcdef"
)

// testEnv is the use cases over a fresh, bootstrapped database, with no
// worker and no HTTP server.
type testEnv struct {
	t       *testing.T
	ctx     context.Context
	st      *store.Store
	keyring *secrets.Keyring // every App of the env shares it, as replicas share the keyset
	app     *App
	admin   occ.Caller // the bootstrap service principal
}

// newTestEnv bootstraps the database at url and opens the use cases on it
// with opts (and a keyring of the env's).
func newTestEnv(t *testing.T, url string, opts Options) *testEnv {
	t.Helper()
	return bootTestEnv(t, storetest.Open(t, url), opts)
}

// newFaultyTestEnv is newTestEnv on a store whose commits can be made to
// fail (storetest.Faults).
func newFaultyTestEnv(t *testing.T, url string, opts Options) (*testEnv, *storetest.Faults) {
	t.Helper()
	st, faults := storetest.OpenFaulty(t, url)
	return bootTestEnv(t, st, opts), faults
}

func bootTestEnv(t *testing.T, st *store.Store, opts Options) *testEnv {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := Bootstrap(ctx, st, noJobs{}, BootstrapOptions{DataDir: dir, AdminEmail: testAdminEmail,
		AdminPassword: testAdminPassword, APIKey: testAdminKey}); err != nil {
		t.Fatal(err)
	}
	kr, err := secrets.Open(filepath.Join(dir, "secrets.keyset"))
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{t: t, ctx: ctx, st: st, keyring: kr}
	e.app = e.reopen(opts)
	if e.admin, err = iam.NewAuthenticator(st).ServiceKey(ctx, testAdminKey); err != nil {
		t.Fatal(err)
	}
	// The tests hold one caller across many operations, as no request
	// does: its checks read the policy afresh (occ.Caller.AfterRequest).
	e.admin = e.admin.AfterRequest()
	return e
}

// reopen returns new use cases over the same database, as a restarted
// process (or another replica) has.
func (e *testEnv) reopen(opts Options) *App {
	e.t.Helper()
	if opts.Secrets == nil {
		opts.Secrets = e.keyring
	}
	a, err := New(e.ctx, e.st, noJobs{}, opts)
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}
