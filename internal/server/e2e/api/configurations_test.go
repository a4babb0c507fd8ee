package api_test

import (
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

func TestConfigurations(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := servertest.Boot(t, url, nil)
		ns := e.CreateNamespace("cfg")
		base := "/namespaces/" + ns + "/configurations"
		doc := map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": "openai/gpt-5", "thinking": "low"}},
			"channels": map[string]any{"slack": map[string]any{"enabled": true}}}

		r := e.Call("POST", base, e.Admin, map[string]any{"name": "support", "kind": "agent", "values": doc})
		if r.Status != 201 || r.Data()["generation"] != float64(1) || r.Header.Get("ETag") != `"1"` {
			t.Fatalf("create = %d %v", r.Status, r.Body)
		}
		id := r.Data()["id"].(string)
		if servertest.ToJSON(r.Data()["values"]) != servertest.ToJSON(doc) {
			t.Fatalf("stored document %v, want %v", r.Data()["values"], doc)
		}

		// Merge patch: change one leaf, delete one, add one; generation +1.
		patch := map[string]any{"values": map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": "anthropic/claude", "thinking": nil}},
			"tools": map[string]any{"web": true}}}
		r = e.Call("PATCH", base+"/"+id, e.Admin, patch, "If-Match", `"1"`)
		want := map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": "anthropic/claude"}},
			"channels": map[string]any{"slack": map[string]any{"enabled": true}}, "tools": map[string]any{"web": true}}
		if r.Status != 200 || r.Data()["generation"] != float64(2) || servertest.ToJSON(r.Data()["values"]) != servertest.ToJSON(want) {
			t.Fatalf("patch = %d %v", r.Status, r.Body)
		}
		if r := e.Call("PATCH", base+"/"+id, e.Admin, map[string]any{"name": "x"}, "If-Match", `"1"`); r.Status != 412 {
			t.Fatalf("stale If-Match = %d", r.Status)
		}
		// If-Match: * matches whatever version exists; a missing Configuration stays 404.
		r = e.Call("PATCH", base+"/"+id, e.Admin, map[string]any{"values": map[string]any{"tools": map[string]any{"web": true}}}, "If-Match", "*")
		if r.Status != 200 || r.Data()["generation"] != float64(3) || r.Header.Get("ETag") != `"3"` {
			t.Fatalf("If-Match: * = %d %v", r.Status, r.Body)
		}
		if r := e.Call("PATCH", base+"/cfg_00000000-0000-4000-8000-000000000000", e.Admin, map[string]any{"name": "x"}, "If-Match", "*"); r.Status != 404 {
			t.Fatalf("If-Match: * on a missing Configuration = %d %v", r.Status, r.Body)
		}
		if r := e.Call("PATCH", base+"/"+id, e.Admin, map[string]any{}); r.Status != 400 {
			t.Fatalf("empty patch = %d", r.Status)
		}

		// Bad input: 400 and nothing kept.
		for name, body := range map[string]any{
			"values not an object":  map[string]any{"name": "b1", "kind": "agent", "values": []any{1}},
			"unknown kind":          map[string]any{"name": "b2", "kind": "robot", "values": map[string]any{}},
			"forbidden key":         `{"name":"b3","kind":"agent","values":{"constructor":1}}`,
			"reserved destination":  map[string]any{"name": "b4", "kind": "agent", "values": map[string]any{}, "secretBindings": map[string]any{"OPENAI_API_KEY": binding(ns)}},
			"bad variable name":     map[string]any{"name": "b5", "kind": "agent", "values": map[string]any{}, "secretBindings": map[string]any{"1BAD": binding(ns)}},
			"secret of another ns":  map[string]any{"name": "b6", "kind": "agent", "values": map[string]any{}, "secretBindings": map[string]any{"SLACK_BOT_TOKEN": binding("ns_00000000-0000-4000-8000-000000000000")}},
			"missing secret":        map[string]any{"name": "b7", "kind": "agent", "values": map[string]any{}, "secretBindings": map[string]any{"SLACK_BOT_TOKEN": binding(ns)}},
			"too deep":              `{"name":"b8","kind":"agent","values":` + deep(30) + `}`,
			"id supplied by caller": map[string]any{"id": "cfg_x", "name": "b9", "kind": "agent", "values": map[string]any{}},
		} {
			if r := e.Call("POST", base, e.Admin, body); r.Status != 400 || r.Code() != "INVALID_REQUEST" {
				t.Errorf("%s: %d %v", name, r.Status, r.Body)
			}
		}
		if l := e.Call("GET", base, e.Admin, nil).List(); len(l) != 1 {
			t.Fatalf("%d configurations after rejected creates, want 1", len(l))
		}

		// Unreadable saved settings: metadata still listed, the document omitted and named.
		if _, err := e.M.Store().DB().Exec(`UPDATE configurations SET doc_values = '{"truncated'  WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		r = e.Call("GET", base+"/"+id, e.Admin, nil)
		re, _ := r.Data()["configurationReadError"].(map[string]any)
		if r.Status != 200 || r.Data()["values"] != nil || re["code"] != "SAVED_CONFIGURATION_UNREADABLE" || re["field"] != "values" || r.Data()["name"] != "support" {
			t.Fatalf("unreadable get = %d %v", r.Status, r.Body)
		}
		if l := e.Call("GET", base, e.Admin, nil).List(); len(l) != 1 || l[0].(map[string]any)["configurationReadError"] == nil {
			t.Fatalf("unreadable list = %v", l)
		}
		if r := e.Call("PATCH", base+"/"+id, e.Admin, map[string]any{"values": map[string]any{"a": 1}}); r.Status != 409 {
			t.Fatalf("patch of an unreadable document = %d", r.Status)
		}
		if _, err := e.M.Store().DB().Exec(`UPDATE configurations SET doc_values = '{}', schema_version = 99 WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		if r := e.Call("GET", base+"/"+id, e.Admin, nil); r.Data()["configurationReadError"] == nil || r.Data()["values"] != nil {
			t.Fatalf("newer schema version = %v", r.Body)
		}

		// Delete: 204, then 404; the name is free again.
		if r := e.Call("DELETE", base+"/"+id, e.Admin, nil); r.Status != 204 {
			t.Fatalf("delete = %d %v", r.Status, r.Body)
		}
		if r := e.Call("GET", base+"/"+id, e.Admin, nil); r.Status != 404 {
			t.Fatalf("after delete = %d", r.Status)
		}
		if r := e.Call("POST", base, e.Admin, map[string]any{"name": "support", "kind": "agent", "values": map[string]any{}}); r.Status != 201 {
			t.Fatalf("name reuse after delete = %d", r.Status)
		}
		// Same Configuration ID under another Namespace is 404.
		other := e.CreateNamespace("cfg-other")
		id2 := e.Call("GET", base, e.Admin, nil).List()[0].(map[string]any)["id"].(string)
		if r := e.Call("GET", "/namespaces/"+other+"/configurations/"+id2, e.Admin, nil); r.Status != 404 {
			t.Fatalf("configuration through another namespace = %d", r.Status)
		}
	})
}

