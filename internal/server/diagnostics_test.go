package server_test

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
	"github.com/openclaw/occ/internal/store/storetest"
)

// diagWorld is a Namespace whose Agents run the fake gateway through the
// local driver, started through a link the test can remove (so that a
// killed gateway stays dead).
type diagWorld struct {
	*deployWorld
	link string // the gateway command: a symlink to the fake gateway
}

func newDiagWorld(t *testing.T, url string) *diagWorld {
	link := filepath.Join(gatewaytest.ReachableDir(t), "gateway")
	if err := os.Symlink(fakeGatewayBinary(t), link); err != nil {
		t.Fatal(err)
	}
	e := boot(t, url, nil, func(m *server.Main) { m.Config.Compute.GatewayCommand = link })
	d := &deployWorld{agentWorld: &agentWorld{e: e, ns: e.createNamespace("diag")}}
	d.secret = d.newSecret(t, "model", "sk-diag")
	return &diagWorld{deployWorld: d, link: link}
}

func (d *deployWorld) newSecret(t *testing.T, name, value string) string {
	r := d.e.call("POST", d.path("/secrets"), d.e.admin, map[string]any{"name": name, "value": value})
	if r.Status != 201 {
		t.Fatalf("secret %s = %d %v", name, r.Status, r.Body)
	}
	return r.data()["id"].(string)
}

// slackAgent creates an Agent whose Configuration has channels.slack with
// both tokens from Secrets, and the fake gateway's Slack mode (ok,
// invalid_auth, disconnected) bound as FAKEGATEWAY_SLACK.
func (d *diagWorld) slackAgent(t *testing.T, name, mode string) string {
	e := d.e
	bind := func(id string) map[string]any {
		return map[string]any{"source": map[string]any{"kind": "secret", "namespaceId": d.ns, "id": id}}
	}
	r := e.call("POST", d.path("/configurations"), e.admin, map[string]any{"name": name, "kind": "agent",
		"values": map[string]any{"channels": map[string]any{"slack": map[string]any{
			"enabled": true, "mode": "socket", "botToken": "${SLACK_BOT_TOKEN}", "appToken": "${SLACK_APP_TOKEN}"}}},
		"secretBindings": map[string]any{
			"SLACK_BOT_TOKEN":   bind(d.newSecret(t, name+"-bot", "xoxb-diag")),
			"SLACK_APP_TOKEN":   bind(d.newSecret(t, name+"-app", "xapp-diag")),
			"FAKEGATEWAY_SLACK": bind(d.newSecret(t, name+"-mode", mode))}})
	if r.Status != 201 {
		t.Fatalf("configuration %s = %d %v", name, r.Status, r.Body)
	}
	d.cfg = r.data()["id"].(string)
	agent, _ := d.newAgent(t, name, true)
	return agent
}

// diagnose calls the route as key.
func (d *deployWorld) diagnose(key, agent, rev string) resp {
	return d.e.call("POST", d.path("/agents/"+agent+"/deployments/"+rev+"/diagnostics"), key, nil)
}

// verdicts are a 200 answer's checks as "component/check" → "status CODE".
func verdicts(t *testing.T, r resp, rev string) map[string]string {
	t.Helper()
	if r.Status != 200 || r.data()["revisionId"] != rev {
		t.Fatalf("diagnostics = %d %v", r.Status, r.Body)
	}
	out := map[string]string{}
	for _, c := range r.data()["checks"].([]any) {
		c := c.(map[string]any)
		out[c["component"].(string)+"/"+c["check"].(string)] = c["status"].(string) + " " + c["code"].(string)
	}
	return out
}

