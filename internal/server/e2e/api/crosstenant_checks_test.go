package api_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store"
)

// extraBodies are request bodies beyond the document's examples, so that
// every reference a body can make is tried with B's ID: operation ID →
// bodies with {placeholders}. (A Preset's references are checked only
// when an Agent uses it: there an ID of B names nothing, like any other.)
var extraBodies = map[string][]map[string]any{
	"createAgent": append(harnessBodies(true),
		map[string]any{"name": "xt-preset", "configurationId": "{configurationId}", "presetId": "{presetId}"}),
	"updateAgent":                harnessBodies(false),
	"createNamespaceBinding":     targetBodies("roleId", "{roleId}"),
	"createNamespaceRestriction": targetBodies("permission", "namespace:read"),
	"createServicePrincipal":     {{"name": "xt", "namespaceId": "{namespaceId}"}},
	"createServiceKey":           {{"servicePrincipalId": "{servicePrincipalId}", "namespaceId": "{namespaceId}", "name": "xt"}},
}

// harnessBodies are Agent bodies whose harness binding names each kind of
// source: a Secret (of the Agent's Namespace, or naming one), a service
// account, a Credential Source.
func harnessBodies(create bool) []map[string]any {
	bodies := []map[string]any{
		{"harnessAuth": map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "id": "{secretId}"}}},
		{"harnessAuth": map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "namespaceId": "{namespaceId}", "id": "{secretId}"}}},
		{"executionMode": "dedicated", "backendId": matrixBackendID,
			"harnessAuth": map[string]any{"method": "chatgpt_service_account", "serviceAccountId": "{serviceAccountId}"}},
		{"executionMode": "dedicated", "harnessAuth": map[string]any{"method": "credential_source", "sourceId": "{credentialSourceId}"}},
	}
	for i, b := range bodies {
		b["configurationId"] = "{configurationId}"
		if create {
			b["name"] = fmt.Sprintf("xt-harness-%d", i)
		}
	}
	return bodies
}

// targetBodies are grant bodies targeting one resource of each kind.
func targetBodies(field, value string) []map[string]any {
	kinds := map[string]string{"namespace": "namespaceId", "configuration": "configurationId", "preset": "presetId",
		"service_account": "serviceAccountId", "secret": "secretId", "agent": "agentId", "agent_revision": "revisionId",
		"credential_source": "credentialSourceId"}
	var out []map[string]any
	for kind, fixture := range kinds {
		out = append(out, map[string]any{"principalId": "{principalId}", field: value,
			"target": map[string]any{"kind": kind, "id": "{" + fixture + "}"}})
	}
	return out
}

// rowsNaming returns every row of the database's tables that names one of
// ids, as "table: values", sorted; authorization denials (a refused
// request may record one) and the worker's claims are left out.
func rowsNaming(e *servertest.Env, ids []string) []string {
	e.T.Helper()
	db := e.M.Store().DB()
	q := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`
	if e.M.Store().Dialect() != store.SQLite {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`
	}
	var tables []string
	rows, err := db.Query(q)
	if err != nil {
		e.T.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			e.T.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Close(); err != nil {
		e.T.Fatal(err)
	}
	var out []string
	for _, table := range tables {
		where := ""
		switch table {
		case "work_claims":
			continue
		case "audit_events":
			where = " WHERE kind <> 'authorization_denial'"
		}
		for _, row := range tableRows(e, "SELECT * FROM "+table+where) {
			if slices.ContainsFunc(ids, func(id string) bool { return strings.Contains(row, id) }) {
				out = append(out, table+": "+row)
			}
		}
	}
	slices.Sort(out)
	return out
}

// tableRows returns the rows of a query, each as its values joined by " | ".
func tableRows(e *servertest.Env, q string) []string {
	rows, err := e.M.Store().DB().Query(q)
	if err != nil {
		e.T.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		e.T.Fatal(err)
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			e.T.Fatal(err)
		}
		strs := make([]string, len(vals))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			strs[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(strs, " | "))
	}
	if err := rows.Err(); err != nil {
		e.T.Fatal(err)
	}
	return out
}

// rowsDiff shows the rows only before ("-") and only after ("+").
func rowsDiff(before, after []string) string {
	var b strings.Builder
	for _, r := range before {
		if !slices.Contains(after, r) {
			b.WriteString("- " + r + "\n")
		}
	}
	for _, r := range after {
		if !slices.Contains(before, r) {
			b.WriteString("+ " + r + "\n")
		}
	}
	return b.String()
}

// auditTellsNothing reads A's audit log as A's administrator: each of B's
// IDs appears in it exactly as often as the random IDs that stood in for it.
func (s *sweep) auditTellsNothing() {
	s.t.Helper()
	var log strings.Builder
	for page := ""; ; {
		r := s.e.Call("GET", "/namespaces/"+s.a.ns()+"/audit-events?pageSize=1000"+page, s.key, nil)
		if r.Status != 200 {
			s.t.Fatalf("A's audit log: %d %v", r.Status, r.Body)
		}
		log.WriteString(servertest.ToJSON(r.List()))
		token, _ := r.Body["meta"].(map[string]any)["nextPageToken"].(string)
		if token == "" {
			break
		}
		page = "&pageToken=" + token
	}
	for id, twins := range s.twins {
		n := 0
		for _, tw := range twins {
			n += strings.Count(log.String(), tw)
		}
		if got := strings.Count(log.String(), id); got != n {
			s.t.Errorf("A's audit log names B's %s %d times, its random twins %d times", id, got, n)
		}
	}
}

// allowed sends, as A's administrator with A's IDs, every read of a
// Namespace's routes and every create in a Namespace with the document's
// example: each succeeds, and none names any of B's IDs. It returns how
// many it sent.
func (s *sweep) allowed() int {
	n := 0
	for _, r := range routes(s.t, s.e.Spec) {
		if !(r.mode == "list" || r.mode == "collection" || r.mode == "exact" && r.method == "GET") || r.id == "listNamespaceAuditEvents" {
			continue // A's audit log: auditTellsNothing
		}
		n++
		s.t.Run("allowed/"+r.id, func(t *testing.T) {
			path, res, raw := s.sendAsA(t, r)
			if want := successStatus(r.op); res.StatusCode != want {
				t.Fatalf("%s %s = %d %s, want %d", r.method, path, res.StatusCode, raw, want)
			}
		})
	}
	return n
}

// sendAsA sends a route with A's IDs and the document's example as A's
// administrator, and fails the test when the answer names one of B's IDs.
func (s *sweep) sendAsA(t *testing.T, r route) (string, *http.Response, []byte) {
	t.Helper()
	path, body := request(r, rawExample(t, r), func(name string) string { return s.a.value(t, r.path, name) })
	res, raw := s.e.WithT(t).CallRaw(r.method, path, s.key, body)
	for _, id := range s.b.ids() {
		if strings.Contains(string(raw), id) {
			t.Errorf("%s %s names B's %s: %s", r.method, path, id, raw)
		}
	}
	return path, res, raw
}
