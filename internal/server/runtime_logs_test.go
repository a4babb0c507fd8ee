package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestRuntimeLogs reads a deployed revision's gateway output through the
// local driver: bounded by tailLines, with the values of the revision's
// bound Secrets and of the gateway token redacted, each read audited; who
// may read is tested denied and allowed.
func TestRuntimeLogs(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, url string) {
		d := newDiagWorld(t, url)
		e := d.e
		canary := "sk-canary-" + occ.NewUUID()
		bind := func(id string) map[string]any {
			return map[string]any{"source": map[string]any{"kind": "secret", "namespaceId": d.ns, "id": id}}
		}
		// A careless gateway prints a bound Secret and its own token.
		r := e.call("POST", d.path("/configurations"), e.admin, map[string]any{"name": "echo", "kind": "agent", "values": map[string]any{},
			"secretBindings": map[string]any{
				"TEST_CANARY":      bind(d.newSecret(t, "canary", canary)),
				"FAKEGATEWAY_ECHO": bind(d.newSecret(t, "echo", "TEST_CANARY,OPENCLAW_GATEWAY_TOKEN"))}})
		if r.Status != 201 {
			t.Fatalf("configuration = %d %v", r.Status, r.Body)
		}
		d.cfg = r.data()["id"].(string)
		agent, _ := d.newAgent(t, "echo", true)
		rev := d.deploy(t, agent)
		if st := d.waitDeployment(t, agent, rev); st["status"] != "succeeded" {
			t.Fatalf("deployment = %v", st)
		}
		logsPath := d.path("/agents/" + agent + "/deployments/" + rev + "/runtime/logs")
		read := func(key, query string) resp { return e.call("GET", logsPath+query, key, nil) }

		got := read(e.admin, "")
		if got.Status != 200 || got.data()["found"] != true || got.data()["revisionId"] != rev {
			t.Fatalf("logs = %d %v", got.Status, got.Body)
		}
		if strings.Contains(rawBody(got), canary) {
			t.Fatal("the runtime logs show a bound Secret's value")
		}
		lines := strings.Join(toStrings(got.data()["lines"]), "\n")
		for _, want := range []string{"environment TEST_CANARY=[REDACTED]", "environment OPENCLAW_GATEWAY_TOKEN=[REDACTED]", "listening on ws://"} {
			if !strings.Contains(lines, want) {
				t.Errorf("logs lack %q:\n%s", want, lines)
			}
		}
		if one := read(e.admin, "?tailLines=1"); one.Status != 200 || len(toStrings(one.data()["lines"])) != 1 || one.data()["truncated"] != true {
			t.Fatalf("tailLines=1 = %d %v", one.Status, one.Body)
		}
		for _, q := range []string{"?tailLines=0", "?tailLines=1001", "?tailLines=x", "?lines=5"} {
			if bad := read(e.admin, q); bad.Status != 400 {
				t.Errorf("%s = %d %v; want 400", q, bad.Status, bad.Body)
			}
		}
		// Each read that passed the permission checks was audited (400s
		// are refused before).
		if n := len(e.call("GET", "/audit-events?action=agents.runtime_logs.view&resourceId="+rev, e.admin, nil).list()); n != 2 {
			t.Fatalf("%d audited log reads; want 2", n)
		}

		// agent:administer covers read_logs, unless read_logs is restricted;
		// agent:read alone or operate is not enough.
		agentRead, readLogs := occ.P(occ.KindAgent, occ.ActionRead), occ.P(occ.KindAgent, occ.ActionReadLogs)
		administer, operate := occ.P(occ.KindAgent, occ.ActionAdminister), occ.P(occ.KindAgent, occ.ActionOperate)
		nsRead := occ.P(occ.KindNamespace, occ.ActionRead)
		for _, c := range []struct {
			name    string
			g       grant
			want    int
			otherNS bool
		}{
			{"read_logs", grant{perms: []occ.Permission{nsRead, agentRead, readLogs}}, 200, false},
			{"administer", grant{perms: []occ.Permission{nsRead, agentRead, administer}}, 200, false},
			{"administer with read_logs restricted", grant{perms: []occ.Permission{nsRead, agentRead, administer}, restrict: []occ.Permission{readLogs}}, 403, false},
			{"operate", grant{perms: []occ.Permission{nsRead, agentRead, operate}}, 403, false},
			{"read_logs without agent:read", grant{perms: []occ.Permission{nsRead, readLogs}}, 404, false},
			{"read_logs in another Namespace", grant{perms: []occ.Permission{nsRead, agentRead, readLogs}}, 404, true},
		} {
			g := c.g
			g.namespace = d.ns
			if c.otherNS {
				g.namespace = e.createNamespace("logs-other-" + occ.NewUUID()[:8])
			}
			key, _ := e.principal(g)
			if got := read(key, ""); got.Status != c.want || (c.want == 200 && strings.Contains(rawBody(got), canary)) {
				t.Errorf("%s: logs = %d %v; want %d", c.name, got.Status, got.Body, c.want)
			}
		}
	})
}

func rawBody(r resp) string {
	b, _ := json.Marshal(r.Body)
	return string(b)
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