func wantChecks(t *testing.T, what string, got map[string]string, want ...map[string]string) {
	t.Helper()
	w := map[string]string{}
	for _, m := range want {
		for k, v := range m {
			w[k] = v
		}
	}
	if toJSON(got) != toJSON(w) {
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

// untouched returns a check that what a caller reads of the deployment and
// the Agent is byte for byte what it was when untouched was called.
func (d *deployWorld) untouched(t *testing.T, agent, rev string) func() {
	read := func() string {
		dep := d.e.call("GET", d.path("/agents/"+agent+"/deployments/"+rev), d.e.admin, nil)
		ag := d.e.call("GET", d.path("/agents/"+agent), d.e.admin, nil)
		return toJSON(dep.data()) + toJSON(ag.data()) + ag.Header.Get("ETag")
	}
	before := read()
	return func() {
		t.Helper()
		if after := read(); after != before {
			t.Fatalf("diagnostics changed stored state:\nbefore %s\nafter  %s", before, after)
		}
	}
}

// TestDiagnostics runs the checks of a revision through the local driver
// and the fake gateway: running, Slack configured / rejected /
// disconnected, stopped, crashed; unknown revisions are 404.
func TestDiagnostics(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, url string) {
		d := newDiagWorld(t, url)
		e := d.e

		// A running gateway without channels: every check succeeded.
		d.cfg = e.call("POST", d.path("/configurations"), e.admin, map[string]any{"name": "plain", "kind": "agent", "values": map[string]any{}}).data()["id"].(string)
		plain, _ := d.newAgent(t, "plain", true)
		plainRev := d.deploy(t, plain)
		if st := d.waitDeployment(t, plain, plainRev); st["status"] != "succeeded" {
			t.Fatalf("deployment = %v", st)
		}
		same := d.untouched(t, plain, plainRev)
		r := d.diagnose(e.admin, plain, plainRev)
		wantChecks(t, "running", verdicts(t, r, plainRev), gatewayOK)
		for _, c := range r.data()["checks"].([]any) {
			if c.(map[string]any)["message"] != "The check succeeded." {
				t.Fatalf("message of a succeeded check = %v", c)
			}
		}
		same()

		// Slack configured: seven checks, all succeeded.
		slack := d.slackAgent(t, "slack-ok", "ok")
		slackRev := d.deploy(t, slack)
		if st := d.waitDeployment(t, slack, slackRev); st["status"] != "succeeded" {
			t.Fatalf("slack deployment = %v", st)
		}
		wantChecks(t, "slack ok", verdicts(t, d.diagnose(e.admin, slack, slackRev), slackRev), gatewayOK, slackOK)

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
			rev := d.deploy(t, agent)
			var r resp
			waitFor(t, "the "+c.mode+" gateway answering", func() bool {
				r = d.diagnose(e.admin, agent, rev)
				return r.Status == 200 && verdicts(t, r, rev)["gateway/readyz"] == "failed NOT_READY"
			})
			wantChecks(t, c.mode, verdicts(t, r, rev), gatewayOK, map[string]string{"gateway/readyz": "failed NOT_READY"}, c.slack)
			if s := toJSON(r.Body); strings.Contains(s, "invalid_auth") || strings.Contains(s, "API error") {
				t.Fatalf("diagnostics pass on the gateway's words: %s", s)
			}
			if r.data()["observedAt"] == nil {
				t.Fatal("no observedAt")
			}
		}

		// Stopped: no workload, every check unknown (Slack's too).
		if r := e.call("POST", d.path("/agents/"+slack+"/stop"), e.admin, nil); r.Status != 202 {
			t.Fatalf("stop = %d %v", r.Status, r.Body)
		}
		waitFor(t, "the slack Agent stopped", func() bool {
			return e.call("GET", d.path("/agents/"+slack), e.admin, nil).data()["activeRevisionId"] == nil
		})
		same = d.untouched(t, slack, slackRev)
		wantChecks(t, "stopped", verdicts(t, d.diagnose(e.admin, slack, slackRev), slackRev), gatewayUnknown, slackUnknown)
		same()

		// Unknown revisions: 404, never a guess.
		if r := d.diagnose(e.admin, plain, occ.NewID(occ.PrefixRevision)); r.Status != 404 || r.code() != "NOT_FOUND" {
			t.Fatalf("unknown revision = %d %v", r.Status, r.Body)
		}
		if r := d.diagnose(e.admin, plain, slackRev); r.Status != 404 || r.code() != "NOT_FOUND" {
			t.Fatalf("revision of another Agent = %d %v", r.Status, r.Body)
		}
		if r := d.diagnose(e.admin, occ.NewID(occ.PrefixAgent), plainRev); r.Status != 404 || r.code() != "NOT_FOUND" {
			t.Fatalf("unknown Agent = %d %v", r.Status, r.Body)
		}
		if r := d.diagnose(e.admin, plain, "rev_nope"); r.Status != 400 {
			t.Fatalf("malformed revision ID = %d %v", r.Status, r.Body)
		}

		// Crashed: the gateway is killed and cannot be restarted (its
		// command is gone): the process check fails, nothing else is known.
		same = d.untouched(t, plain, plainRev)
		if err := os.Remove(d.link); err != nil {
			t.Fatal(err)
		}
		procs := gatewayProcs(filepath.Join(e.m.Config.DataDir, "compute", "namespaces"))[plain]
		if len(procs) != 1 {
			t.Fatalf("gateway processes of the plain Agent: %v", procs)
		}
		for pid := range procs {
			n, _ := strconv.Atoi(pid)
			if err := syscall.Kill(n, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
		waitFor(t, "the driver seeing the exit", func() bool {
			return verdicts(t, d.diagnose(e.admin, plain, plainRev), plainRev)["gateway/process"] != "succeeded OK"
		})
		wantChecks(t, "crashed", verdicts(t, d.diagnose(e.admin, plain, plainRev), plainRev), gatewayUnknown,
			map[string]string{"gateway/process": "failed PROCESS_EXITED"})
		same()
	})
}

// TestDiagnosticsEvidence: a driver that fails, or answers anything but
// bounded checks of the revision asked for, gives 503 without its words.
func TestDiagnosticsEvidence(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, url string) {
		d := newDeployWorld(t, url)
		e := d.e
		rev := d.deploy(t, d.agent)
		if st := d.waitDeployment(t, d.agent, rev); st["status"] != "succeeded" {
			t.Fatalf("deployment = %v", st)
		}
		same := d.untouched(t, d.agent, rev)
		wantChecks(t, "fake driver", verdicts(t, d.diagnose(e.admin, d.agent, rev), rev), map[string]string{"gateway/process": "succeeded OK"})

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
		d.fake.set(func(f *fakeCompute) {
			f.diagnosis[d.agent] = answer(func(dg *compute.Diagnosis) { dg.Checks = repeat(compute.MaxChecks) })
		})
		if got := verdicts(t, d.diagnose(e.admin, d.agent, rev), rev); len(got) != 32 {
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
			d.fake.set(func(f *fakeCompute) {
				delete(f.diagnosis, d.agent)
				delete(f.diagnoseErr, d.agent)
				if bad == nil {
					f.diagnoseErr[d.agent] = errors.New("driver exploded: secret detail")
				} else {
					f.diagnosis[d.agent] = answer(bad)
				}
			})
			r := d.diagnose(e.admin, d.agent, rev)
			if r.Status != 503 || r.code() != "DEPENDENCY_UNAVAILABLE" {
				t.Errorf("%s: %d %v, want 503", name, r.Status, r.Body)
			}
			if s := toJSON(r.Body); strings.Contains(s, "exploded") || strings.Contains(s, "invalid_auth") || strings.Contains(s, "said no") {
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
	storetest.Each(t, func(t *testing.T, url string) {
		d := newDeployWorld(t, url)
		e := d.e
		old := d.deploy(t, d.agent)
		d.waitDeployment(t, d.agent, old)
		rev := d.deploy(t, d.agent)
		d.waitDeployment(t, d.agent, rev)
		other, _ := d.newAgent(t, "other", true)

		agentRead, agentOperate := occ.P(occ.KindAgent, occ.ActionRead), occ.P(occ.KindAgent, occ.ActionOperate)
		// who holds agent:read and agent:operate on agentID and
		// agent_revision:read on revID, each exactly.
		who := func(agentID, revID string) string {
			key, p := e.principal(grant{perms: []occ.Permission{agentRead, agentOperate}, namespace: d.ns,
				target: &occ.Target{Kind: occ.KindAgent, ID: agentID}})
			role := e.call("POST", d.path("/iam/roles"), e.admin, map[string]any{"name": "rr-" + occ.NewUUID()[:8], "permissions": []string{"agent_revision:read"}})
			b := e.call("POST", d.path("/iam/bindings"), e.admin, map[string]any{"principalId": p, "roleId": role.data()["id"],
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
			"exact grants":                {who(d.agent, rev), 200},
			"revision grant elsewhere":    {who(d.agent, old), 404},
			"Agent grants on another one": {who(other, rev), 404},
		} {
			if r := d.diagnose(c.key, d.agent, rev); r.Status != c.status {
				t.Errorf("%s: %d %v, want %d", name, r.Status, r.Body, c.status)
			}
		}
		evs := e.call("GET", "/audit-events?kind=authorization_denial&action=deployments.diagnose", e.admin, nil).list()
		if len(evs) < 2 {
			t.Fatalf("denials audited: %v", evs)
		}
	})
}
