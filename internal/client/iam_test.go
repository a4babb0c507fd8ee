package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/openclaw/occ/internal/client"
)

const (
	roleID = "role_00000000-0000-4000-8000-000000000001"
	bndID  = "bnd_00000000-0000-4000-8000-000000000001"
	spnID  = "spn_00000000-0000-4000-8000-000000000001"
)

func role(id, ns string) map[string]any {
	var nsv any
	if ns != "" {
		nsv = ns
	}
	return map[string]any{"id": id, "name": "readers", "namespaceId": nsv, "builtin": false,
		"permissions": []string{"secret:operate"}, "createdAt": "2026-01-01T00:00:00.000Z"}
}

func binding(ns string, target any) map[string]any {
	var nsv any
	if ns != "" {
		nsv = ns
	}
	return map[string]any{"id": bndID, "principalId": spnID, "roleId": roleID, "namespaceId": nsv, "target": target,
		"createdBy": "prn_x", "createdAt": "2026-01-01T00:00:00.000Z"}
}

// TestIAMScopes: every role and binding method reaches the Namespace's
// routes for a Namespace ID and the installation's for "".
func TestIAMScopes(t *testing.T) {
	t.Parallel()
	var (
		mu     sync.Mutex
		bodies = map[string]map[string]any{}
	)
	record := func(r *http.Request) {
		var b map[string]any
		_ = json.NewDecoder(r.Body).Decode(&b)
		mu.Lock()
		bodies[r.Method+" "+r.URL.Path] = b
		mu.Unlock()
	}
	routes := map[string]http.HandlerFunc{}
	for _, scope := range []struct{ prefix, ns string }{{"/namespaces/" + nsID, nsID}, {"", ""}} {
		routes["GET "+scope.prefix+"/iam/roles"] = func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("pageToken") == "" {
				writeList(w, []any{role(roleID, scope.ns)}, "p2")
				return
			}
			writeList(w, []any{role("role_00000000-0000-4000-8000-000000000002", scope.ns)}, "")
		}
		routes["POST "+scope.prefix+"/iam/roles"] = func(w http.ResponseWriter, r *http.Request) {
			record(r)
			writeData(w, 201, role(roleID, scope.ns))
		}
		routes["GET "+scope.prefix+"/iam/roles/"+roleID] = func(w http.ResponseWriter, r *http.Request) {
			writeData(w, 200, role(roleID, scope.ns))
		}
		routes["DELETE "+scope.prefix+"/iam/roles/"+roleID] = func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }
		routes["GET "+scope.prefix+"/iam/bindings"] = func(w http.ResponseWriter, r *http.Request) {
			writeList(w, []any{binding(scope.ns, nil)}, "")
		}
		routes["POST "+scope.prefix+"/iam/bindings"] = func(w http.ResponseWriter, r *http.Request) {
			record(r)
			writeData(w, 201, binding(scope.ns, map[string]any{"kind": "secret", "id": secID}))
		}
		routes["GET "+scope.prefix+"/iam/bindings/"+bndID] = func(w http.ResponseWriter, r *http.Request) {
			writeData(w, 200, binding(scope.ns, nil))
		}
		routes["DELETE "+scope.prefix+"/iam/bindings/"+bndID] = func(w http.ResponseWriter, r *http.Request) {
			writeError(w, 409, "RESOURCE_CONFLICT", "Nope.")
		}
	}
	f, c := newFake(t, routes)
	ctx := context.Background()
	for _, ns := range []string{nsID, ""} {
		prefix := ""
		if ns != "" {
			prefix = "/namespaces/" + ns
		}
		roles, err := c.ListAllRoles(ctx, ns)
		if err != nil || len(roles) != 2 || roles[0].NamespaceId.GetOrEmpty() != ns {
			t.Fatalf("%q: roles = %+v %v", ns, roles, err)
		}
		r, err := c.CreateRole(ctx, ns, client.RoleCreate{Name: "readers", Permissions: []string{"secret:operate"}})
		if err != nil || r.Id != roleID {
			t.Fatalf("%q: create role = %+v %v", ns, r, err)
		}
		if b := bodies["POST "+prefix+"/iam/roles"]; b["name"] != "readers" || len(b["permissions"].([]any)) != 1 {
			t.Fatalf("%q: role body = %v", ns, b)
		}
		if r, err := c.GetRole(ctx, ns, roleID); err != nil || r.Permissions[0] != "secret:operate" {
			t.Fatalf("%q: get role = %+v %v", ns, r, err)
		}
		if err := c.DeleteRole(ctx, ns, roleID); err != nil {
			t.Fatalf("%q: delete role: %v", ns, err)
		}
		bs, err := c.ListAllBindings(ctx, ns)
		if err != nil || len(bs) != 1 || bs[0].Target.IsSpecified() && !bs[0].Target.IsNull() {
			t.Fatalf("%q: bindings = %+v %v", ns, bs, err)
		}
		b, err := c.CreateBinding(ctx, ns, client.BindingCreate{PrincipalId: spnID, RoleId: roleID,
			Target: &client.Target{Kind: "secret", Id: secID}})
		if err != nil || b.Target.MustGet().Id != secID {
			t.Fatalf("%q: create binding = %+v %v", ns, b, err)
		}
		if body := bodies["POST "+prefix+"/iam/bindings"]; body["principalId"] != spnID || body["target"].(map[string]any)["kind"] != "secret" {
			t.Fatalf("%q: binding body = %v", ns, body)
		}
		if b, err := c.GetBinding(ctx, ns, bndID); err != nil || b.PrincipalId != spnID {
			t.Fatalf("%q: get binding = %+v %v", ns, b, err)
		}
		if err := c.DeleteBinding(ctx, ns, bndID); !client.IsCode(err, client.CodeResourceConflict) {
			t.Fatalf("%q: delete binding = %v", ns, err)
		}
		if _, err := c.GetRole(ctx, ns, "role_00000000-0000-4000-8000-000000000009"); !client.IsNotFound(err) {
			t.Fatalf("%q: missing role = %v", ns, err)
		}
	}
	if n := f.count("GET /iam/roles?"); n != 2 {
		t.Fatalf("installation role pages = %d: %v", n, f.requests())
	}
}
