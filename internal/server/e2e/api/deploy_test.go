package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

func newDeployWorld(t *testing.T, url string, opts ...func(*server.Main)) *servertest.DeployWorld {
	fake := servertest.NewFakeCompute(t)
	e := servertest.Boot(t, url, fake, opts...)
	w := &servertest.AgentWorld{E: e, Ns: e.CreateNamespace("deploy")}
	w.Secret = e.Call("POST", w.Path("/secrets"), e.Admin, map[string]any{"name": "openai", "value": "sk-deploy-canary"}).Data()["id"].(string)
	slack := e.Call("POST", w.Path("/secrets"), e.Admin, map[string]any{"name": "slack", "value": "xoxb-slack-canary"}).Data()["id"].(string)
	w.Cfg = e.Call("POST", w.Path("/configurations"), e.Admin, map[string]any{"name": "c", "kind": "agent",
		"values":         map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": "openai/gpt-5"}}},
		"secretBindings": map[string]any{"SLACK_BOT_TOKEN": map[string]any{"source": map[string]any{"kind": "secret", "namespaceId": w.Ns, "id": slack}}}}).Data()["id"].(string)
	d := &servertest.DeployWorld{AgentWorld: w, Fake: fake}
	d.Agent, d.Sp = d.NewAgent(t, "bot", true)
	return d
}

func TestDeployStopRedeploy(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		d := newDeployWorld(t, url)
		e := d.E
		rev1 := d.Deploy(t, d.Agent)
		st := d.WaitDeployment(t, d.Agent, rev1)
		if st["status"] != "succeeded" || st["error"] != nil || st["progress"] != nil || len(st["warnings"].([]any)) != 0 {
			t.Fatalf("deployment = %v", st)
		}
		g := e.Call("GET", d.Path("/agents/"+d.Agent), e.Admin, nil).Data()
		if g["activeRevisionId"] != rev1 || g["desiredRuntimeState"] != "running" {
			t.Fatalf("agent after deploy = %v", g)
		}
		d.Fake.Get(func(f *servertest.FakeCompute) {
			env := f.EnvSeen[d.Agent]
			if f.Active[d.Agent] != rev1 || env["OPENAI_API_KEY"] != "sk-deploy-canary" || env["SLACK_BOT_TOKEN"] != "xoxb-slack-canary" ||
				f.Files[d.Agent]["AGENTS.md"] != "Be brief.\n" {
				t.Fatalf("driver saw active %v env %v files %v", f.Active, env, f.Files)
			}
		})
		rv := e.Call("GET", d.Path("/agents/"+d.Agent+"/revisions/"+rev1), e.Admin, nil).Data()
		if rv["number"] != float64(1) || rv["configuration"].(map[string]any)["document"] == nil || strings.Contains(servertest.ToJSON(rv), "canary") {
			t.Fatalf("revision = %v", rv)
		}

		// A Configuration PATCH changes no deployed revision.
		e.Call("PATCH", d.Path("/configurations/"+d.Cfg), e.Admin, map[string]any{"values": map[string]any{"agents": nil}})
		if again := e.Call("GET", d.Path("/agents/"+d.Agent+"/revisions/"+rev1), e.Admin, nil).Data(); servertest.ToJSON(again) != servertest.ToJSON(rv) {
			t.Fatalf("revision changed after a Configuration PATCH: %v", again)
		}

		// Stop: execution removed, then activeRevisionId cleared; history kept.
		if r := e.Call("POST", d.Path("/agents/"+d.Agent+"/stop"), e.Admin, nil); r.Status != 202 || r.Data()["desiredRuntimeState"] != "stopped" {
			t.Fatalf("stop = %d %v", r.Status, r.Body)
		}
		servertest.WaitFor(t, "activeRevisionId cleared", func() bool {
			return e.Call("GET", d.Path("/agents/"+d.Agent), e.Admin, nil).Data()["activeRevisionId"] == nil
		})
		d.Fake.Get(func(f *servertest.FakeCompute) {
			if f.Running[d.Agent] != "" {
				t.Fatalf("still running after stop: %v", f.Running)
			}
		})
		if r := e.Call("POST", d.Path("/agents/"+d.Agent+"/stop"), e.Admin, nil); r.Status != 202 {
			t.Fatalf("repeated stop = %d", r.Status)
		}

		// Deploy again: a new revision, number 2; the first result is unchanged.
		rev2 := d.Deploy(t, d.Agent)
		if st := d.WaitDeployment(t, d.Agent, rev2); st["status"] != "succeeded" {
			t.Fatalf("second deployment = %v", st)
		}
		if n := e.Call("GET", d.Path("/agents/"+d.Agent+"/revisions/"+rev2), e.Admin, nil).Data()["number"]; n != float64(2) {
			t.Fatalf("second revision number = %v", n)
		}
		if st := d.WaitDeployment(t, d.Agent, rev1); st["status"] != "succeeded" {
			t.Fatalf("first deployment rewritten: %v", st)
		}
		// Initial files were applied once: the second deployment has none staged.
		d.Fake.Get(func(f *servertest.FakeCompute) {
			if f.Active[d.Agent] != rev2 {
				t.Fatalf("active = %v", f.Active)
			}
		})

		// One unreadable saved field of a revision (its plugin selections):
		// the detail and the list keep every readable sibling and name the
		// field.
		var snap string
		if err := e.M.Store().DB().QueryRow(`SELECT snapshot FROM agent_revisions WHERE id = $1`, rev1).Scan(&snap); err != nil {
			t.Fatal(err)
		}
		var fields map[string]any
		if err := json.Unmarshal([]byte(snap), &fields); err != nil {
			t.Fatal(err)
		}
		fields["plugins"] = "not an object"
		if _, err := e.M.Store().DB().Exec(`UPDATE agent_revisions SET snapshot = $1 WHERE id = $2`, servertest.ToJSON(fields), rev1); err != nil {
			t.Fatal(err)
		}
		readable := func(what string, got map[string]any) {
			t.Helper()
			re, _ := got["configurationReadError"].(map[string]any)
			if re["code"] != "SAVED_CONFIGURATION_UNREADABLE" || re["field"] != "plugins" || got["plugins"] != nil {
				t.Fatalf("%s of a revision with unreadable plugins: %v", what, got)
			}
			for _, k := range []string{"configuration", "executionMode", "harnessAuth", "backendId", "computeDriver", "servicePrincipalId", "number"} {
				if servertest.ToJSON(got[k]) != servertest.ToJSON(rv[k]) {
					t.Fatalf("%s of a revision with unreadable plugins: %s = %v, want %v as before", what, k, got[k], rv[k])
				}
			}
		}
		readable("GET", e.Call("GET", d.Path("/agents/"+d.Agent+"/revisions/"+rev1), e.Admin, nil).Data())
		var listed map[string]any
		for _, item := range e.Call("GET", d.Path("/agents/"+d.Agent+"/revisions"), e.Admin, nil).List() {
			if item.(map[string]any)["id"] == rev1 {
				listed = item.(map[string]any)
			}
		}
		readable("the list", listed)
	})
}

