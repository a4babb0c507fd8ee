package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/store/storetest"
)

// deployWorld is a ready Namespace with a deployable Agent: an api_key
// binding to a Secret its service principal may operate, and a
// Configuration that binds a second Secret as an environment variable.
type deployWorld struct {
	*agentWorld
	fake  *fakeCompute
	agent string
	sp    string
}

func newDeployWorld(t *testing.T, url string, opts ...func(*server.Main)) *deployWorld {
	fake := newFakeCompute(t)
	e := boot(t, url, fake, opts...)
	w := &agentWorld{e: e, ns: e.createNamespace("deploy")}
	w.secret = e.call("POST", w.path("/secrets"), e.admin, map[string]any{"name": "openai", "value": "sk-deploy-canary"}).data()["id"].(string)
	slack := e.call("POST", w.path("/secrets"), e.admin, map[string]any{"name": "slack", "value": "xoxb-slack-canary"}).data()["id"].(string)
	w.cfg = e.call("POST", w.path("/configurations"), e.admin, map[string]any{"name": "c", "kind": "agent",
		"values":         map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": "openai/gpt-5"}}},
		"secretBindings": map[string]any{"SLACK_BOT_TOKEN": map[string]any{"source": map[string]any{"kind": "secret", "namespaceId": w.ns, "id": slack}}}}).data()["id"].(string)
	d := &deployWorld{agentWorld: w, fake: fake}
	d.agent, d.sp = d.newAgent(t, "bot", true)
	return d
}

// newAgent creates an Agent; grant gives its service principal operate on
// every Secret of the Namespace.
func (d *deployWorld) newAgent(t *testing.T, name string, grant bool) (string, string) {
	e := d.e
	r := d.create(e.admin, map[string]any{"name": name, "harnessAuth": map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "id": d.secret}},
		"initialWorkspaceFiles": map[string]any{"AGENTS.md": "Be brief.\n"}})
	if r.Status != 201 {
		t.Fatalf("agent = %d %v", r.Status, r.Body)
	}
	id, sp := r.data()["id"].(string), r.data()["servicePrincipalId"].(string)
	if grant {
		d.grantSecrets(t, name, sp)
	}
	return id, sp
}

// grantSecrets gives a principal secret:operate on every Secret of the
// Namespace (through a role named after name).
func (d *deployWorld) grantSecrets(t *testing.T, name, principal string) {
	e := d.e
	role := e.call("POST", d.path("/iam/roles"), e.admin, map[string]any{"name": "op-" + name, "permissions": []string{"secret:operate"}}).data()["id"].(string)
	if r := e.call("POST", d.path("/iam/bindings"), e.admin, map[string]any{"principalId": principal, "roleId": role}); r.Status != 201 {
		t.Fatalf("grant the Agent principal = %d %v", r.Status, r.Body)
	}
}

func (d *deployWorld) deploy(t *testing.T, agent string) string {
	r := d.e.call("POST", d.path("/agents/"+agent+"/deploy"), d.e.admin, nil)
	if r.Status != 202 || r.data()["id"] == nil {
		t.Fatalf("deploy = %d %v", r.Status, r.Body)
	}
	return r.data()["id"].(string)
}

