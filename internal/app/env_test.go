package app_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/credgateway"
	"github.com/openclaw/occ/internal/credgateway/credgatewaytest"
	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/secrets"
	"github.com/openclaw/occ/internal/store"
	"github.com/openclaw/occ/internal/store/storetest"
)

// env is the use cases over one fresh, bootstrapped database (a storetest
// URL) with a Credential Gateway (credgatewaytest), and no worker: queued
// work is dropped, so a new Namespace stays provisioning.
type env struct {
	t     *testing.T
	ctx   context.Context
	st    *store.Store
	app   *app.App
	opts  app.Options // app's, for replicas
	admin occ.Caller  // the bootstrap service principal: the installation administrator
	ns    string      // set by withNamespace
	cfg   string      // a Configuration in ns, set by withNamespace
	gw    *hookedGateway
}

// hookedGateway is the env's Credential Gateway client (credgatewaytest's)
// with a hook run at the start of the next Register calls: a credential
// source update registers between reading the source and writing it, so
// the hook is "another writer got there first".
type hookedGateway struct {
	credgateway.Client
	mu    sync.Mutex
	hook  func()
	times int
}

// before runs hook at the start of the next n Register calls.
func (g *hookedGateway) before(n int, hook func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.hook, g.times = hook, n
}

func (g *hookedGateway) Register(ctx context.Context, r credgateway.Registration) error {
	g.mu.Lock()
	hook := g.hook
	if g.times--; g.times < 0 {
		hook = nil
	}
	g.mu.Unlock()
	if hook != nil {
		hook()
	}
	return g.Client.Register(ctx, r)
}

// noJobs is an Enqueuer that drops the work (no worker runs in these tests).
type noJobs struct{}

func (noJobs) Enqueue(context.Context, *store.Tx, river.JobArgs) error { return nil }

const adminKey = "occ_0123456789abcdef0123456789abcdef0123456789abcdef"

// newEnv migrates and bootstraps the database at url and returns the use
// cases with the installation administrator as e.admin, after options.
func newEnv(t *testing.T, url string, options ...func(*env)) *env {
	t.Helper()
	return newEnvWithCompute(t, url, occ.ComputeCapabilities{}, options...)
}