func TestDeploymentOutcomes(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		d := newDeployWorld(t, url, func(m *server.Main) { m.Config.Worker.ConvergenceTimeout = 6 * 1e9 })
		e := d.E

		// Pending: progress shows the latest attempt and the next time.
		slow, _ := d.NewAgent(t, "slow", true)
		d.Fake.Set(func(f *servertest.FakeCompute) { f.NotReady[slow] = 7 }) // beyond the first pass's quick readiness polls (6, backing off over a second): ready in the second pass
		rev := d.Deploy(t, slow)
		servertest.WaitFor(t, "a recorded attempt", func() bool {
			st := e.Call("GET", d.Path("/agents/"+slow+"/deployments/"+rev), e.Admin, nil).Data()
			p, _ := st["progress"].(map[string]any)
			la, _ := p["lastAttempt"].(map[string]any)
			return la != nil && la["code"] == "AGENT_GATEWAY_STARTING" && la["message"] != ""
		})
		if st := d.WaitDeployment(t, slow, rev); st["status"] != "succeeded" {
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
			bad, _ := d.NewAgent(t, c.name, true)
			rf := &compute.RuntimeFailure{Component: "gateway", Check: "model-probe", CheckedAt: checked, Code: c.held, Cause: c.cause}
			d.Fake.Set(func(f *servertest.FakeCompute) { f.Held[bad] = rf })
			st := d.WaitDeployment(t, bad, d.Deploy(t, bad))
			er, _ := st["error"].(map[string]any)
			if st["status"] != "failed" || er["code"] != c.want || er["message"] == "Deployment reconciliation failed." || servertest.ToJSON(er["data"]) != c.data {
				t.Fatalf("%s: held %s = %v, want %s with data %s", c.name, c.held, servertest.ToJSON(st), c.want, c.data)
			}
		}

		// Never ready: a client polling sees the work claimed (running, no
		// next attempt) and queued again between passes (the earliest time it
		// can be claimed, and the latest attempt's allowlisted code and fixed
		// message), then the convergence deadline with the held runtime
		// evidence.
		never, _ := d.NewAgent(t, "never", true)
		d.Fake.Set(func(f *servertest.FakeCompute) { f.NotReady[never] = -1 })
		var claimed, requeued map[string]any
		st := d.WatchDeployment(t, never, d.Deploy(t, never), func(st map[string]any) {
			p, _ := st["progress"].(map[string]any)
			switch {
			case st["status"] == "running" && p != nil && p["nextAttemptAt"] == nil && claimed == nil:
				claimed = st
			case st["status"] == "queued" && p != nil && p["lastAttempt"] != nil && requeued == nil:
				requeued = st
			}
		})
		if claimed == nil || requeued == nil {
			t.Fatalf("pending states seen: claimed %v, queued again %v", claimed, requeued)
		}
		p := requeued["progress"].(map[string]any)
		la := p["lastAttempt"].(map[string]any)
		next, err := time.Parse(time.RFC3339Nano, fmt.Sprint(p["nextAttemptAt"]))
		at, err2 := time.Parse(time.RFC3339Nano, fmt.Sprint(la["at"]))
		if err != nil || err2 != nil || next.Before(at) || la["code"] != "AGENT_GATEWAY_STARTING" ||
			la["message"] != "The Agent's gateway is starting." {
			t.Fatalf("queued between passes: progress %v", servertest.ToJSON(p))
		}
		er := st["error"].(map[string]any)
		data, _ := er["data"].(map[string]any)
		if er["code"] != "CONVERGENCE_DEADLINE_EXCEEDED" || data["timeoutMs"] != float64(6000) || data["runtimeFailure"] == nil {
			t.Fatalf("deadline = %v", st)
		}

		// A newer deployment supersedes a pending one; stop fails a pending one.
		two, _ := d.NewAgent(t, "two", true)
		d.Fake.Set(func(f *servertest.FakeCompute) { f.NotReady[two] = -1 })
		first := d.Deploy(t, two)
		second := d.Deploy(t, two)
		d.Fake.Set(func(f *servertest.FakeCompute) { f.NotReady[two] = 0 })
		if st := d.WaitDeployment(t, two, first); st["status"] != "failed" || st["error"].(map[string]any)["code"] != "REVISION_SUPERSEDED" {
			t.Fatalf("superseded = %v", st)
		}
		if st := d.WaitDeployment(t, two, second); st["status"] != "succeeded" {
			t.Fatalf("newer = %v", st)
		}
		halt, _ := d.NewAgent(t, "halt", true)
		d.Fake.Set(func(f *servertest.FakeCompute) { f.NotReady[halt] = -1 })
		pending := d.Deploy(t, halt)
		e.Call("POST", d.Path("/agents/"+halt+"/stop"), e.Admin, nil)
		if st := d.WaitDeployment(t, halt, pending); st["error"].(map[string]any)["code"] != "REVISION_STOPPED" {
			t.Fatalf("stopped during convergence = %v", st)
		}
	})
}