// waitDeployment polls until the deployment is terminal and returns it.
func (d *deployWorld) waitDeployment(t *testing.T, agent, rev string) map[string]any {
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := d.e.call("GET", d.path("/agents/"+agent+"/deployments/"+rev), d.e.admin, nil)
		if r.Status != 200 {
			t.Fatalf("GET deployment = %d %v", r.Status, r.Body)
		}
		if s := r.data()["status"]; s == "succeeded" || s == "failed" {
			return r.data()
		}
		if time.Now().After(deadline) {
			t.Fatalf("deployment %s still %v", rev, r.data())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestDeployStopRedeploy(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, url string) {
		d := newDeployWorld(t, url)
		e := d.e
		rev1 := d.deploy(t, d.agent)
		st := d.waitDeployment(t, d.agent, rev1)
		if st["status"] != "succeeded" || st["error"] != nil || st["progress"] != nil || len(st["warnings"].([]any)) != 0 {
			t.Fatalf("deployment = %v", st)
		}
		g := e.call("GET", d.path("/agents/"+d.agent), e.admin, nil).data()
		if g["activeRevisionId"] != rev1 || g["desiredRuntimeState"] != "running" {
			t.Fatalf("agent after deploy = %v", g)
		}
		d.fake.get(func(f *fakeCompute) {
			env := f.envSeen[d.agent]
			if f.active[d.agent] != rev1 || env["OPENAI_API_KEY"] != "sk-deploy-canary" || env["SLACK_BOT_TOKEN"] != "xoxb-slack-canary" ||
				f.files[d.agent]["AGENTS.md"] != "Be brief.\n" {
				t.Fatalf("driver saw active %v env %v files %v", f.active, env, f.files)
			}
		})
		rv := e.call("GET", d.path("/agents/"+d.agent+"/revisions/"+rev1), e.admin, nil).data()
		if rv["number"] != float64(1) || rv["configuration"].(map[string]any)["document"] == nil || strings.Contains(toJSON(rv), "canary") {
			t.Fatalf("revision = %v", rv)
		}

		// A Configuration PATCH changes no deployed revision.
		e.call("PATCH", d.path("/configurations/"+d.cfg), e.admin, map[string]any{"values": map[string]any{"agents": nil}})
		if again := e.call("GET", d.path("/agents/"+d.agent+"/revisions/"+rev1), e.admin, nil).data(); toJSON(again) != toJSON(rv) {
			t.Fatalf("revision changed after a Configuration PATCH: %v", again)
		}

		// Stop: execution removed, then activeRevisionId cleared; history kept.
		if r := e.call("POST", d.path("/agents/"+d.agent+"/stop"), e.admin, nil); r.Status != 202 || r.data()["desiredRuntimeState"] != "stopped" {
			t.Fatalf("stop = %d %v", r.Status, r.Body)
		}
		waitFor(t, "activeRevisionId cleared", func() bool {
			return e.call("GET", d.path("/agents/"+d.agent), e.admin, nil).data()["activeRevisionId"] == nil
		})
		d.fake.get(func(f *fakeCompute) {
			if f.running[d.agent] != "" {
				t.Fatalf("still running after stop: %v", f.running)
			}
		})
		if r := e.call("POST", d.path("/agents/"+d.agent+"/stop"), e.admin, nil); r.Status != 202 {
			t.Fatalf("repeated stop = %d", r.Status)
		}

		// Deploy again: a new revision, number 2; the first result is unchanged.
		rev2 := d.deploy(t, d.agent)
		if st := d.waitDeployment(t, d.agent, rev2); st["status"] != "succeeded" {
			t.Fatalf("second deployment = %v", st)
		}
		if n := e.call("GET", d.path("/agents/"+d.agent+"/revisions/"+rev2), e.admin, nil).data()["number"]; n != float64(2) {
			t.Fatalf("second revision number = %v", n)
		}
		if st := d.waitDeployment(t, d.agent, rev1); st["status"] != "succeeded" {
			t.Fatalf("first deployment rewritten: %v", st)
		}
		// Initial files were applied once: the second deployment has none staged.
		d.fake.get(func(f *fakeCompute) {
			if f.active[d.agent] != rev2 {
				t.Fatalf("active = %v", f.active)
			}
		})
	})
}

