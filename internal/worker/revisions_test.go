package worker_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/worker"
)

// The worker's revision paths against the fake driver: each test admits
// through the use cases and checks what a user would read back (the
// deployment status) and what ran (the fake).

func TestDeploySucceedsAndDeliversSecretsOnlyToTheRuntime(t *testing.T) {
	t.Parallel()
	e := newEnv(t, computetest.FakeCapabilities())
	slack := e.secret("xoxb-slack")
	g := e.agent(agentSpec{harness: apiKey("sk-model"),
		bindings: map[string]occ.SecretBinding{"SLACK_BOT_TOKEN": {Source: occ.SecretRef{Kind: "secret", NamespaceID: e.ns, ID: slack}, Delivery: "env"}}})
	rev := e.deploy(e.admin, g)
	st := e.settled(g, rev)
	if st.Status != occ.DeploymentSucceeded || st.Error != nil || st.Progress != nil {
		t.Fatalf("deployment = %+v; want succeeded", st)
	}
	env := e.fake.Env(g.ID)
	if env["OPENAI_API_KEY"] != "sk-model" || env["SLACK_BOT_TOKEN"] != "xoxb-slack" || len(env) != 2 {
		t.Fatalf("the runtime got env %v; want the model key and the Slack token only", env)
	}
	if run, ok := e.fake.Running(g.ID); !ok || run != rev.ID || e.fake.Active(g.ID) != rev.ID {
		t.Fatalf("running %q %v, active %q; want revision %s", run, ok, e.fake.Active(g.ID), rev.ID)
	}
	got, err := e.app.GetAgent(e.ctx, e.admin, e.ns, g.ID)
	if err != nil || got.ActiveRevisionID != rev.ID {
		t.Fatalf("Agent's active revision = %q, %v; want %s", got.ActiveRevisionID, err, rev.ID)
	}
}

// TestDedicatedDeliversTheModelCredentialOnlyToTheHarness: a dedicated
// revision's model credential goes to the harness, under the variable its
// login reads (api_key: OPENAI_API_KEY, codex_pat: CODEX_ACCESS_TOKEN),
// and never into the gateway's environment; other Secret bindings still go
// to the gateway.
func TestDedicatedDeliversTheModelCredentialOnlyToTheHarness(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		method, want string
	}{{occ.HarnessAPIKey, "OPENAI_API_KEY"}, {occ.HarnessCodexPAT, "CODEX_ACCESS_TOKEN"}} {
		t.Run(tt.method, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, computetest.FakeCapabilities())
			slack := e.secret("xoxb-slack")
			g := e.agent(agentSpec{mode: occ.ExecutionDedicated, harness: func(e *env) *occ.HarnessAuth {
				return &occ.HarnessAuth{Method: tt.method, Source: &occ.SecretRef{Kind: "secret", NamespaceID: e.ns, ID: e.secret("model-credential")}}
			}, bindings: map[string]occ.SecretBinding{"SLACK_BOT_TOKEN": {Source: occ.SecretRef{Kind: "secret", NamespaceID: e.ns, ID: slack}, Delivery: "env"}}})
			rev := e.deploy(e.admin, g)
			if st := e.settled(g, rev); st.Status != occ.DeploymentSucceeded {
				t.Fatalf("deployment = %+v; want succeeded", st)
			}
			if h := e.fake.HarnessEnv(g.ID); h[tt.want] != "model-credential" || len(h) != 1 {
				t.Fatalf("the harness got %v; want only %s", h, tt.want)
			}
			if env := e.fake.Env(g.ID); env["SLACK_BOT_TOKEN"] != "xoxb-slack" || len(env) != 1 {
				t.Fatalf("the gateway got env %v; want the Slack token only, never the model credential", env)
			}
		})
	}
}