func binding(ns string) map[string]any {
	return map[string]any{"source": map[string]any{"kind": "secret", "namespaceId": ns, "id": "sec_00000000-0000-4000-8000-000000000000"}}
}

func deep(n int) string {
	s := "1"
	for i := 0; i < n; i++ {
		s = `{"a":` + s + `}`
	}
	return s
}

func TestNamespaceWithConfigurationsCannotBeDeleted(t *testing.T) {
	t.Parallel()
	e := servertest.Boot(t, storetest.Migrated(t, "sqlite"), nil)
	ns := e.CreateNamespace("busy")
	var ids []string
	for _, n := range []string{"a", "b", "c"} {
		ids = append(ids, e.Call("POST", "/namespaces/"+ns+"/configurations", e.Admin, map[string]any{"name": n, "kind": "agent", "values": map[string]any{}}).Data()["id"].(string))
	}
	r := e.Call("DELETE", "/namespaces/"+ns, e.Admin, nil)
	msg, _ := r.Body["error"].(map[string]any)["message"].(string)
	if r.Status != 409 || r.Code() != "NAMESPACE_NOT_EMPTY" || !strings.Contains(msg, "configuration cfg_") {
		t.Fatalf("delete with configurations = %d %v", r.Status, r.Body)
	}
	for _, id := range ids {
		e.Call("DELETE", "/namespaces/"+ns+"/configurations/"+id, e.Admin, nil)
	}
	if r := e.Call("DELETE", "/namespaces/"+ns, e.Admin, nil); r.Status != 202 {
		t.Fatalf("delete once empty = %d %v", r.Status, r.Body)
	}
}

// TestExactGrantOnConfiguration: a binding aimed at one Configuration grants
// exactly it, and deleting the Configuration removes the binding.
func TestExactGrantOnConfiguration(t *testing.T) {
	t.Parallel()
	e := servertest.Boot(t, storetest.Migrated(t, "sqlite"), nil)
	ns := e.CreateNamespace("exact")
	mk := func(name string) string {
		return e.Call("POST", "/namespaces/"+ns+"/configurations", e.Admin, map[string]any{"name": name, "kind": "agent", "values": map[string]any{}}).Data()["id"].(string)
	}
	one, two := mk("one"), mk("two")
	role := e.Call("POST", "/namespaces/"+ns+"/iam/roles", e.Admin, map[string]any{"name": "cfg-reader", "permissions": []string{"configuration:read"}}).Data()["id"].(string)
	key, spn := e.Principal(servertest.Grant{})
	b := e.Call("POST", "/namespaces/"+ns+"/iam/bindings", e.Admin, map[string]any{"principalId": spn, "roleId": role,
		"target": map[string]any{"kind": "configuration", "id": one}})
	if b.Status != 201 {
		t.Fatalf("exact binding = %d %v", b.Status, b.Body)
	}
	if r := e.Call("GET", "/namespaces/"+ns+"/configurations/"+one, key, nil); r.Status != 200 {
		t.Fatalf("granted configuration = %d", r.Status)
	}
	if r := e.Call("GET", "/namespaces/"+ns+"/configurations/"+two, key, nil); r.Status != 404 {
		t.Fatalf("sibling configuration = %d", r.Status)
	}
	if r := e.Call("POST", "/namespaces/"+ns+"/iam/bindings", e.Admin, map[string]any{"principalId": spn, "roleId": role,
		"target": map[string]any{"kind": "configuration", "id": "cfg_00000000-0000-4000-8000-000000000000"}}); r.Status != 400 {
		t.Fatalf("binding to a missing configuration = %d", r.Status)
	}
	e.Call("DELETE", "/namespaces/"+ns+"/configurations/"+one, e.Admin, nil)
	if r := e.Call("GET", "/namespaces/"+ns+"/iam/bindings/"+b.Data()["id"].(string), e.Admin, nil); r.Status != 404 {
		t.Fatalf("binding outlived its target: %d", r.Status)
	}
}
