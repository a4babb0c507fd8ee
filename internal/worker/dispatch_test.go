package worker_test

import (
	"encoding/json"
	"testing"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/occ"
)

// Dispatch rechecks, before any effect, everything admission checked:
// each test admits a revision while the worker is stopped, changes the
// world, starts the worker and reads the outcome. Nothing may reach the
// driver.

// admitted admits a revision of g with the worker stopped, runs change,
// starts the worker again and returns the settled status.
func (e *env) admitted(c occ.Caller, g occ.Agent, change func()) app.DeploymentStatus {
	e.t.Helper()
	e.stop()
	rev := e.deploy(c, g)
	change()
	e.restart()
	return e.settled(g, rev)
}

func nothingRan(t *testing.T, e *env, g occ.Agent) {
	t.Helper()
	if n := e.fake.Calls("PrepareRevision", g.ID); n != 0 {
		t.Fatalf("PrepareRevision ran %d times; want none", n)
	}
}

// deployer is a Namespace service principal that may deploy Agents: it
// holds every grant of the deploy permission set except those in extra,
// which it gets from a binding of its own (returned, to revoke).
func (e *env) deployer(extra []string) (occ.Caller, string) {
	e.t.Helper()
	p, err := e.app.CreateServicePrincipal(e.ctx, e.admin, "deployer-"+occ.NewUUID()[:8], e.ns)
	if err != nil {
		e.t.Fatal(err)
	}
	e.grant(p.ID, "deploy", []string{"agent:deploy", "agent:read", "configuration:read", "secret:operate"})
	revocable := e.grant(p.ID, "extra", extra)
	return occ.Caller{PrincipalID: p.ID, Method: occ.AuthServiceKey}, revocable
}

func (e *env) revoke(bindingID string) {
	e.t.Helper()
	if err := e.app.DeleteBinding(e.ctx, e.admin, e.ns, bindingID); err != nil {
		e.t.Fatal(err)
	}
}

// accountAgent is a dedicated Agent bound to an issued ChatGPT account of
// the env's Backend.
func (e *env) accountAgent() occ.Agent {
	e.t.Helper()
	sa, err := e.app.CreateServiceAccount(e.ctx, e.admin, e.ns, "acct-"+occ.NewUUID()[:8], chatgptBackend)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.app.IssueServiceAccountCredential(e.ctx, e.admin, e.ns, sa.ID); err != nil {
		e.t.Fatal(err)
	}
	return e.agent(agentSpec{mode: occ.ExecutionDedicated, backend: chatgptBackend, harness: func(*env) *occ.HarnessAuth {
		return &occ.HarnessAuth{Method: occ.HarnessChatGPTServiceAccount, ServiceAccountID: sa.ID}
	}})
}

func TestDispatchRechecksTheActorsServiceAccountRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t, computetest.FakeCapabilities())
	g := e.accountAgent()
	deployer, readAccount := e.deployer([]string{"service_account:read"})
	st := e.admitted(deployer, g, func() { e.revoke(readAccount) })
	failedWith(t, st, occ.DeployAuthorizationDenied)
	nothingRan(t, e, g)
	denials := e.auditReasons("agents.deploy")
	if len(denials) == 0 || denials[0] != occ.ReasonAuthorizationDenied {
		t.Fatalf("deploy audit reasons %v; want the dispatch denial recorded", denials)
	}

	// Allowed: the same principal with the grant back deploys.
	e.grant(deployer.PrincipalID, "extra-again", []string{"service_account:read"})
	if st := e.admitted(deployer, g, func() {}); st.Status != occ.DeploymentSucceeded {
		t.Fatalf("deployment with the grant = %+v; want succeeded", st)
	}
}

func TestDispatchRechecksTheAgentPrincipalsSecretOperate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, computetest.FakeCapabilities())
	g := e.agent(agentSpec{harness: apiKey("sk")})
	// The Agent's principal holds secret:operate through agent(); a
	// restriction takes it away after admission.
	st := e.admitted(e.admin, g, func() {
		if _, err := e.app.CreateRestriction(e.ctx, e.admin, e.ns, app.GrantRequest{PrincipalID: g.ServicePrincipalID, Permission: "secret:operate"}); err != nil {
			t.Fatal(err)
		}
	})
	failedWith(t, st, occ.DeployAuthorizationDenied)
	nothingRan(t, e, g)
}

func TestDispatchRechecksTheBackend(t *testing.T) {
	t.Parallel()
	e := newEnv(t, computetest.FakeCapabilities())
	g := e.accountAgent()
	st := e.admitted(e.admin, g, func() {
		e.opts.Backends = map[string]string{} // the installation no longer configures it
	})
	failedWith(t, st, occ.DeployBackendUnavailable)
	nothingRan(t, e, g)
}

func TestDispatchRechecksTheServiceAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t, computetest.FakeCapabilities())
	g := e.accountAgent()
	st := e.admitted(e.admin, g, func() {
		if _, err := e.st.DB().ExecContext(e.ctx, `DELETE FROM service_accounts WHERE id = $1`, g.Settings.HarnessAuth.ServiceAccountID); err != nil {
			t.Fatal(err)
		}
	})
	failedWith(t, st, occ.DeployServiceAccountUnavailable)
	nothingRan(t, e, g)
}