func TestQueuedDeploymentShowsWhenItIsEligible(t *testing.T) {
	t.Parallel()
	e := newEnv(t, computetest.FakeCapabilities())
	e.stop()
	g := e.agent(agentSpec{harness: apiKey("sk")})
	before := time.Now().Add(-time.Second)
	rev := e.deploy(e.admin, g)
	st := e.status(g, rev)
	if st.Status != occ.DeploymentQueued || st.Progress == nil || st.Progress.NextAttemptAt == nil ||
		st.Progress.NextAttemptAt.Before(before) || st.Progress.NextAttemptAt.After(time.Now()) {
		t.Fatalf("an unclaimed deployment = %s %+v; want queued with nextAttemptAt = its admission", st.Status, st.Progress)
	}
}

func TestNotReadyDefersWithThePendingReason(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ reason, attempt string }{
		{"", occ.AttemptIncomplete},
		{occ.PendingGatewayStarting, occ.AttemptGatewayStarting},
		{occ.PendingGatewayUnavailable, occ.AttemptGateway},
		{occ.PendingWorkloadUnschedulable, occ.AttemptUnschedulable},
		{occ.PendingWorkspaceNode, occ.AttemptWorkspaceNode},
		{"SOMETHING_NEW", occ.AttemptIncomplete},
	} {
		t.Run(tt.attempt+"/"+tt.reason, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, computetest.FakeCapabilities())
			g := e.agent(agentSpec{harness: apiKey("sk")})
			e.fake.NotReady(g.ID, -1, tt.reason, &compute.RuntimeFailure{Component: "gateway", Check: "readyz", CheckedAt: time.Now(), Code: "UNAVAILABLE"})
			rev := e.deploy(e.admin, g)
			var st = e.status(g, rev)
			e.eventually("the attempt is recorded", func() bool {
				st = e.status(g, rev)
				return st.Progress != nil && st.Progress.LastAttempt != nil && st.Status == occ.DeploymentQueued
			})
			if la := st.Progress.LastAttempt; la.Code != tt.attempt {
				t.Fatalf("lastAttempt = %+v; want %s", la, tt.attempt)
			}
			if st.Progress.NextAttemptAt == nil {
				t.Fatal("a deferred deployment has no nextAttemptAt")
			}
			calls := e.fake.Calls("PrepareRevision", g.ID)
			e.eventually("another pass", func() bool { return e.fake.Calls("PrepareRevision", g.ID) > calls+1 })
			e.fake.NotReady(g.ID, 0, "", nil)
			if st := e.settled(g, rev); st.Status != occ.DeploymentSucceeded {
				t.Fatalf("deployment = %+v; want succeeded once ready (deferrals spend no attempt)", st)
			}
		})
	}
}

