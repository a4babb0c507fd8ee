package worker_test

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/backends/backendstest"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/credgateway"
	"github.com/openclaw/occ/internal/credgateway/credgatewaytest"
	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/jobs"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/secrets"
	"github.com/openclaw/occ/internal/store"
	"github.com/openclaw/occ/internal/store/storetest"
	"github.com/openclaw/occ/internal/worker"
)

// env is one installation on a SQLite file in a temporary directory: the
// use cases admit work and the worker under test runs it against a
// computetest driver. No HTTP server is involved.
type env struct {
	t       *testing.T
	ctx     context.Context
	url     string
	st      *store.Store
	faults  *storetest.Faults // the seam under st: commit failures and crashes
	keyring *secrets.Keyring
	dir     string
	app     *app.App
	fake    *computetest.Fake
	driver  compute.Driver // what the worker calls: fake, or a wrapper of it
	opts    worker.Options
	client  *river.Client[*sql.Tx]
	admin   occ.Caller
	ns      string
	backend *backendstest.Server
	caps    compute.Capabilities
	// cgw is the installation's Credential Gateway (withCredentialGateway);
	// nil: none.
	cgw *credgatewaytest.Server
}

// envOption changes an env before its worker is built.
type envOption func(e *env)

// withDriver makes the worker call d (a wrapper of the env's fake).
func withDriver(wrap func(*computetest.Fake) compute.Driver) envOption {
	return func(e *env) { e.driver = wrap(e.fake) }
}

// withFaulty makes the worker call a computetest.Faulty around the env's
// fake, stored in *f.
func withFaulty(f **computetest.Faulty) envOption {
	return func(e *env) {
		*f = computetest.NewFaulty(e.fake)
		e.driver = *f
	}
}

// withOptions changes the worker's options.
func withOptions(fn func(o *worker.Options)) envOption { return func(e *env) { fn(&e.opts) } }

// withCredentialGateway gives the installation a fake Credential Gateway,
// for the use cases and the worker.
func withCredentialGateway() envOption {
	return func(e *env) {
		e.cgw = credgatewaytest.New(e.t)
		e.opts.CredentialGateway = credgateway.New(e.cgw.URL)
	}
}

const adminKey = "occ_0123456789abcdef0123456789abcdef0123456789abcdef"

// chatgptBackend is the Backend every env configures for the use cases.
const chatgptBackend = "chatgpt-main"

