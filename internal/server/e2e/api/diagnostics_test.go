package api_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// diagWorld is a Namespace whose Agents run the fake gateway through the
// local driver, started through a link the test can remove (so that a
// killed gateway stays dead).
type diagWorld struct {
	*servertest.DeployWorld
	link string // the gateway command: a symlink to the fake gateway
}

func newDiagWorld(t *testing.T, url string) *diagWorld {
	link := filepath.Join(gatewaytest.ReachableDir(t), "gateway")
	if err := os.Symlink(servertest.FakeGatewayBinary(t), link); err != nil {
		t.Fatal(err)
	}
	e := servertest.Boot(t, url, nil, func(m *server.Main) { m.Config.Compute.GatewayCommand = link })
	d := &servertest.DeployWorld{AgentWorld: &servertest.AgentWorld{E: e, Ns: e.CreateNamespace("diag")}}
	d.Secret = d.NewSecret(t, "model", "sk-diag")
	return &diagWorld{DeployWorld: d, link: link}
}

// slackAgent creates an Agent whose Configuration has channels.slack with
// both tokens from Secrets, and the fake gateway's Slack mode (ok,
// invalid_auth, disconnected) bound as FAKEGATEWAY_SLACK.
func (d *diagWorld) slackAgent(t *testing.T, name, mode string) string {
	e := d.E
	bind := func(id string) map[string]any {
		return map[string]any{"source": map[string]any{"kind": "secret", "namespaceId": d.Ns, "id": id}}
	}
	r := e.Call("POST", d.Path("/configurations"), e.Admin, map[string]any{"name": name, "kind": "agent",
		"values": map[string]any{"channels": map[string]any{"slack": map[string]any{
			"enabled": true, "mode": "socket", "botToken": "${SLACK_BOT_TOKEN}", "appToken": "${SLACK_APP_TOKEN}"}}},
		"secretBindings": map[string]any{
			"SLACK_BOT_TOKEN":   bind(d.NewSecret(t, name+"-bot", "xoxb-diag")),
			"SLACK_APP_TOKEN":   bind(d.NewSecret(t, name+"-app", "xapp-diag")),
			"FAKEGATEWAY_SLACK": bind(d.NewSecret(t, name+"-mode", mode))}})
	if r.Status != 201 {
		t.Fatalf("configuration %s = %d %v", name, r.Status, r.Body)
	}
	d.Cfg = r.Data()["id"].(string)
	agent, _ := d.NewAgent(t, name, true)
	return agent
}

func wantChecks(t *testing.T, what string, got map[string]string, want ...map[string]string) {
	t.Helper()
	w := map[string]string{}
	for _, m := range want {
		for k, v := range m {
			w[k] = v
		}
	}
	if servertest.ToJSON(got) != servertest.ToJSON(w) {
		t.Fatalf("%s: checks\n%v\nwant\n%v", what, got, w)
	}
}

var (
	gatewayOK = map[string]string{"gateway/process": "succeeded OK", "gateway/healthz": "succeeded OK",
		"gateway/startupz": "succeeded OK", "gateway/readyz": "succeeded OK"}
	gatewayUnknown = map[string]string{"gateway/process": "unknown UNAVAILABLE", "gateway/healthz": "unknown UNAVAILABLE",
		"gateway/startupz": "unknown UNAVAILABLE", "gateway/readyz": "unknown UNAVAILABLE"}
	slackOK = map[string]string{"slack/configuration": "succeeded OK", "slack/authentication": "succeeded OK",
		"slack/connectivity": "succeeded OK"}
	slackUnknown = map[string]string{"slack/configuration": "unknown UNAVAILABLE", "slack/authentication": "unknown UNAVAILABLE",
		"slack/connectivity": "unknown UNAVAILABLE"}
)