func TestDeployAdmission(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		d := newDeployWorld(t, url)
		e := d.E
		// The Agent's own principal lacks secret:operate: 403 naming it.
		ungranted, sp := d.NewAgent(t, "ungranted", false)
		r := e.Call("POST", d.Path("/agents/"+ungranted+"/deploy"), e.Admin, nil)
		msg, _ := r.Body["error"].(map[string]any)["message"].(string)
		if r.Status != 403 || !strings.Contains(msg, sp) {
			t.Fatalf("deploy without the principal's grant = %d %v", r.Status, r.Body)
		}
		// No harness binding: 409.
		bare := d.Create(e.Admin, map[string]any{"name": "bare"}).Data()["id"].(string)
		if r := e.Call("POST", d.Path("/agents/"+bare+"/deploy"), e.Admin, nil); r.Status != 409 {
			t.Fatalf("deploy without harnessAuth = %d", r.Status)
		}
		// A body on the bodyless route: 400.
		if r := e.Call("POST", d.Path("/agents/"+d.Agent+"/deploy"), e.Admin, map[string]any{"x": 1}); r.Status != 400 {
			t.Fatalf("deploy with a body = %d", r.Status)
		}
		// The caller needs the exact deploy permission.
		nsRead := occ.P(occ.KindNamespace, occ.ActionRead)
		reader, _ := e.Principal(servertest.Grant{Perms: []occ.Permission{nsRead, occ.P(occ.KindAgent, occ.ActionRead)}, Namespace: d.Ns})
		if r := e.Call("POST", d.Path("/agents/"+d.Agent+"/deploy"), reader, nil); r.Status != 403 {
			t.Fatalf("deploy by a reader = %d", r.Status)
		}
		// Deployment status needs agent_revision:read alone.
		rev := d.Deploy(t, d.Agent)
		revReader, _ := e.Principal(servertest.Grant{Perms: []occ.Permission{occ.P(occ.KindAgentRevision, occ.ActionRead)}, Namespace: d.Ns})
		if r := e.Call("GET", d.Path("/agents/"+d.Agent+"/deployments/"+rev), revReader, nil); r.Status != 200 {
			t.Fatalf("status with agent_revision:read = %d", r.Status)
		}
		if r := e.Call("GET", d.Path("/agents/"+d.Agent+"/deployments/"+rev), reader, nil); r.Status != 404 {
			t.Fatalf("status without agent_revision:read = %d", r.Status)
		}
	})
}