func TestDeploymentOutcomes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, url string) {
		d := newDeployWorld(t, url, func(m *server.Main) { m.Config.Worker.ConvergenceTimeout = 6 * 1e9 })
		e := d.e

		// Pending: progress shows the latest attempt and the next time.
		slow, _ := d.newAgent(t, "slow", true)
		d.fake.set(func(f *fakeCompute) { f.notReady[slow] = 7 }) // beyond the first pass's quick readiness polls (6, backing off over a second): ready in the second pass
		rev := d.deploy(t, slow)
		waitFor(t, "a recorded attempt", func() bool {
			st := e.call("GET", d.path("/agents/"+slow+"/deployments/"+rev), e.admin, nil).data()
			p, _ := st["progress"].(map[string]any)
			la, _ := p["lastAttempt"].(map[string]any)
			return la != nil && la["code"] == "AGENT_GATEWAY_STARTING" && la["message"] != ""
		})
		if st := d.waitDeployment(t, slow, rev); st["status"] != "succeeded" {
			t.Fatalf("slow deployment = %v", st)
		}

		// A runtime that holds a failure fails the deployment at once, with
		// the code of the table in reference/flows.md §6; only a failed
		// model probe carries its evidence (with the cause).
		checked := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		for _, c := range []struct {
			name, held, want string
			cause            *compute.FailureCause
			data             string
		}{
			{"rejected", compute.HeldAuthenticationFailed, "RUNTIME_AUTHENTICATION_FAILED", nil, "null"},
			{"probe-timeout", compute.HeldModelProbeTimeout, "RUNTIME_MODEL_PROBE_TIMEOUT", nil, "null"},
			{"probe-failed", compute.HeldModelProbeFailed, "RUNTIME_MODEL_PROBE_FAILED", &compute.FailureCause{Kind: "PROBE_STATUS", Detail: "rate_limit"},
				`{"runtimeFailure":{"cause":{"detail":"rate_limit","kind":"PROBE_STATUS"},"check":"model-probe","checkedAt":"2026-11-30T12:00:00.000Z","code":"MODEL_PROBE_FAILED","component":"gateway"}}`},
			{"held-unknown", "SOMETHING_NEW", "RUNTIME_STARTUP_FAILED", nil, "null"},
		} {
			bad, _ := d.newAgent(t, c.name, true)
			rf := &compute.RuntimeFailure{Component: "gateway", Check: "model-probe", CheckedAt: checked, Code: c.held, Cause: c.cause}
			d.fake.set(func(f *fakeCompute) { f.held[bad] = rf })
			st := d.waitDeployment(t, bad, d.deploy(t, bad))
			er, _ := st["error"].(map[string]any)
			if st["status"] != "failed" || er["code"] != c.want || er["message"] == "Deployment reconciliation failed." || toJSON(er["data"]) != c.data {
				t.Fatalf("%s: held %s = %v, want %s with data %s", c.name, c.held, toJSON(st), c.want, c.data)
			}
		}

		// Never ready: the convergence deadline, with the held runtime evidence.
		never, _ := d.newAgent(t, "never", true)
		d.fake.set(func(f *fakeCompute) { f.notReady[never] = -1 })
		st := d.waitDeployment(t, never, d.deploy(t, never))
		er := st["error"].(map[string]any)
		data, _ := er["data"].(map[string]any)
		if er["code"] != "CONVERGENCE_DEADLINE_EXCEEDED" || data["timeoutMs"] != float64(6000) || data["runtimeFailure"] == nil {
			t.Fatalf("deadline = %v", st)
		}

		// A newer deployment supersedes a pending one; stop fails a pending one.
		two, _ := d.newAgent(t, "two", true)
		d.fake.set(func(f *fakeCompute) { f.notReady[two] = -1 })
		first := d.deploy(t, two)
		second := d.deploy(t, two)
		d.fake.set(func(f *fakeCompute) { f.notReady[two] = 0 })
		if st := d.waitDeployment(t, two, first); st["status"] != "failed" || st["error"].(map[string]any)["code"] != "REVISION_SUPERSEDED" {
			t.Fatalf("superseded = %v", st)
		}
		if st := d.waitDeployment(t, two, second); st["status"] != "succeeded" {
			t.Fatalf("newer = %v", st)
		}
		halt, _ := d.newAgent(t, "halt", true)
		d.fake.set(func(f *fakeCompute) { f.notReady[halt] = -1 })
		pending := d.deploy(t, halt)
		e.call("POST", d.path("/agents/"+halt+"/stop"), e.admin, nil)
		if st := d.waitDeployment(t, halt, pending); st["error"].(map[string]any)["code"] != "REVISION_STOPPED" {
			t.Fatalf("stopped during convergence = %v", st)
		}
	})
}