// TestProgressShowsTheDeploysPhases: a first deploy's progress says what
// is happening, phase by phase, as the user sees it in GET …/deployments:
// the runtime installing (with its phase and bytes), the gateway starting,
// the startup model probe running (while the driver call lasts), then
// succeeded.
func TestProgressShowsTheDeploysPhases(t *testing.T) {
	t.Parallel()
	e := newEnv(t, computetest.FakeCapabilities())
	g := e.agent(agentSpec{harness: apiKey("sk")})
	var rev occ.Revision
	lastAttempt := func(want string) *app.Attempt {
		t.Helper()
		var la *app.Attempt
		e.eventually("progress "+want, func() bool {
			st := e.status(g, rev)
			if st.Progress == nil || st.Progress.LastAttempt == nil {
				return false
			}
			la = st.Progress.LastAttempt
			return la.Code == want
		})
		if _, msg := occ.AttemptProgress(want); la.Message != msg || strings.Contains(msg, "not completed") {
			t.Fatalf("%s message %q; want its fixed message", want, la.Message)
		}
		return la
	}

	e.fake.Installing(g.ID, &compute.InstallProgress{Phase: occ.InstallPhaseNode, Bytes: 1 << 20})
	rev = e.deploy(e.admin, g)
	if la := lastAttempt(occ.AttemptRuntimeInstalling); la.Install == nil || *la.Install != (app.InstallProgress{Phase: occ.InstallPhaseNode, Bytes: 1 << 20}) {
		t.Fatalf("installing attempt = %+v; want phase %s and 1 MiB", la, occ.InstallPhaseNode)
	}
	e.fake.Installing(g.ID, &compute.InstallProgress{Phase: occ.InstallPhaseOpenClaw, Bytes: 90 << 20})
	e.eventually("the install's next phase", func() bool {
		la := e.status(g, rev).Progress.LastAttempt
		return la.Install != nil && la.Install.Phase == occ.InstallPhaseOpenClaw && la.Install.Bytes == 90<<20
	})

	e.fake.NotReady(g.ID, -1, occ.PendingGatewayStarting, nil)
	e.fake.Installing(g.ID, nil)
	if la := lastAttempt(occ.AttemptGatewayStarting); la.Install != nil {
		t.Fatalf("gateway starting carries install data %+v", la.Install)
	}

	release := make(chan struct{})
	e.fake.Probing(g.ID, release)
	e.fake.NotReady(g.ID, 0, "", nil)
	lastAttempt(occ.AttemptModelProbeRunning)
	if st := e.status(g, rev); st.Status != occ.DeploymentRunning {
		t.Fatalf("status while the model probe runs = %s; want running", st.Status)
	}
	close(release)
	if st := e.settled(g, rev); st.Status != occ.DeploymentSucceeded {
		t.Fatalf("deployment = %+v; want succeeded", st)
	}
	// Phases are not failures: the attempts audited are the pending ones.
	for _, code := range e.auditReasons(worker.ActRevisionAttempt) {
		if code == occ.AttemptModelProbeRunning {
			t.Fatalf("the model probe phase was audited as an attempt")
		}
	}
}

func TestHeldFailuresEndTheDeploymentAtOnce(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		held, code string
		cause      *compute.FailureCause
	}{
		{compute.HeldAuthenticationFailed, occ.DeployRuntimeAuthFailed, nil},
		{compute.HeldModelProbeTimeout, occ.DeployModelProbeTimeout, nil},
		{compute.HeldModelProbeFailed, occ.DeployModelProbeFailed, &compute.FailureCause{Kind: "PROBE_STATUS", Detail: "billing"}},
		{"SOMETHING_ELSE", occ.DeployRuntimeStartup, nil},
	} {
		t.Run(tt.code, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, computetest.FakeCapabilities())
			g := e.agent(agentSpec{harness: apiKey("sk")})
			e.fake.Hold(g.ID, &compute.RuntimeFailure{Component: "gateway", Check: "models.probe", CheckedAt: time.Now(), Code: tt.held, Cause: tt.cause})
			rev := e.deploy(e.admin, g)
			st := e.settled(g, rev)
			failedWith(t, st, tt.code)
			if tt.cause != nil {
				rf, _ := st.Error.Data["runtimeFailure"].(map[string]any)
				cause, _ := rf["cause"].(map[string]any)
				if rf["code"] != tt.held || cause["kind"] != tt.cause.Kind || cause["detail"] != tt.cause.Detail {
					t.Fatalf("error data = %v; want the probe's evidence with its cause", st.Error.Data)
				}
			} else if st.Error.Data != nil {
				t.Fatalf("%s carries data %v", tt.code, st.Error.Data)
			}
			if _, ok := e.fake.Running(g.ID); ok {
				t.Fatal("a failed candidate still runs")
			}
		})
	}
}

