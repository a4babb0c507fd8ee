package api_test

import (
	"fmt"

	"github.com/openclaw/occ/internal/server/servertest"
)

// The families of mutating routes TestMutationSoak drives.

// family is one kind of resource and its mutating routes.
type family struct {
	name   string                                                             // audit action prefix
	coll   func(w *soak) string                                               // collection path
	key    string                                                             // the list field a create's tag is found by
	body   func(w *soak, tag string) map[string]any                           // a create's body
	prep   func(w *soak, p *servertest.OccProc, c int) (map[string]any, bool) // fields made by an earlier request; false: lost
	change func(w *soak, r *resource, v int) (method, path string, body any, value string)
	value  func(item map[string]any) string // what change wrote, read back (nil: unreadable)
	first  func(w *soak) string             // the value before any change
	update string                           // audit action of a change
	del    string                           // DELETE path under coll ("" : no deletion), or "/api/auth/service-keys"
	remove string                           // audit action of a deletion
	ended  func(item map[string]any) bool   // a deleted resource that stays listed (a revoked key)
	noKey  bool                             // its create takes no Idempotency-Key (its response is not replayed)
}

var soakFamilies = []*family{
	{name: "configurations", coll: nsColl("/configurations"), key: "name",
		body: func(_ *soak, tag string) map[string]any {
			return map[string]any{"name": tag, "kind": "agent", "values": model("openai/gpt-5")}
		},
		change: func(_ *soak, r *resource, v int) (string, string, any, string) {
			m := fmt.Sprintf("openai/m-%d", v)
			return "PATCH", r.path(), map[string]any{"values": model(m)}, m
		},
		value: func(it map[string]any) string {
			s, _ := servertest.Dig(it, "values", "agents", "defaults", "model").(string)
			return s
		}, first: func(*soak) string { return "openai/gpt-5" }, update: "configurations.update", del: "/", remove: "configurations.delete"},
	{name: "secrets", coll: nsColl("/secrets"), key: "name",
		body: func(_ *soak, tag string) map[string]any { return map[string]any{"name": tag, "value": "v-" + tag} },
		change: func(_ *soak, r *resource, v int) (string, string, any, string) {
			return "PATCH", r.path(), map[string]any{"value": fmt.Sprintf("v-%d", v)}, ""
		}, update: "secrets.update", del: "/", remove: "secrets.delete"},
	{name: "presets", coll: nsColl("/presets"), key: "name",
		body: func(_ *soak, tag string) map[string]any { return map[string]any{"name": tag} },
		change: func(_ *soak, r *resource, v int) (string, string, any, string) {
			return "PATCH", r.path(), map[string]any{"executionMode": "embedded"}, ""
		}, update: "presets.update", del: "/", remove: "presets.delete"},
	{name: "agents", coll: nsColl("/agents"), key: "name",
		body: func(w *soak, tag string) map[string]any {
			return map[string]any{"name": tag, "configurationId": w.cfgs[0]}
		},
		change: func(w *soak, r *resource, v int) (string, string, any, string) {
			cfg := w.cfgs[v%2]
			return "PATCH", r.path(), map[string]any{"configurationId": cfg}, cfg
		},
		value:  func(it map[string]any) string { s, _ := it["configurationId"].(string); return s },
		first:  func(w *soak) string { return w.cfgs[0] },
		update: "agents.update", del: "/", remove: "agents.delete"},
	soakNamespaceRoles,
	{name: "iam.roles", coll: fixed("/iam/roles"), key: "name",
		body: func(_ *soak, tag string) map[string]any {
			return map[string]any{"name": tag, "permissions": []string{"namespace:read"}}
		}, del: "/", remove: "iam.roles.delete"},
	{name: "iam.bindings", coll: nsColl("/iam/bindings"), key: "roleId",
		prep: func(w *soak, p *servertest.OccProc, c int) (map[string]any, bool) {
			id, ok := w.create(p, c, soakNamespaceRoles, true)
			return map[string]any{"roleId": id, "principalId": w.sp}, ok
		}, del: "/", remove: "iam.bindings.delete"},
	{name: "iam.restrictions", coll: nsColl("/iam/restrictions"), key: "principalId",
		prep: func(w *soak, p *servertest.OccProc, c int) (map[string]any, bool) {
			id, ok := w.create(p, c, soakServicePrincipals, true)
			return map[string]any{"principalId": id, "permission": "secret:read"}, ok
		}, del: "/", remove: "iam.restrictions.delete"},
	soakServicePrincipals,
	{name: "auth.service_keys", coll: fixed("/api/auth/service-keys"), key: "name",
		body: func(w *soak, tag string) map[string]any {
			return map[string]any{"name": tag, "servicePrincipalId": w.sp, "namespaceId": w.ns}
		}, del: "/", remove: "auth.service_keys.revoke", noKey: true,
		ended: func(it map[string]any) bool { return it["revoked"] == true }},
	{name: "iam.principals", coll: fixed("/iam/principals"), key: "email",
		body: func(_ *soak, tag string) map[string]any {
			return map[string]any{"email": tag + "@soak.test", "name": tag, "password": "soak password " + tag}
		},
		change: func(_ *soak, r *resource, v int) (string, string, any, string) {
			if v%2 == 1 {
				return "POST", r.path() + "/disable", nil, "true"
			}
			return "POST", r.path() + "/enable", nil, "false"
		},
		value:  func(it map[string]any) string { return fmt.Sprint(it["disabled"]) },
		first:  func(*soak) string { return "false" },
		noKey:  true,
		update: "iam.principals.*able"},
	{name: "service_accounts", coll: nsColl("/service-accounts"), key: "name",
		body: func(_ *soak, tag string) map[string]any { return map[string]any{"name": tag, "backendId": soakBackend} },
		del:  "/", remove: "service_accounts.delete"},
	{name: "namespaces", coll: fixed("/namespaces"), key: "name",
		change: func(_ *soak, r *resource, v int) (string, string, any, string) {
			n := fmt.Sprintf("%s-v%d", r.tag, v)
			return "PATCH", r.path(), map[string]any{"name": n}, n
		},
		value:  func(it map[string]any) string { s, _ := it["name"].(string); return s },
		update: "namespaces.update"},
}

// soakBackend is the Backend the soak's installation configures (in a
// config file) for Service Accounts.
const soakBackend = "gh"

// soakNamespaceRoles and soakServicePrincipals are families others refer to.
var (
	soakNamespaceRoles = &family{name: "iam.roles", coll: nsColl("/iam/roles"), key: "name",
		body: func(_ *soak, tag string) map[string]any {
			return map[string]any{"name": tag, "permissions": []string{"secret:read"}}
		}, del: "/", remove: "iam.roles.delete"}
	soakServicePrincipals = &family{name: "iam.service_principals", coll: fixed("/iam/service-principals"), key: "name",
		body: func(w *soak, tag string) map[string]any { return map[string]any{"name": tag, "namespaceId": w.ns} },
		del:  "/", remove: "iam.service_principals.delete"}
)

func nsColl(suffix string) func(w *soak) string {
	return func(w *soak) string { return "/namespaces/" + w.ns + suffix }
}

func fixed(path string) func(*soak) string { return func(*soak) string { return path } }

func model(m string) map[string]any {
	return map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": m}}}
}