func TestDeployAdmission(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, url string) {
		d := newDeployWorld(t, url)
		e := d.e
		// The Agent's own principal lacks secret:operate: 403 naming it.
		ungranted, sp := d.newAgent(t, "ungranted", false)
		r := e.call("POST", d.path("/agents/"+ungranted+"/deploy"), e.admin, nil)
		msg, _ := r.Body["error"].(map[string]any)["message"].(string)
		if r.Status != 403 || !strings.Contains(msg, sp) {
			t.Fatalf("deploy without the principal's grant = %d %v", r.Status, r.Body)
		}
		// No harness binding: 409.
		bare := d.create(e.admin, map[string]any{"name": "bare"}).data()["id"].(string)
		if r := e.call("POST", d.path("/agents/"+bare+"/deploy"), e.admin, nil); r.Status != 409 {
			t.Fatalf("deploy without harnessAuth = %d", r.Status)
		}
		// A body on the bodyless route: 400.
		if r := e.call("POST", d.path("/agents/"+d.agent+"/deploy"), e.admin, map[string]any{"x": 1}); r.Status != 400 {
			t.Fatalf("deploy with a body = %d", r.Status)
		}
		// The caller needs the exact deploy permission.
		nsRead := occ.P(occ.KindNamespace, occ.ActionRead)
		reader, _ := e.principal(grant{perms: []occ.Permission{nsRead, occ.P(occ.KindAgent, occ.ActionRead)}, namespace: d.ns})
		if r := e.call("POST", d.path("/agents/"+d.agent+"/deploy"), reader, nil); r.Status != 403 {
			t.Fatalf("deploy by a reader = %d", r.Status)
		}
		// Deployment status needs agent_revision:read alone.
		rev := d.deploy(t, d.agent)
		revReader, _ := e.principal(grant{perms: []occ.Permission{occ.P(occ.KindAgentRevision, occ.ActionRead)}, namespace: d.ns})
		if r := e.call("GET", d.path("/agents/"+d.agent+"/deployments/"+rev), revReader, nil); r.Status != 200 {
			t.Fatalf("status with agent_revision:read = %d", r.Status)
		}
		if r := e.call("GET", d.path("/agents/"+d.agent+"/deployments/"+rev), reader, nil); r.Status != 404 {
			t.Fatalf("status without agent_revision:read = %d", r.Status)
		}
	})
}

