package worker_test

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/credgateway"
	"github.com/openclaw/occ/internal/credgateway/credgatewaytest"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/worker"
)

// sourceAgent is a dedicated Agent bound to a new credential source
// registered with the env's Credential Gateway, whose Secret (field
// api_key) holds value.
func (e *env) sourceAgent(value string) (occ.Agent, occ.CredentialSource) {
	e.t.Helper()
	sec := e.secret(value)
	cs, err := e.app.CreateCredentialSource(e.ctx, e.admin, e.ns, app.CredentialSourceInput{Name: "cs-" + occ.NewUUID()[:8], Type: "openai",
		Secrets: map[string]occ.SecretRef{"api_key": {Kind: "secret", NamespaceID: e.ns, ID: sec}}})
	if err != nil {
		e.t.Fatal(err)
	}
	g := e.agent(agentSpec{mode: occ.ExecutionDedicated, harness: func(*env) *occ.HarnessAuth {
		return &occ.HarnessAuth{Method: occ.HarnessCredentialSource, SourceID: cs.ID}
	}})
	return g, cs
}

func TestDedicatedCredentialSourceDeliversOnlyTheGatewaysPlaceholderToTheHarness(t *testing.T) {
	t.Parallel()
	e := newEnv(t, computetest.FakeCapabilities(), withCredentialGateway())
	real := "sk-real-" + occ.NewUUID()
	g, _ := e.sourceAgent(real)
	rev := e.deploy(e.admin, g)
	if st := e.settled(g, rev); st.Status != occ.DeploymentSucceeded {
		t.Fatalf("deployment = %+v; want succeeded", st)
	}
	h := e.fake.HarnessEnv(g.ID)
	if p := h[compute.HarnessAPIKeyEnv]; !strings.HasPrefix(p, "cgw-") || h[compute.HarnessBaseURLEnv] != e.cgw.URL+"/relay/v1" || len(h) != 2 {
		t.Fatalf("the harness got %v; want only the gateway's placeholder and base URL", h)
	}
	for k, v := range h {
		if strings.Contains(v, real) {
			t.Fatalf("the harness got the source's credential in %s", k)
		}
	}
	for k, v := range e.fake.Env(g.ID) {
		if strings.Contains(v, real) || v == h[compute.HarnessAPIKeyEnv] {
			t.Fatalf("the gateway's environment holds the credential or the placeholder in %s", k)
		}
	}
	d := e.cgw.Deliveries()
	if len(d) == 0 {
		t.Fatal("the gateway was never asked for a delivery")
	}
	for _, dl := range d {
		if dl.NamespaceID != e.ns || dl.AgentID != g.ID || dl.RevisionID != rev.ID {
			t.Fatalf("a delivery for %+v; want the revision's only", dl)
		}
	}
}

func TestDedicatedCredentialSourceFailureCodes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		change func(e *env, cs occ.CredentialSource)
		code   string
	}{
		{"unregistered at the gateway", func(e *env, cs occ.CredentialSource) {
			if err := credgateway.New(e.cgw.URL).Remove(context.Background(), cs.NamespaceID, cs.ID); err != nil {
				t.Fatal(err)
			}
		}, occ.DeployCredentialSourceUnavailable},
		{"the gateway refuses the delivery", func(e *env, _ occ.CredentialSource) { e.cgw.SetMode(credgatewaytest.Reject) }, occ.DeployCredentialSourceUnavailable},
		{"no gateway configured", func(e *env, _ occ.CredentialSource) { e.opts.CredentialGateway = nil }, occ.DeployCredentialSourceUnavailable},
		{"the gateway refuses the source's credential", func(e *env, _ occ.CredentialSource) { e.cgw.SetMode(credgatewaytest.RefuseCredential) }, occ.DeployRuntimeAuthFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, computetest.FakeCapabilities(), withCredentialGateway())
			g, cs := e.sourceAgent("sk-" + occ.NewUUID())
			st := e.admitted(e.admin, g, func() { tt.change(e, cs) })
			failedWith(t, st, tt.code)
			nothingRan(t, e, g)
		})
	}
}

