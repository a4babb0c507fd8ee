package api_test

import (
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestRuntimeLogs reads a deployed revision's gateway output through the
// local driver: bounded by tailLines, with the values of the revision's
// bound Secrets and of the gateway token redacted, each read audited; who
// may read is tested denied and allowed.
func TestRuntimeLogs(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		d := newDiagWorld(t, url)
		e := d.E
		canary := "sk-canary-" + occ.NewUUID()
		bind := func(id string) map[string]any {
			return map[string]any{"source": map[string]any{"kind": "secret", "namespaceId": d.Ns, "id": id}}
		}
		// A careless gateway prints a bound Secret and its own token.
		r := e.Call("POST", d.Path("/configurations"), e.Admin, map[string]any{"name": "echo", "kind": "agent", "values": map[string]any{},
			"secretBindings": map[string]any{
				"TEST_CANARY":      bind(d.NewSecret(t, "canary", canary)),
				"FAKEGATEWAY_ECHO": bind(d.NewSecret(t, "echo", "TEST_CANARY,OPENCLAW_GATEWAY_TOKEN"))}})
		if r.Status != 201 {
			t.Fatalf("configuration = %d %v", r.Status, r.Body)
		}
		d.Cfg = r.Data()["id"].(string)
		agent, _ := d.NewAgent(t, "echo", true)
		rev := d.Deploy(t, agent)
		if st := d.WaitDeployment(t, agent, rev); st["status"] != "succeeded" {
			t.Fatalf("deployment = %v", st)
		}
		logsPath := d.Path("/agents/" + agent + "/deployments/" + rev + "/runtime/logs")
		read := func(key, query string) servertest.Resp { return e.Call("GET", logsPath+query, key, nil) }

		got := read(e.Admin, "")
		if got.Status != 200 || got.Data()["found"] != true || got.Data()["revisionId"] != rev {
			t.Fatalf("logs = %d %v", got.Status, got.Body)
		}
		if strings.Contains(servertest.RawBody(got), canary) {
			t.Fatal("the runtime logs show a bound Secret's value")
		}
		lines := strings.Join(toStrings(got.Data()["lines"]), "\n")
		for _, want := range []string{"environment TEST_CANARY=[REDACTED]", "environment OPENCLAW_GATEWAY_TOKEN=[REDACTED]", "listening on ws://"} {
			if !strings.Contains(lines, want) {
				t.Errorf("logs lack %q:\n%s", want, lines)
			}
		}
		if one := read(e.Admin, "?tailLines=1"); one.Status != 200 || len(toStrings(one.Data()["lines"])) != 1 || one.Data()["truncated"] != true {
			t.Fatalf("tailLines=1 = %d %v", one.Status, one.Body)
		}
		for _, q := range []string{"?tailLines=0", "?tailLines=1001", "?tailLines=x", "?lines=5"} {
			if bad := read(e.Admin, q); bad.Status != 400 {
				t.Errorf("%s = %d %v; want 400", q, bad.Status, bad.Body)
			}
		}
		// Each read that passed the permission checks was audited (400s
		// are refused before).
		if n := len(e.Call("GET", "/audit-events?action=agents.runtime_logs.view&resourceId="+rev, e.Admin, nil).List()); n != 2 {
			t.Fatalf("%d audited log reads; want 2", n)
		}

		// agent:administer covers read_logs, unless read_logs is restricted;
		// agent:read alone or operate is not enough.
		agentRead, readLogs := occ.P(occ.KindAgent, occ.ActionRead), occ.P(occ.KindAgent, occ.ActionReadLogs)
		administer, operate := occ.P(occ.KindAgent, occ.ActionAdminister), occ.P(occ.KindAgent, occ.ActionOperate)
		nsRead := occ.P(occ.KindNamespace, occ.ActionRead)
		for _, c := range []struct {
			name    string
			g       servertest.Grant
			want    int
			otherNS bool
		}{
			{"read_logs", servertest.Grant{Perms: []occ.Permission{nsRead, agentRead, readLogs}}, 200, false},
			{"administer", servertest.Grant{Perms: []occ.Permission{nsRead, agentRead, administer}}, 200, false},
			{"administer with read_logs restricted", servertest.Grant{Perms: []occ.Permission{nsRead, agentRead, administer}, Restrict: []occ.Permission{readLogs}}, 403, false},
			{"operate", servertest.Grant{Perms: []occ.Permission{nsRead, agentRead, operate}}, 403, false},
			{"read_logs without agent:read", servertest.Grant{Perms: []occ.Permission{nsRead, readLogs}}, 404, false},
			{"read_logs in another Namespace", servertest.Grant{Perms: []occ.Permission{nsRead, agentRead, readLogs}}, 404, true},
		} {
			g := c.g
			g.Namespace = d.Ns
			if c.otherNS {
				g.Namespace = e.CreateNamespace("logs-other-" + occ.NewUUID()[:8])
			}
			key, _ := e.Principal(g)
			if got := read(key, ""); got.Status != c.want || (c.want == 200 && strings.Contains(servertest.RawBody(got), canary)) {
				t.Errorf("%s: logs = %d %v; want %d", c.name, got.Status, got.Body, c.want)
			}
		}
	})
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