// newEnvWithCompute is newEnv whose compute driver ("local") declares
// compute, so deploys are admitted.
func newEnvWithCompute(t *testing.T, url string, compute occ.ComputeCapabilities, options ...func(*env)) *env {
	t.Helper()
	ctx := context.Background()
	st := storetest.Open(t, url)
	dir := t.TempDir()
	if _, err := app.Bootstrap(ctx, st, noJobs{}, app.BootstrapOptions{DataDir: dir, AdminEmail: "admin@occ.test",
		AdminPassword: "correct horse battery staple", APIKey: adminKey}); err != nil {
		t.Fatal(err)
	}
	keyring, err := secrets.Open(filepath.Join(dir, "secrets.keyset"))
	if err != nil {
		t.Fatal(err)
	}
	gw := &hookedGateway{Client: credgateway.New(credgatewaytest.New(t).URL)}
	opts := app.Options{Secrets: keyring, CredentialGateway: gw, ComputeDriver: "local", Compute: compute}
	a, err := app.New(ctx, st, noJobs{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := iam.NewAuthenticator(st).ServiceKey(ctx, adminKey)
	if err != nil {
		t.Fatal(err)
	}
	// The tests hold one caller across many operations, as no request
	// does: its checks read the policy afresh (occ.Caller.AfterRequest).
	e := &env{t: t, ctx: ctx, st: st, app: a, opts: opts, admin: admin.AfterRequest(), gw: gw}
	for _, o := range options {
		o(e)
	}
	return e
}

// replica is another occ API process over e's database, as a second
// replica of a Deployment is: its writers do not take turns with e.app's.
func (e *env) replica() *app.App {
	e.t.Helper()
	a, err := app.New(e.ctx, e.st, noJobs{}, e.opts)
	e.must("start a replica", err)
	return a
}

// withT returns a copy of e that reports to a subtest.
func (e *env) withT(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

// withNamespace gives the env a ready Namespace (e.ns) holding one
// Configuration (e.cfg), for tests of Namespace-owned resources.
func withNamespace(e *env) {
	e.ns = e.namespace("work")
	e.setNamespaceStatus(occ.NamespaceReady)
	e.cfg = e.configuration()
}

// setNamespaceStatus sets e.ns's status straight in the store, as the
// worker would.
func (e *env) setNamespaceStatus(status occ.NamespaceStatus) {
	e.t.Helper()
	e.must("set the Namespace "+string(status), e.st.InTx(e.ctx, func(tx *store.Tx) error {
		ns, err := tx.GetNamespace(e.ctx, e.ns)
		if err != nil {
			return err
		}
		ns.Status = status
		_, err = tx.UpdateNamespace(e.ctx, ns)
		return err
	}))
}

// configuration creates an empty agent Configuration in e.ns.
func (e *env) configuration() string {
	e.t.Helper()
	c, err := e.app.CreateConfiguration(e.ctx, e.admin, e.ns, app.ConfigurationInput{Name: "c-" + occ.NewUUID()[:8], Kind: occ.ConfigurationKindAgent})
	e.must("create configuration", err)
	return c.ID
}

// namespace creates a Namespace as the administrator and returns its ID.
func (e *env) namespace(name string) string {
	e.t.Helper()
	ns, err := e.app.CreateNamespace(e.ctx, e.admin, name)
	if err != nil {
		e.t.Fatal(err)
	}
	return ns.ID
}

// grant describes a principal to make straight in the store.
type grant struct {
	perms     []occ.Permission
	namespace string // binding scope; "" = installation
	scoped    bool   // the principal itself belongs to namespace
}

// principal makes a service principal with one role binding of g's
// permissions and returns it as a caller (authenticated by key).
func (e *env) principal(g grant) occ.Caller {
	e.t.Helper()
	now := time.Now()
	p := occ.Principal{ID: occ.NewID(occ.PrefixServicePrincipal), Kind: occ.PrincipalService, Name: "test", CreatedAt: now, UpdatedAt: now, Version: 1}
	if g.scoped {
		p.NamespaceID = g.namespace
	}
	e.must("insert principal", e.st.InsertPrincipal(e.ctx, p))
	if len(g.perms) > 0 {
		e.must("bind principal", e.bind(p.ID, g.namespace, g.perms...))
	}
	return occ.Caller{PrincipalID: p.ID, Kind: occ.PrincipalService, Method: occ.AuthServiceKey}
}

// bind gives principal a new role of perms at scope nsID ("" =
// installation), straight in the store.
func (e *env) bind(principalID, nsID string, perms ...occ.Permission) error {
	now := time.Now()
	perms = slices.Compact(slices.SortedFunc(slices.Values(perms), func(a, b occ.Permission) int { return strings.Compare(a.String(), b.String()) }))
	return e.st.InTx(e.ctx, func(tx *store.Tx) error {
		role := occ.Role{ID: occ.NewID(occ.PrefixRole), Name: "r-" + occ.NewUUID(), NamespaceID: nsID, Permissions: perms, CreatedAt: now}
		if err := tx.InsertRole(e.ctx, role); err != nil {
			return err
		}
		return tx.InsertBinding(e.ctx, occ.Binding{ID: occ.NewID(occ.PrefixBinding), PrincipalID: principalID, RoleID: role.ID,
			NamespaceID: nsID, CreatedBy: principalID, CreatedAt: now})
	})
}

// wantCode fails the test unless err carries code.
func (e *env) wantCode(what string, err error, code occ.Code) {
	e.t.Helper()
	if got := occ.CodeOf(err); got != code {
		e.t.Fatalf("%s: %v, want %s", what, err, code)
	}
}

// must fails the test on err.
func (e *env) must(what string, err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
}

// denials returns the authorization_denial events of actor for action.
func (e *env) denials(actor, action string) []occ.AuditEvent {
	e.t.Helper()
	evs, err := e.st.ListAuditEvents(e.ctx, store.AuditFilter{ActorID: actor, Action: action, Kind: string(occ.AuditDenial), Limit: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	return evs
}