// TestDiagnostics runs the checks of a revision through the local driver
// and the fake gateway: running, Slack configured / rejected /
// disconnected, stopped, crashed; unknown revisions are 404.
func TestDiagnostics(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		d := newDiagWorld(t, url)
		e := d.E

		// A running gateway without channels: every check succeeded.
		d.Cfg = e.Call("POST", d.Path("/configurations"), e.Admin, map[string]any{"name": "plain", "kind": "agent", "values": map[string]any{}}).Data()["id"].(string)
		plain, _ := d.NewAgent(t, "plain", true)
		plainRev := d.Deploy(t, plain)
		if st := d.WaitDeployment(t, plain, plainRev); st["status"] != "succeeded" {
			t.Fatalf("deployment = %v", st)
		}
		same := d.Untouched(t, plain, plainRev)
		r := d.Diagnose(e.Admin, plain, plainRev)
		wantChecks(t, "running", servertest.Verdicts(t, r, plainRev), gatewayOK)
		for _, c := range r.Data()["checks"].([]any) {
			if c.(map[string]any)["message"] != "The check succeeded." {
				t.Fatalf("message of a succeeded check = %v", c)
			}
		}
		same()

		// Slack configured: seven checks, all succeeded.
		slack := d.slackAgent(t, "slack-ok", "ok")
		slackRev := d.Deploy(t, slack)
		if st := d.WaitDeployment(t, slack, slackRev); st["status"] != "succeeded" {
			t.Fatalf("slack deployment = %v", st)
		}
		wantChecks(t, "slack ok", servertest.Verdicts(t, d.Diagnose(e.Admin, slack, slackRev), slackRev), gatewayOK, slackOK)

		// Slack rejects the tokens, or the connection is down: the gateway
		// is not ready, so the deployment stays pending; diagnostics say why
		// without passing on what the gateway said.
		for _, c := range []struct {
			mode  string
			slack map[string]string
		}{
			{"invalid_auth", map[string]string{"slack/configuration": "succeeded OK",
				"slack/authentication": "failed SLACK_AUTHENTICATION_FAILED", "slack/connectivity": "failed SLACK_DISCONNECTED"}},
			{"disconnected", map[string]string{"slack/configuration": "succeeded OK",
				"slack/authentication": "succeeded OK", "slack/connectivity": "failed SLACK_DISCONNECTED"}},
		} {
			agent := d.slackAgent(t, "slack-"+strings.ReplaceAll(c.mode, "_", "-"), c.mode)
			rev := d.Deploy(t, agent)
			var r servertest.Resp
			servertest.WaitFor(t, "the "+c.mode+" gateway answering", func() bool {
				r = d.Diagnose(e.Admin, agent, rev)
				return r.Status == 200 && servertest.Verdicts(t, r, rev)["gateway/readyz"] == "failed NOT_READY"
			})
			wantChecks(t, c.mode, servertest.Verdicts(t, r, rev), gatewayOK, map[string]string{"gateway/readyz": "failed NOT_READY"}, c.slack)
			if s := servertest.ToJSON(r.Body); strings.Contains(s, "invalid_auth") || strings.Contains(s, "API error") {
				t.Fatalf("diagnostics pass on the gateway's words: %s", s)
			}
			if r.Data()["observedAt"] == nil {
				t.Fatal("no observedAt")
			}
		}

		// Stopped: no workload, every check unknown (Slack's too).
		if r := e.Call("POST", d.Path("/agents/"+slack+"/stop"), e.Admin, nil); r.Status != 202 {
			t.Fatalf("stop = %d %v", r.Status, r.Body)
		}
		servertest.WaitFor(t, "the slack Agent stopped", func() bool {
			return e.Call("GET", d.Path("/agents/"+slack), e.Admin, nil).Data()["activeRevisionId"] == nil
		})
		same = d.Untouched(t, slack, slackRev)
		wantChecks(t, "stopped", servertest.Verdicts(t, d.Diagnose(e.Admin, slack, slackRev), slackRev), gatewayUnknown, slackUnknown)
		same()

		// Unknown revisions: 404, never a guess.
		if r := d.Diagnose(e.Admin, plain, occ.NewID(occ.PrefixRevision)); r.Status != 404 || r.Code() != "NOT_FOUND" {
			t.Fatalf("unknown revision = %d %v", r.Status, r.Body)
		}
		if r := d.Diagnose(e.Admin, plain, slackRev); r.Status != 404 || r.Code() != "NOT_FOUND" {
			t.Fatalf("revision of another Agent = %d %v", r.Status, r.Body)
		}
		if r := d.Diagnose(e.Admin, occ.NewID(occ.PrefixAgent), plainRev); r.Status != 404 || r.Code() != "NOT_FOUND" {
			t.Fatalf("unknown Agent = %d %v", r.Status, r.Body)
		}
		if r := d.Diagnose(e.Admin, plain, "rev_nope"); r.Status != 400 {
			t.Fatalf("malformed revision ID = %d %v", r.Status, r.Body)
		}

		// Crashed: the gateway is killed and cannot be restarted (its
		// command is gone): the process check fails, nothing else is known.
		same = d.Untouched(t, plain, plainRev)
		if err := os.Remove(d.link); err != nil {
			t.Fatal(err)
		}
		procs := servertest.GatewayProcs(filepath.Join(e.M.Config.DataDir, "compute", "namespaces"))[plain]
		if len(procs) != 1 {
			t.Fatalf("gateway processes of the plain Agent: %v", procs)
		}
		for pid := range procs {
			n, _ := strconv.Atoi(pid)
			if err := syscall.Kill(n, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
		servertest.WaitFor(t, "the driver seeing the exit", func() bool {
			return servertest.Verdicts(t, d.Diagnose(e.Admin, plain, plainRev), plainRev)["gateway/process"] != "succeeded OK"
		})
		wantChecks(t, "crashed", servertest.Verdicts(t, d.Diagnose(e.Admin, plain, plainRev), plainRev), gatewayUnknown,
			map[string]string{"gateway/process": "failed PROCESS_EXITED"})
		same()
	})
}