// An unreachable gateway fails the attempt, not the deployment: it
// succeeds once the gateway answers.
func TestDedicatedCredentialSourceWaitsForAnUnavailableGateway(t *testing.T) {
	t.Parallel()
	e := newEnv(t, computetest.FakeCapabilities(), withCredentialGateway(), withOptions(func(o *worker.Options) { o.MaxAttempts = 25 }))
	g, _ := e.sourceAgent("sk-" + occ.NewUUID())
	e.cgw.SetMode(credgatewaytest.Fail)
	before := e.cgw.Requests()
	rev := e.deploy(e.admin, g)
	e.eventually("the gateway is asked again", func() bool { return e.cgw.Requests() >= before+2 })
	e.cgw.SetMode(credgatewaytest.OK)
	if st := e.settled(g, rev); st.Status != occ.DeploymentSucceeded {
		t.Fatalf("deployment = %+v; want succeeded once the gateway answers", st)
	}
}

// kindAgent is a dedicated Agent bound to a ChatGPT account of the env's
// Backend whose issued credential is of kind; it returns the credential.
func (e *env) kindAgent(kind string) (occ.Agent, string) {
	e.t.Helper()
	e.backend.SetKind(kind)
	g := e.accountAgent()
	v, err := e.app.ServiceAccountCredential(e.ctx, e.ns, g.Settings.HarnessAuth.ServiceAccountID)
	if err != nil {
		e.t.Fatal(err)
	}
	return g, string(v)
}

func TestDedicatedServiceAccountDeliversTheIssuedCredentialOnlyToTheHarness(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		kind, want, workspace string
	}{
		{"access_token", compute.HarnessAccessTokenEnv, "ws_team-1"},
		{"api_key", compute.HarnessAPIKeyEnv, ""},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, computetest.FakeCapabilities(), withOptions(func(o *worker.Options) {
				if tt.workspace != "" {
					o.BackendWorkspaces = map[string]string{chatgptBackend: tt.workspace}
				}
			}))
			g, cred := e.kindAgent(tt.kind)
			rev := e.deploy(e.admin, g)
			if st := e.settled(g, rev); st.Status != occ.DeploymentSucceeded {
				t.Fatalf("deployment = %+v; want succeeded", st)
			}
			want := map[string]string{tt.want: cred}
			if tt.workspace != "" {
				want[compute.HarnessWorkspaceEnv] = tt.workspace
			}
			if h := e.fake.HarnessEnv(g.ID); !maps.Equal(h, want) {
				t.Fatalf("the harness got %v; want %v", h, want)
			}
			for k, v := range e.fake.Env(g.ID) {
				if strings.Contains(v, e.backend.Canary) {
					t.Fatalf("the gateway's environment holds the account's credential in %s", k)
				}
			}
		})
	}
}

func TestDedicatedServiceAccountFailureCodes(t *testing.T) {
	t.Parallel()
	t.Run("a kind Codex cannot log in with", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, computetest.FakeCapabilities())
		g, _ := e.kindAgent("oauth_access_token")
		failedWith(t, e.admitted(e.admin, g, func() {}), occ.DeployHarnessAuthUnsupported)
		nothingRan(t, e, g)
	})
	t.Run("expired before startup", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, computetest.FakeCapabilities())
		g, _ := e.kindAgent("access_token")
		st := e.admitted(e.admin, g, func() {
			if _, err := e.st.DB().ExecContext(e.ctx, `UPDATE service_accounts SET credential_expires_at = 1000 WHERE id = $1`, g.Settings.HarnessAuth.ServiceAccountID); err != nil {
				t.Fatal(err)
			}
		})
		failedWith(t, st, occ.DeployServiceAccountUnavailable)
		nothingRan(t, e, g)
	})
}