func TestDispatchRefusesWhatTheDriverCannotRun(t *testing.T) {
	t.Parallel()
	embeddedOnly := computetest.FakeCapabilities()
	embeddedOnly.ExecutionModes = []string{occ.ExecutionEmbedded}
	embeddedOnly.PluginApprovalPolicies = []string{"provider_default"}
	for _, tt := range []struct {
		name string
		spec agentSpec
		code string
	}{
		{"dedicated", agentSpec{mode: occ.ExecutionDedicated, harness: apiKey("sk")}, occ.DeployExecutionModeUnsupported},
		{"approval policy", agentSpec{harness: apiKey("sk"), plugins: map[string]occ.PluginSelection{"github@openai-curated": {ApprovalPolicy: "all_actions"}}},
			occ.DeployPluginUnsupported},
		{"plugin outside the catalogs", agentSpec{harness: apiKey("sk"), plugins: map[string]occ.PluginSelection{"other@elsewhere": {}}},
			occ.DeployPluginNotInCatalog},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Admitted by an installation whose driver could run it; the
			// worker's driver (after an upgrade) cannot.
			e := newEnv(t, computetest.FakeCapabilities())
			g := e.agent(tt.spec)
			st := e.admitted(e.admin, g, func() {
				e.fake = computetest.NewFake(embeddedOnly)
				e.driver = e.fake
			})
			failedWith(t, st, tt.code)
			nothingRan(t, e, g)
		})
	}
}

func TestAdmissionRefusesWhatTheDriverCannotRun(t *testing.T) {
	t.Parallel()
	local := compute.Capabilities{ExecutionModes: []string{occ.ExecutionEmbedded}, HarnessAuthMethods: []string{occ.HarnessAPIKey}}
	e := newEnv(t, local)
	dedicated := e.agent(agentSpec{mode: occ.ExecutionDedicated, harness: apiKey("sk")})
	_, err := e.app.Deploy(e.ctx, e.admin, e.ns, dedicated.ID)
	oe := occ.AsError(err)
	if oe == nil || oe.Code != occ.CodeInvalidRequest || len(oe.Details) != 1 ||
		oe.Details[0] != (occ.Detail{Path: "/executionMode", Code: occ.DeployExecutionModeUnsupported}) {
		t.Fatalf("deploy of a dedicated Agent = %v; want 400 naming /executionMode with %s", err, occ.DeployExecutionModeUnsupported)
	}
	pat := e.agent(agentSpec{mode: occ.ExecutionDedicated, harness: func(e *env) *occ.HarnessAuth {
		return &occ.HarnessAuth{Method: occ.HarnessCodexPAT, Source: &occ.SecretRef{Kind: "secret", NamespaceID: e.ns, ID: e.secret("tok")}}
	}})
	if _, err := e.app.Deploy(e.ctx, e.admin, e.ns, pat.ID); occ.CodeOf(err) != occ.CodeInvalidRequest {
		t.Fatalf("deploy of a codex_pat Agent = %v; want 400", err)
	}
	revs, err := e.app.ListRevisions(e.ctx, e.admin, e.ns, dedicated.ID, app.PageRequest{})
	if err != nil || len(revs.Items) != 0 {
		t.Fatalf("revisions after a refused deploy = %+v, %v; want none", revs.Items, err)
	}
	// Allowed: an embedded api_key Agent deploys on the same driver.
	g := e.agent(agentSpec{harness: apiKey("sk")})
	if st := e.settled(g, e.deploy(e.admin, g)); st.Status != occ.DeploymentSucceeded {
		t.Fatalf("embedded deployment = %+v; want succeeded", st)
	}

	// A driver that runs dedicated Codex but cannot deliver a codex_pat
	// names the harness method instead.
	patless := compute.Capabilities{ExecutionModes: []string{occ.ExecutionEmbedded, occ.ExecutionDedicated}, HarnessAuthMethods: []string{occ.HarnessAPIKey}}
	e2 := newEnv(t, patless)
	pat2 := e2.agent(agentSpec{mode: occ.ExecutionDedicated, harness: func(e *env) *occ.HarnessAuth {
		return &occ.HarnessAuth{Method: occ.HarnessCodexPAT, Source: &occ.SecretRef{Kind: "secret", NamespaceID: e.ns, ID: e.secret("tok")}}
	}})
	_, err = e2.app.Deploy(e2.ctx, e2.admin, e2.ns, pat2.ID)
	if oe := occ.AsError(err); oe == nil || len(oe.Details) != 1 || oe.Details[0] != (occ.Detail{Path: "/harnessAuth/method", Code: occ.DeployHarnessAuthUnsupported}) {
		t.Fatalf("deploy of a codex_pat Agent on a driver without it = %v; want 400 naming /harnessAuth/method", err)
	}
}

