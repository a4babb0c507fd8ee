package api_test

import (
	"testing"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestIAMEndToEnd grants, restricts and revokes through the API and checks
// what a key can then do.
func TestIAMEndToEnd(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := servertest.Boot(t, url, nil)
		nsA := e.CreateNamespace("iam-a")
		nsB := e.CreateNamespace("iam-b")

		// A service principal with a key and no grants sees nothing.
		sp := e.Call("POST", "/iam/service-principals", e.Admin, map[string]any{"name": "bot"}).Data()["id"].(string)
		kr := e.Call("POST", "/api/auth/service-keys", e.Admin, map[string]any{"servicePrincipalId": sp, "name": "bot"})
		if kr.Status != 201 || kr.Data()["key"] == nil {
			t.Fatalf("issue key = %d %v", kr.Status, kr.Body)
		}
		key, keyID := kr.Data()["key"].(string), kr.Data()["id"].(string)
		if r := e.Call("GET", "/api/auth/service-keys/"+keyID, e.Admin, nil); r.Data()["key"] != nil {
			t.Fatalf("key readable after issue: %v", r.Body)
		}
		if r := e.Call("GET", "/namespaces/"+nsA, key, nil); r.Status != 404 {
			t.Fatalf("ungranted read = %d", r.Status)
		}

		// Bind the built-in viewer role in Namespace A: A is readable, B is not, deleting A is 403.
		roles := e.Call("GET", "/iam/roles", e.Admin, nil).List()
		viewer := ""
		for _, r := range roles {
			if r.(map[string]any)["name"] == "viewer" {
				viewer = r.(map[string]any)["id"].(string)
			}
		}
		b := e.Call("POST", "/namespaces/"+nsA+"/iam/bindings", e.Admin, map[string]any{"principalId": sp, "roleId": viewer})
		if b.Status != 201 {
			t.Fatalf("bind viewer = %d %v", b.Status, b.Body)
		}
		if r := e.Call("GET", "/namespaces/"+nsA, key, nil); r.Status != 200 {
			t.Fatalf("granted read = %d", r.Status)
		}
		if r := e.Call("GET", "/namespaces/"+nsB, key, nil); r.Status != 404 {
			t.Fatalf("read across namespaces = %d", r.Status)
		}
		if r := e.Call("DELETE", "/namespaces/"+nsA, key, nil); r.Status != 403 {
			t.Fatalf("delete with viewer = %d", r.Status)
		}
		if l := e.Call("GET", "/namespaces", key, nil).List(); len(l) != 1 {
			t.Fatalf("list shows %d namespaces, want 1", len(l))
		}

		// A restriction overrides the grant at once; lifting it restores it.
		x := e.Call("POST", "/namespaces/"+nsA+"/iam/restrictions", e.Admin, map[string]any{"principalId": sp, "permission": "namespace:read"})
		if r := e.Call("GET", "/namespaces/"+nsA, key, nil); x.Status != 201 || r.Status != 404 {
			t.Fatalf("restricted read = %d (restriction %d)", r.Status, x.Status)
		}
		e.Call("DELETE", "/namespaces/"+nsA+"/iam/restrictions/"+x.Data()["id"].(string), e.Admin, nil)
		if r := e.Call("GET", "/namespaces/"+nsA, key, nil); r.Status != 200 {
			t.Fatalf("read after lifting the restriction = %d", r.Status)
		}

		// No escalation: an administrator of A without agent:delete cannot
		// make a role holding it, bind one, or issue a key for a principal
		// holding more than itself.
		nsAdmin, _ := e.Principal(servertest.Grant{Perms: []occ.Permission{occ.P(occ.KindNamespace, occ.ActionAdminister), occ.P(occ.KindNamespace, occ.ActionRead)}, Namespace: nsA})
		if r := e.Call("POST", "/namespaces/"+nsA+"/iam/roles", nsAdmin, map[string]any{"name": "power", "permissions": []string{"agent:delete"}}); r.Status != 403 {
			t.Fatalf("escalating role = %d %v", r.Status, r.Body)
		}
		if r := e.Call("POST", "/namespaces/"+nsA+"/iam/bindings", nsAdmin, map[string]any{"principalId": sp, "roleId": viewer}); r.Status != 403 {
			t.Fatalf("escalating binding = %d %v", r.Status, r.Body)
		}
		instAdmin, _ := e.Principal(servertest.Grant{Perms: []occ.Permission{occ.P(occ.KindInstallation, occ.ActionAdminister)}})
		if r := e.Call("POST", "/api/auth/service-keys", instAdmin, map[string]any{"servicePrincipalId": sp, "name": "x"}); r.Status != 403 {
			t.Fatalf("key for a principal with more grants = %d %v", r.Status, r.Body)
		}
		if r := e.Call("POST", "/iam/roles", e.Admin, map[string]any{"name": "bad", "permissions": []string{"secret:read_logs"}}); r.Status != 400 {
			t.Fatalf("unroutable permission = %d", r.Status)
		}
		if r := e.Call("DELETE", "/iam/roles/"+viewer, e.Admin, nil); r.Status != 409 {
			t.Fatalf("delete built-in role = %d", r.Status)
		}

		// A Namespace-pinned key reaches only its Namespace.
		pinned := e.Call("POST", "/api/auth/service-keys", e.Admin, map[string]any{"servicePrincipalId": sp, "name": "pinned", "namespaceId": nsB})
		if r := e.Call("GET", "/namespaces/"+nsA, pinned.Data()["key"].(string), nil); r.Status != 404 {
			t.Fatalf("pinned key outside its pin = %d", r.Status)
		}

		// Revocation takes effect at once; deleting the principal ends every key.
		if r := e.Call("DELETE", "/api/auth/service-keys/"+keyID, e.Admin, nil); r.Status != 204 {
			t.Fatalf("revoke = %d", r.Status)
		}
		if r := e.Call("GET", "/namespaces/"+nsA, key, nil); r.Status != 401 {
			t.Fatalf("revoked key = %d", r.Status)
		}

		// Humans: created without grants; disabling is refused for oneself.
		h := e.Call("POST", "/iam/principals", e.Admin, map[string]any{"email": "Ana@Example.com", "name": "Ana", "password": "a long enough password"})
		if h.Status != 201 || h.Data()["email"] != "ana@example.com" {
			t.Fatalf("create human = %d %v", h.Status, h.Body)
		}
		if r := e.Call("POST", "/iam/principals", e.Admin, map[string]any{"email": "ana@example.com", "name": "Ana", "password": "a long enough password"}); r.Status != 409 {
			t.Fatalf("duplicate email = %d", r.Status)
		}
		if r := e.Call("POST", "/iam/principals", e.Admin, map[string]any{"email": "b@example.com", "name": "B", "password": "short"}); r.Status != 400 {
			t.Fatalf("short password = %d", r.Status)
		}
		if r := e.Call("POST", "/iam/principals/"+h.Data()["id"].(string)+"/disable", e.Admin, nil); r.Status != 200 || r.Data()["disabled"] != true {
			t.Fatalf("disable = %d %v", r.Status, r.Body)
		}

		// Nothing in the audit log carries a key or a password.
		for _, ev := range e.Call("GET", "/audit-events?pageSize=1000", e.Admin, nil).List() {
			raw := ev.(map[string]any)
			for _, leak := range []string{key, "a long enough password"} {
				if containsValue(raw, leak) {
					t.Fatalf("audit event %v leaks a secret", raw["id"])
				}
			}
		}
	})
}

func containsValue(v any, s string) bool {
	switch x := v.(type) {
	case string:
		return x == s
	case map[string]any:
		for _, e := range x {
			if containsValue(e, s) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if containsValue(e, s) {
				return true
			}
		}
	}
	return false
}