func TestConvergenceDeadlineKeepsTheLastEvidence(t *testing.T) {
	t.Parallel()
	e := newEnv(t, computetest.FakeCapabilities())
	g := e.agent(agentSpec{harness: apiKey("sk")})
	// The 1 s deadline only once the Namespace is ready: on a busy machine
	// its own setup could otherwise miss it.
	e.restart(withOptions(func(o *worker.Options) { o.ConvergenceTimeout = time.Second }))
	e.fake.NotReady(g.ID, -1, occ.PendingGatewayStarting, &compute.RuntimeFailure{Component: "gateway", Check: "readyz", CheckedAt: time.Now(), Code: "UNAVAILABLE"})
	rev := e.deploy(e.admin, g)
	st := e.settled(g, rev)
	failedWith(t, st, occ.DeployConvergenceDeadline)
	rf, _ := st.Error.Data["runtimeFailure"].(map[string]any)
	if st.Error.Data["timeoutMs"] != float64(1000) || rf["check"] != "readyz" || rf["code"] != "UNAVAILABLE" || rf["cause"] != nil {
		t.Fatalf("deadline data = %v; want timeoutMs 1000 and the readyz evidence without a cause", st.Error.Data)
	}
}

func TestNewerDeploymentSupersedesAnOlderPendingOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t, computetest.FakeCapabilities())
	e.stop()
	g := e.agent(agentSpec{harness: apiKey("sk")})
	first, second := e.deploy(e.admin, g), e.deploy(e.admin, g)
	e.start()
	failedWith(t, e.settled(g, first), occ.DeploySuperseded)
	if st := e.settled(g, second); st.Status != occ.DeploymentSucceeded {
		t.Fatalf("newer deployment = %+v; want succeeded", st)
	}
	if e.fake.Active(g.ID) != second.ID {
		t.Fatalf("active %q; want the newer revision", e.fake.Active(g.ID))
	}
}

func TestStopThenDeleteConvergeTheDriver(t *testing.T) {
	t.Parallel()
	e := newEnv(t, computetest.FakeCapabilities())
	g := e.agent(agentSpec{harness: apiKey("sk")})
	rev := e.deploy(e.admin, g)
	e.settled(g, rev)
	e.stopped(g)
	if e.fake.Deleted(g.ID) {
		t.Fatal("stop deleted the Agent's data")
	}
	if _, err := e.app.DeleteAgent(e.ctx, e.admin, e.ns, g.ID); err != nil {
		t.Fatal(err)
	}
	e.eventually("the Agent is gone", func() bool {
		_, err := e.app.GetAgent(e.ctx, e.admin, e.ns, g.ID)
		return occ.CodeOf(err) == occ.CodeNotFound && e.fake.Deleted(g.ID)
	})
	if got := e.auditReasons(worker.ActAgentDelete); !slices.Equal(got, []string{occ.ReasonAgentDeleted}) {
		t.Fatalf("delete audit reasons %v; want one %s", got, occ.ReasonAgentDeleted)
	}
}

func TestDriverFailuresRetryThenSettle(t *testing.T) {
	t.Parallel()
	var faulty *computetest.Faulty
	e := newEnv(t, computetest.FakeCapabilities(), withFaulty(&faulty), withOptions(func(o *worker.Options) { o.MaxAttempts = 2 }))

	t.Run("retryable then healed", func(t *testing.T) {
		g := e.agent(agentSpec{harness: apiKey("sk")})
		faulty.FailTimes(g.ID, 1)
		rev := e.deploy(e.admin, g)
		if st := e.settled(g, rev); st.Status != occ.DeploymentSucceeded {
			t.Fatalf("deployment = %+v; want succeeded after one retry", st)
		}
		if got := e.auditReasons(worker.ActRevisionAttempt); !slices.Contains(got, occ.AttemptDependency) {
			t.Fatalf("attempt audit %v; want a %s attempt", got, occ.AttemptDependency)
		}
	})
	t.Run("retryable until the attempts run out", func(t *testing.T) {
		g := e.agent(agentSpec{harness: apiKey("sk")})
		faulty.FailTimes(g.ID, -1)
		failedWith(t, e.settled(g, e.deploy(e.admin, g)), occ.DeployDependency)
	})
	t.Run("permanent", func(t *testing.T) {
		g := e.agent(agentSpec{harness: apiKey("sk")})
		faulty.FailPermanently(g.ID, occ.DeployInvalidConfiguration)
		failedWith(t, e.settled(g, e.deploy(e.admin, g)), occ.DeployInvalidConfiguration)
	})
	t.Run("permanent with the data that names the cause", func(t *testing.T) {
		g := e.agent(agentSpec{harness: apiKey("sk")})
		faulty.Heal(g.ID)
		faulty.Inject(computetest.Fault{ID: g.ID, Method: computetest.MethodPrepareRevision, Times: computetest.Forever,
			Permanent: occ.DeployPluginInstallFailed, PermanentData: map[string]any{"pluginId": "@openclaw/codex"}})
		st := e.settled(g, e.deploy(e.admin, g))
		failedWith(t, st, occ.DeployPluginInstallFailed)
		if st.Error.Message != occ.DeploymentMessage(occ.DeployPluginInstallFailed) || st.Error.Data["pluginId"] != "@openclaw/codex" ||
			strings.Contains(st.Error.Message, "reconciliation failed") {
			t.Fatalf("error = %+v; want the plugin named in data and its fixed message", st.Error)
		}
	})
}