// TestDiagnosticsEvidence: a driver that fails, or answers anything but
// bounded checks of the revision asked for, gives 503 without its words.
func TestDiagnosticsEvidence(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		d := newDeployWorld(t, url)
		e := d.E
		rev := d.Deploy(t, d.Agent)
		if st := d.WaitDeployment(t, d.Agent, rev); st["status"] != "succeeded" {
			t.Fatalf("deployment = %v", st)
		}
		same := d.Untouched(t, d.Agent, rev)
		wantChecks(t, "fake driver", servertest.Verdicts(t, d.Diagnose(e.Admin, d.Agent, rev), rev), map[string]string{"gateway/process": "succeeded OK"})

		check := compute.Check{Component: "gateway", Check: "process", Status: "succeeded", Code: "OK", Message: "The check succeeded."}
		answer := func(mutate func(*compute.Diagnosis)) func(compute.RevisionRef) compute.Diagnosis {
			return func(r compute.RevisionRef) compute.Diagnosis {
				dg := compute.Diagnosis{RevisionID: r.RevisionID, Checks: []compute.Check{check}}
				mutate(&dg)
				return dg
			}
		}
		repeat := func(n int) []compute.Check {
			out := make([]compute.Check, n)
			for i := range out {
				out[i] = check
				out[i].Check = "c" + strconv.Itoa(i)
			}
			return out
		}
		// At most 32 checks: 32 is fine.
		d.Fake.Set(func(f *servertest.FakeCompute) {
			f.Diagnosis[d.Agent] = answer(func(dg *compute.Diagnosis) { dg.Checks = repeat(compute.MaxChecks) })
		})
		if got := servertest.Verdicts(t, d.Diagnose(e.Admin, d.Agent, rev), rev); len(got) != 32 {
			t.Fatalf("32 checks answered as %d", len(got))
		}

		for name, bad := range map[string]func(*compute.Diagnosis){
			"33 checks": func(dg *compute.Diagnosis) { dg.Checks = repeat(compute.MaxChecks + 1) },
			"no checks": func(dg *compute.Diagnosis) { dg.Checks = nil },
			"another revision": func(dg *compute.Diagnosis) {
				dg.RevisionID = occ.NewID(occ.PrefixRevision)
			},
			"unknown status":   func(dg *compute.Diagnosis) { dg.Checks[0].Status = "maybe" },
			"gateway's words":  func(dg *compute.Diagnosis) { dg.Checks[0].Message = "An API error occurred:\ninvalid_auth" },
			"free-form code":   func(dg *compute.Diagnosis) { dg.Checks[0].Code = "slack said no" },
			"empty component":  func(dg *compute.Diagnosis) { dg.Checks[0].Component = "" },
			"overlong message": func(dg *compute.Diagnosis) { dg.Checks[0].Message = strings.Repeat("m", 257) },
			"driver error":     nil,
		} {
			d.Fake.Set(func(f *servertest.FakeCompute) {
				delete(f.Diagnosis, d.Agent)
				delete(f.DiagnoseErr, d.Agent)
				if bad == nil {
					f.DiagnoseErr[d.Agent] = errors.New("driver exploded: secret detail")
				} else {
					f.Diagnosis[d.Agent] = answer(bad)
				}
			})
			r := d.Diagnose(e.Admin, d.Agent, rev)
			if r.Status != 503 || r.Code() != "DEPENDENCY_UNAVAILABLE" {
				t.Errorf("%s: %d %v, want 503", name, r.Status, r.Body)
			}
			if s := servertest.ToJSON(r.Body); strings.Contains(s, "exploded") || strings.Contains(s, "invalid_auth") || strings.Contains(s, "said no") {
				t.Errorf("%s: the driver's words reach the caller: %s", name, s)
			}
		}
		same()
	})
}