// newEnv boots the use cases with the fake's capabilities, makes the
// default Namespace ready and returns with the worker running.
func newEnv(t *testing.T, caps compute.Capabilities, options ...envOption) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	storetest.MigratedFile(t, filepath.Join(dir, "occ.db"))
	url := "sqlite://" + filepath.Join(dir, "occ.db")
	st, faults := storetest.OpenFaulty(t, url)
	keyring, err := secrets.Open(filepath.Join(dir, "secrets.keyset"))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: ctx, url: url, st: st, faults: faults, keyring: keyring, dir: dir, caps: caps,
		fake: computetest.NewFake(caps), backend: backendstest.New(t)}
	e.driver = e.fake
	e.opts = worker.Options{MaxAttempts: 3, PollInterval: 20 * time.Millisecond, ConvergenceTimeout: time.Minute, Concurrency: 4,
		JobTimeout: 10 * time.Second, Secrets: appSecrets{e}, Backends: map[string]string{chatgptBackend: "chatgpt"},
		PluginCatalog: map[string]bool{"github@openai-curated": true}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, o := range options {
		o(e)
	}
	e.client, err = worker.NewClient(st, e.driver, e.opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Bootstrap(ctx, st, jobs.NewEnqueuer(e.client), app.BootstrapOptions{DataDir: dir, AdminEmail: "admin@occ.test",
		AdminPassword: "correct horse battery staple", APIKey: adminKey}); err != nil {
		t.Fatal(err)
	}
	e.openApp()
	if e.admin, err = iam.NewAuthenticator(st).ServiceKey(ctx, adminKey); err != nil {
		t.Fatal(err)
	}
	// The tests hold one caller across many operations, as no request
	// does: its checks read the policy afresh (occ.Caller.AfterRequest).
	e.admin = e.admin.AfterRequest()
	e.start()
	ns, err := e.app.CreateNamespace(ctx, e.admin, "work")
	if err != nil {
		t.Fatal(err)
	}
	e.ns = ns.ID
	e.eventually("the Namespace is ready", func() bool {
		got, err := e.app.GetNamespace(ctx, e.admin, ns.ID)
		return err == nil && got.Status == occ.NamespaceReady
	})
	return e
}

// openApp opens the use cases on e.st, enqueueing through e.client.
func (e *env) openApp() {
	e.t.Helper()
	var err error
	o := app.Options{Secrets: e.keyring, ComputeDriver: e.fake.Name(),
		Compute: e.caps, Backends: []app.Backend{{ID: chatgptBackend, Type: "chatgpt", URL: e.backend.URL}}}
	if e.cgw != nil {
		o.CredentialGateway = credgateway.New(e.cgw.URL)
	}
	e.app, err = app.New(e.ctx, e.st, jobs.NewEnqueuer(e.client), o)
	if err != nil {
		e.t.Fatal(err)
	}
}

// crashRestart stands for kill -9 and a new occ process: the database
// pool dies (nothing more is written, a transaction in flight is lost),
// the worker is torn down, and a new store, use cases and worker start on
// the same file, making work the dead one left running available again as
// occ serve does on SQLite. The compute driver, like the machines it
// drives, lives on.
func (e *env) crashRestart() {
	e.t.Helper()
	e.faults.Crash()
	// Its jobs end at once (cancelled, and nothing they call works);
	// River's completer would keep retrying the dead pool for seconds.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_ = e.client.StopAndCancel(ctx)
	cancel()
	e.st, e.faults = storetest.OpenFaulty(e.t, e.url)
	if _, err := worker.RescueOrphans(e.ctx, e.st); err != nil {
		e.t.Fatal(err)
	}
	c, err := worker.NewClient(e.st, e.driver, e.opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.client = c
	e.openApp()
	if err := e.client.Start(e.ctx); err != nil {
		e.t.Fatal(err)
	}
}

// start runs the worker until stop or the end of the test.
func (e *env) start() {
	e.t.Helper()
	if err := e.client.Start(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(e.stop)
}

// stop stops the worker; work admitted meanwhile waits for start.
func (e *env) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = e.client.Stop(ctx)
}

// restart replaces the worker with a new one built with options, as an
// occ restart with another configuration would (work already queued is
// kept: it is in the database).
func (e *env) restart(options ...envOption) {
	e.t.Helper()
	e.stop()
	for _, o := range options {
		o(e)
	}
	c, err := worker.NewClient(e.st, e.driver, e.opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.client = c
	e.start()
}

// eventually waits up to 20 s for cond.
func (e *env) eventually(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// appSecrets resolves Secrets through the env's use cases.
type appSecrets struct{ e *env }

func (s appSecrets) ResolveSecret(ctx context.Context, nsID, id string) ([]byte, error) {
	return s.e.app.ResolveSecret(ctx, nsID, id)
}

func (s appSecrets) ServiceAccountCredential(ctx context.Context, nsID, id string) ([]byte, error) {
	return s.e.app.ServiceAccountCredential(ctx, nsID, id)
}

// agentSpec is what an Agent of a test needs.
type agentSpec struct {
	mode     string // default embedded
	harness  func(e *env) *occ.HarnessAuth
	backend  string
	plugins  map[string]occ.PluginSelection
	bindings map[string]occ.SecretBinding
}

// apiKey is an api_key harness binding to a new Secret holding value.
func apiKey(value string) func(e *env) *occ.HarnessAuth {
	return func(e *env) *occ.HarnessAuth {
		s := e.secret(value)
		return &occ.HarnessAuth{Method: occ.HarnessAPIKey, Source: &occ.SecretRef{Kind: "secret", NamespaceID: e.ns, ID: s}}
	}
}

// secret creates a Secret in the env's Namespace and returns its ID.
func (e *env) secret(value string) string {
	e.t.Helper()
	s, err := e.app.CreateSecret(e.ctx, e.admin, e.ns, "s-"+occ.NewUUID()[:8], []byte(value))
	if err != nil {
		e.t.Fatal(err)
	}
	return s.ID
}

// agent creates an Agent whose service principal may operate every Secret
// of the Namespace, and returns it.
func (e *env) agent(spec agentSpec) occ.Agent {
	e.t.Helper()
	cfg, err := e.app.CreateConfiguration(e.ctx, e.admin, e.ns, app.ConfigurationInput{Name: "c-" + occ.NewUUID()[:8], Kind: occ.ConfigurationKindAgent,
		Values: map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": "openai/gpt-5"}}}, SecretBindings: spec.bindings})
	if err != nil {
		e.t.Fatal(err)
	}
	if spec.mode == "" {
		spec.mode = occ.ExecutionEmbedded
	}
	in := app.AgentInput{Name: "a-" + occ.NewUUID()[:8], ConfigurationID: cfg.ID, ExecutionMode: spec.mode, Plugins: spec.plugins}
	if spec.harness != nil {
		in.HarnessAuth = app.Optional[*occ.HarnessAuth]{Set: true, Value: spec.harness(e)}
	}
	if spec.backend != "" {
		in.BackendID = app.Optional[string]{Set: true, Value: spec.backend}
	}
	g, err := e.app.CreateAgent(e.ctx, e.admin, e.ns, in)
	if err != nil {
		e.t.Fatal(err)
	}
	e.grant(g.ServicePrincipalID, "agent-secrets", []string{"secret:operate"})
	return g
}

// grant binds principal to a new Namespace role holding perms and returns
// the binding's ID.
func (e *env) grant(principal, role string, perms []string) string {
	e.t.Helper()
	r, err := e.app.CreateRole(e.ctx, e.admin, e.ns, role+"-"+occ.NewUUID()[:8], perms)
	if err != nil {
		e.t.Fatal(err)
	}
	b, err := e.app.CreateBinding(e.ctx, e.admin, e.ns, app.GrantRequest{PrincipalID: principal, RoleID: r.ID})
	if err != nil {
		e.t.Fatal(err)
	}
	return b.ID
}

// deploy admits a revision of the Agent as caller.
func (e *env) deploy(c occ.Caller, g occ.Agent) occ.Revision {
	e.t.Helper()
	rev, err := e.app.Deploy(e.ctx, c, e.ns, g.ID)
	if err != nil {
		e.t.Fatalf("deploy %s: %v", g.Name, err)
	}
	return rev
}

// stopped stops the Agent and waits until it has no active revision and
// the driver runs nothing for it.
func (e *env) stopped(g occ.Agent) {
	e.t.Helper()
	if _, err := e.app.Stop(e.ctx, e.admin, e.ns, g.ID); err != nil {
		e.t.Fatal(err)
	}
	e.eventually("the Agent stops", func() bool {
		got, err := e.app.GetAgent(e.ctx, e.admin, e.ns, g.ID)
		_, running := e.fake.Running(g.ID)
		return err == nil && got.ActiveRevisionID == "" && !running
	})
}

// settled waits for a deployment's terminal status and returns it.
func (e *env) settled(g occ.Agent, rev occ.Revision) app.DeploymentStatus {
	e.t.Helper()
	var st app.DeploymentStatus
	e.eventually("deployment "+rev.ID+" settles", func() bool {
		var err error
		st, err = e.app.GetDeployment(e.ctx, e.admin, e.ns, g.ID, rev.ID)
		return err == nil && occ.DeploymentTerminal(st.Status)
	})
	return st
}

// status reads a deployment's status now.
func (e *env) status(g occ.Agent, rev occ.Revision) app.DeploymentStatus {
	e.t.Helper()
	st, err := e.app.GetDeployment(e.ctx, e.admin, e.ns, g.ID, rev.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// failedWith checks a settled deployment failed with code.
func failedWith(t *testing.T, st app.DeploymentStatus, code string) {
	t.Helper()
	if st.Status != occ.DeploymentFailed || st.Error == nil || st.Error.Code != code {
		t.Fatalf("deployment = %s %+v; want failed with %s", st.Status, st.Error, code)
	}
	if st.Error.Message != occ.DeploymentMessage(code) {
		t.Fatalf("message of %s = %q; want its fixed message", code, st.Error.Message)
	}
}

// auditReasons lists the reason codes of the audit events with action.
func (e *env) auditReasons(action string) []string {
	e.t.Helper()
	evs, err := e.st.ListAuditEvents(e.ctx, store.AuditFilter{Action: action, Limit: 500})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		out = append(out, ev.ReasonCode)
	}
	return out
}