// A driver whose dependency is unavailable (an API server down) keeps the
// deployment queued with DEPENDENCY_UNAVAILABLE progress for as many
// calls as it takes, never spending the attempts, and it converges once
// the dependency returns; the convergence deadline still ends the wait.
func TestUnavailableDependencyWaitsWithoutSpendingAttempts(t *testing.T) {
	t.Parallel()
	var faulty *computetest.Faulty
	e := newEnv(t, computetest.FakeCapabilities(), withFaulty(&faulty), withOptions(func(o *worker.Options) { o.MaxAttempts = 2 }))

	g := e.agent(agentSpec{harness: apiKey("sk")})
	faulty.Inject(computetest.Fault{Method: computetest.MethodPrepareRevision, ID: g.ID, Times: computetest.Forever, Unavailable: true})
	rev := e.deploy(e.admin, g)
	e.eventually("the deployment waits through more calls than it has attempts", func() bool {
		return faulty.CallsOf(computetest.MethodPrepareRevision, g.ID) > 3
	})
	st := e.status(g, rev)
	if st.Status != occ.DeploymentQueued || st.Progress == nil || st.Progress.LastAttempt == nil || st.Progress.LastAttempt.Code != occ.AttemptDependency {
		t.Fatalf("deployment while the dependency is down = %s %+v; want queued with %s progress", st.Status, st.Progress, occ.AttemptDependency)
	}
	faulty.Heal(g.ID)
	if st := e.settled(g, rev); st.Status != occ.DeploymentSucceeded {
		t.Fatalf("deployment = %+v; want succeeded once the dependency returned", st)
	}
	if e.fake.Active(g.ID) != rev.ID {
		t.Fatalf("active %q; want %s", e.fake.Active(g.ID), rev.ID)
	}

	t.Run("the deadline ends the wait", func(t *testing.T) {
		t.Parallel()
		var faulty *computetest.Faulty
		e := newEnv(t, computetest.FakeCapabilities(), withFaulty(&faulty), withOptions(func(o *worker.Options) { o.MaxAttempts = 2; o.ConvergenceTimeout = 8 * time.Second }))
		g := e.agent(agentSpec{harness: apiKey("sk")})
		// The deadline is long enough for several snoozed passes (500 ms
		// apart) even on a loaded machine.
		faulty.Inject(computetest.Fault{ID: g.ID, Times: computetest.Forever, Unavailable: true})
		failedWith(t, e.settled(g, e.deploy(e.admin, g)), occ.DeployConvergenceDeadline)
		if n := faulty.CallsOf(computetest.MethodPrepareRevision, g.ID); n <= 2 {
			t.Fatalf("%d PrepareRevision calls before the deadline; want more than the 2 attempts", n)
		}
	})
}