// admittedThenRewritten admits a deploy of a new Agent while the worker
// is stopped, rewrites the revision's stored snapshot (its fields as
// JSON values) as an older occ or a damaged row would have left it, and
// starts the worker again.
func admittedThenRewritten(t *testing.T, e *env, rewrite func(fields map[string]any)) (occ.Agent, occ.Revision) {
	t.Helper()
	g := e.agent(agentSpec{harness: apiKey("sk")})
	e.stop()
	rev := e.deploy(e.admin, g)
	row, err := e.st.GetRevision(e.ctx, e.ns, g.ID, rev.ID)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal([]byte(row.Snapshot), &fields); err != nil {
		t.Fatal(err)
	}
	rewrite(fields)
	b, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.DB().ExecContext(e.ctx, `UPDATE agent_revisions SET snapshot = $1 WHERE id = $2`, string(b), rev.ID); err != nil {
		t.Fatal(err)
	}
	e.restart()
	return g, rev
}

// TestDispatchRefusesAConfigurationKeyOccOwns: a revision admitted before
// a rule refused one of its Configuration's keys (its snapshot rewritten
// here, as an older occ would have stored it) fails with
// INVALID_CONFIGURATION before anything reaches the driver.
func TestDispatchRefusesAConfigurationKeyOccOwns(t *testing.T) {
	t.Parallel()
	e := newEnv(t, computetest.FakeCapabilities())
	g, rev := admittedThenRewritten(t, e, func(fields map[string]any) {
		doc := fields["configuration"].(map[string]any)["document"].(map[string]any)
		doc["env"] = map[string]any{"vars": map[string]any{"LD_PRELOAD": "/tmp/evil.so"}}
	})
	failedWith(t, e.settled(g, rev), occ.DeployInvalidConfiguration)
	nothingRan(t, e, g)

	// Allowed: the same Agent's next revision, from its clean
	// Configuration, deploys.
	if st := e.settled(g, e.deploy(e.admin, g)); st.Status != occ.DeploymentSucceeded {
		t.Fatalf("clean deployment = %+v; want succeeded", st)
	}
}

// TestDispatchRefusesAnIncompleteRevision: a revision one of whose saved
// settings became unreadable after admission (its plugin selections
// rewritten here) keeps its readable siblings for reading, but is never
// deployed with the rest: it fails with INVALID_ADMITTED_REVISION before
// anything reaches the driver.
func TestDispatchRefusesAnIncompleteRevision(t *testing.T) {
	t.Parallel()
	e := newEnv(t, computetest.FakeCapabilities())
	g, rev := admittedThenRewritten(t, e, func(fields map[string]any) { fields["plugins"] = "not an object" })
	failedWith(t, e.settled(g, rev), occ.DeployInvalidAdmittedRevision)
	nothingRan(t, e, g)
}

// TestSecretBindingsOnADriverWithoutSecretEnvironment: a driver that
// delivers no Secret (ssh) refuses a deploy whose Configuration binds one
// with 400 naming /secretBindings, and a revision admitted before the
// driver changed fails with SECRET_ENVIRONMENT_UNSUPPORTED before anything
// runs; the same Agent without bindings deploys.
func TestSecretBindingsOnADriverWithoutSecretEnvironment(t *testing.T) {
	t.Parallel()
	secretless := computetest.FakeCapabilities()
	secretless.SecretEnvironment = false
	bound := func(e *env) agentSpec {
		return agentSpec{harness: apiKey("sk"), bindings: map[string]occ.SecretBinding{
			"SLACK_BOT_TOKEN": {Source: occ.SecretRef{Kind: "secret", NamespaceID: e.ns, ID: e.secret("xoxb")}, Delivery: "env"}}}
	}

	e := newEnv(t, secretless)
	g := e.agent(bound(e))
	_, err := e.app.Deploy(e.ctx, e.admin, e.ns, g.ID)
	if oe := occ.AsError(err); oe == nil || oe.Code != occ.CodeInvalidRequest || len(oe.Details) != 1 ||
		oe.Details[0] != (occ.Detail{Path: "/secretBindings", Code: occ.DeploySecretEnvironmentUnsupported}) {
		t.Fatalf("deploy with Secret bindings = %v; want 400 naming /secretBindings with %s", err, occ.DeploySecretEnvironmentUnsupported)
	}
	if revs, err := e.app.ListRevisions(e.ctx, e.admin, e.ns, g.ID, app.PageRequest{}); err != nil || len(revs.Items) != 0 {
		t.Fatalf("revisions after a refused deploy = %+v, %v; want none", revs.Items, err)
	}
	plain := e.agent(agentSpec{harness: apiKey("sk")})
	if st := e.settled(plain, e.deploy(e.admin, plain)); st.Status != occ.DeploymentSucceeded {
		t.Fatalf("deployment without bindings = %+v; want succeeded", st)
	}

	// Admitted by a driver that delivers Secrets; the worker's cannot.
	e2 := newEnv(t, computetest.FakeCapabilities())
	g2 := e2.agent(bound(e2))
	st := e2.admitted(e2.admin, g2, func() {
		e2.fake = computetest.NewFake(secretless)
		e2.driver = e2.fake
	})
	failedWith(t, st, occ.DeploySecretEnvironmentUnsupported)
	nothingRan(t, e2, g2)
}