func TestAgentDeletion(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, url string) {
		d := newDeployWorld(t, url)
		e := d.e
		rev := d.deploy(t, d.agent)
		d.waitDeployment(t, d.agent, rev)
		del := []occ.Permission{occ.P(occ.KindNamespace, occ.ActionRead), occ.P(occ.KindAgent, occ.ActionRead), occ.P(occ.KindAgent, occ.ActionDelete)}
		alice, aliceID := e.principal(grant{perms: del, namespace: d.ns})
		bob, _ := e.principal(grant{perms: del, namespace: d.ns})
		d.fake.set(func(f *fakeCompute) { f.failDelete[d.agent] = true })
		r := e.call("DELETE", d.path("/agents/"+d.agent), alice, nil)
		if r.Status != 202 || r.data()["status"] != "deleting" || r.data()["desiredRuntimeState"] != "stopped" {
			t.Fatalf("delete = %d %v", r.Status, r.Body)
		}
		// Reads keep working; updates and deploys are 409 AGENT_DELETING.
		if r := e.call("GET", d.path("/agents/"+d.agent), e.admin, nil); r.Status != 200 {
			t.Fatalf("read while deleting = %d", r.Status)
		}
		if r := e.call("POST", d.path("/agents/"+d.agent+"/deploy"), e.admin, nil); r.Status != 409 || r.code() != "AGENT_DELETING" {
			t.Fatalf("deploy while deleting = %d %v", r.Status, r.Body)
		}
		if r := e.call("PATCH", d.path("/agents/"+d.agent), e.admin, map[string]any{"configurationId": d.cfg}); r.Status != 409 {
			t.Fatalf("update while deleting = %d", r.Status)
		}
		waitTeardown(t, e, d.agent, occ.TeardownFailed)
		if r := e.call("DELETE", d.path("/agents/"+d.agent), bob, nil); r.Status != 403 {
			t.Fatalf("retry by another caller = %d", r.Status)
		}
		if _, err := e.m.Store().DB().Exec(`DELETE FROM bindings WHERE principal_id = $1`, aliceID); err != nil {
			t.Fatal(err)
		}
		d.fake.set(func(f *fakeCompute) { f.failDelete[d.agent] = false })
		if r := e.call("DELETE", d.path("/agents/"+d.agent), bob, nil); r.Status != 202 {
			t.Fatalf("takeover = %d %v", r.Status, r.Body)
		}
		waitFor(t, "agent gone", func() bool { return e.call("GET", d.path("/agents/"+d.agent), e.admin, nil).Status == 404 })
		if _, err := e.m.Store().GetPrincipal(t.Context(), d.sp); err == nil {
			t.Fatal("the Agent's service principal outlived it")
		}
		d.fake.get(func(f *fakeCompute) {
			if !f.deleted[d.agent] {
				t.Fatal("driver never deleted the Agent")
			}
		})
		// The name is free again; the Secrets and Configuration survive.
		if r := d.create(e.admin, map[string]any{"name": "bot"}); r.Status != 201 {
			t.Fatalf("name reuse = %d %v", r.Status, r.Body)
		}
		if r := e.call("GET", d.path("/configurations/"+d.cfg), e.admin, nil); r.Status != 200 {
			t.Fatalf("configuration after agent deletion = %d", r.Status)
		}
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// events opens a deployment's event stream as the admin and checks that it
// is one; the caller closes the body.
func (d *deployWorld) events(t *testing.T, agent, rev string) *http.Response {
	t.Helper()
	e := d.e
	req, _ := http.NewRequest("GET", e.base+d.path("/agents/"+agent+"/deployments/"+rev+"/events"), nil)
	req.Header.Set("Authorization", "Bearer "+e.admin)
	res, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		res.Body.Close()
		t.Fatalf("events = %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	return res
}

// TestDeploymentEvents streams a deployment's status as Server-Sent Events
// until it is terminal.
func TestDeploymentEvents(t *testing.T) {
	t.Parallel()
	d := newDeployWorld(t, storetest.URL(t, "sqlite"))
	d.fake.set(func(f *fakeCompute) { f.notReady[d.agent] = 2 })
	res := d.events(t, d.agent, d.deploy(t, d.agent))
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body) // the stream ends once terminal
	if err != nil {
		t.Fatal(err)
	}
	events := strings.Split(strings.TrimSpace(string(raw)), "\n\n")
	last := events[len(events)-1]
	if !strings.HasPrefix(last, "event: status\ndata: ") || !strings.Contains(last, `"status":"succeeded"`) {
		t.Fatalf("last event = %q (of %d)", last, len(events))
	}
}

// TestFailedCandidateIsRetired: a deployment that fails stops its gateway.
func TestFailedCandidateIsRetired(t *testing.T) {
	t.Parallel()
	d := newDeployWorld(t, storetest.URL(t, "sqlite"))
	d.fake.set(func(f *fakeCompute) {
		f.held[d.agent] = &compute.RuntimeFailure{Component: "gateway", Check: "model-probe", Code: compute.HeldAuthenticationFailed}
	})
	st := d.waitDeployment(t, d.agent, d.deploy(t, d.agent))
	if st["status"] != "failed" {
		t.Fatalf("deployment = %v", st)
	}
	d.fake.get(func(f *fakeCompute) {
		if f.running[d.agent] != "" {
			t.Fatalf("the failed candidate still runs: %v", f.running)
		}
	})
}