// TestDiagnosticsPermissions: the three permissions are checked on the
// exact Agent and revision; a grant on another revision or Agent is not
// enough, and every denial is audited.
func TestDiagnosticsPermissions(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		d := newDeployWorld(t, url)
		e := d.E
		old := d.Deploy(t, d.Agent)
		d.WaitDeployment(t, d.Agent, old)
		rev := d.Deploy(t, d.Agent)
		d.WaitDeployment(t, d.Agent, rev)
		other, _ := d.NewAgent(t, "other", true)

		agentRead, agentOperate := occ.P(occ.KindAgent, occ.ActionRead), occ.P(occ.KindAgent, occ.ActionOperate)
		// who holds agent:read and agent:operate on agentID and
		// agent_revision:read on revID, each exactly.
		who := func(agentID, revID string) string {
			key, p := e.Principal(servertest.Grant{Perms: []occ.Permission{agentRead, agentOperate}, Namespace: d.Ns,
				Target: &occ.Target{Kind: occ.KindAgent, ID: agentID}})
			role := e.Call("POST", d.Path("/iam/roles"), e.Admin, map[string]any{"name": "rr-" + occ.NewUUID()[:8], "permissions": []string{"agent_revision:read"}})
			b := e.Call("POST", d.Path("/iam/bindings"), e.Admin, map[string]any{"principalId": p, "roleId": role.Data()["id"],
				"target": map[string]any{"kind": "agent_revision", "id": revID}})
			if role.Status != 201 || b.Status != 201 {
				t.Fatalf("revision grant = %d %v / %d %v", role.Status, role.Body, b.Status, b.Body)
			}
			return key
		}
		for name, c := range map[string]struct {
			key    string
			status int
		}{
			"exact grants":                {who(d.Agent, rev), 200},
			"revision grant elsewhere":    {who(d.Agent, old), 404},
			"Agent grants on another one": {who(other, rev), 404},
		} {
			if r := d.Diagnose(c.key, d.Agent, rev); r.Status != c.status {
				t.Errorf("%s: %d %v, want %d", name, r.Status, r.Body, c.status)
			}
		}
		evs := e.Call("GET", "/audit-events?kind=authorization_denial&action=deployments.diagnose", e.Admin, nil).List()
		if len(evs) < 2 {
			t.Fatalf("denials audited: %v", evs)
		}
	})
}