func TestAgentDeletion(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		d := newDeployWorld(t, url)
		e := d.E
		rev := d.Deploy(t, d.Agent)
		d.WaitDeployment(t, d.Agent, rev)
		del := []occ.Permission{occ.P(occ.KindNamespace, occ.ActionRead), occ.P(occ.KindAgent, occ.ActionRead), occ.P(occ.KindAgent, occ.ActionDelete)}
		alice, aliceID := e.Principal(servertest.Grant{Perms: del, Namespace: d.Ns})
		bob, _ := e.Principal(servertest.Grant{Perms: del, Namespace: d.Ns})
		d.Fake.Set(func(f *servertest.FakeCompute) { f.FailDelete[d.Agent] = true })
		r := e.Call("DELETE", d.Path("/agents/"+d.Agent), alice, nil)
		if r.Status != 202 || r.Data()["status"] != "deleting" || r.Data()["desiredRuntimeState"] != "stopped" {
			t.Fatalf("delete = %d %v", r.Status, r.Body)
		}
		// Reads keep working; updates and deploys are 409 AGENT_DELETING.
		if r := e.Call("GET", d.Path("/agents/"+d.Agent), e.Admin, nil); r.Status != 200 {
			t.Fatalf("read while deleting = %d", r.Status)
		}
		if r := e.Call("POST", d.Path("/agents/"+d.Agent+"/deploy"), e.Admin, nil); r.Status != 409 || r.Code() != "AGENT_DELETING" {
			t.Fatalf("deploy while deleting = %d %v", r.Status, r.Body)
		}
		if r := e.Call("PATCH", d.Path("/agents/"+d.Agent), e.Admin, map[string]any{"configurationId": d.Cfg}); r.Status != 409 {
			t.Fatalf("update while deleting = %d", r.Status)
		}
		waitTeardown(t, e, d.Agent, occ.TeardownFailed)
		if r := e.Call("DELETE", d.Path("/agents/"+d.Agent), bob, nil); r.Status != 403 {
			t.Fatalf("retry by another caller = %d", r.Status)
		}
		if _, err := e.M.Store().DB().Exec(`DELETE FROM bindings WHERE principal_id = $1`, aliceID); err != nil {
			t.Fatal(err)
		}
		d.Fake.Set(func(f *servertest.FakeCompute) { f.FailDelete[d.Agent] = false })
		if r := e.Call("DELETE", d.Path("/agents/"+d.Agent), bob, nil); r.Status != 202 {
			t.Fatalf("takeover = %d %v", r.Status, r.Body)
		}
		servertest.WaitFor(t, "agent gone", func() bool { return e.Call("GET", d.Path("/agents/"+d.Agent), e.Admin, nil).Status == 404 })
		if _, err := e.M.Store().GetPrincipal(t.Context(), d.Sp); err == nil {
			t.Fatal("the Agent's service principal outlived it")
		}
		d.Fake.Get(func(f *servertest.FakeCompute) {
			if !f.Deleted[d.Agent] {
				t.Fatal("driver never deleted the Agent")
			}
		})
		// The name is free again; the Secrets and Configuration survive.
		if r := d.Create(e.Admin, map[string]any{"name": "bot"}); r.Status != 201 {
			t.Fatalf("name reuse = %d %v", r.Status, r.Body)
		}
		if r := e.Call("GET", d.Path("/configurations/"+d.Cfg), e.Admin, nil); r.Status != 200 {
			t.Fatalf("configuration after agent deletion = %d", r.Status)
		}
	})
}

// TestDeploymentEvents streams a deployment's status as Server-Sent Events
// until it is terminal.
func TestDeploymentEvents(t *testing.T) {
	t.Parallel()
	d := newDeployWorld(t, storetest.Migrated(t, "sqlite"))
	d.Fake.Set(func(f *servertest.FakeCompute) { f.NotReady[d.Agent] = 2 })
	res := d.Events(t, d.Agent, d.Deploy(t, d.Agent))
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
	d := newDeployWorld(t, storetest.Migrated(t, "sqlite"))
	d.Fake.Set(func(f *servertest.FakeCompute) {
		f.Held[d.Agent] = &compute.RuntimeFailure{Component: "gateway", Check: "model-probe", Code: compute.HeldAuthenticationFailed}
	})
	st := d.WaitDeployment(t, d.Agent, d.Deploy(t, d.Agent))
	if st["status"] != "failed" {
		t.Fatalf("deployment = %v", st)
	}
	d.Fake.Get(func(f *servertest.FakeCompute) {
		if f.Running[d.Agent] != "" {
			t.Fatalf("the failed candidate still runs: %v", f.Running)
		}
	})
}
