package api_test

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/openclaw/occ/internal/backends/backendstest"
	"github.com/openclaw/occ/internal/credgateway/credgatewaytest"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// route is one operation of api/openapi.yaml with its x-occ-authz.
type route struct {
	method, path, id string
	mode             string
	perm             occ.Permission
	requires         []occ.Permission // also needed by the example (no escalation)
	also             []occ.Permission // exact routes: permissions on other resources of the path, each checked too
	item             string           // list routes: the fixture that must show up
	parent           occ.Permission   // list routes: what the caller must hold on the parent instead of namespace:read
	op               *openapi3.Operation
}

func routes(t *testing.T, spec *openapi3.T) []route {
	var out []route
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			raw, ok := op.Extensions["x-occ-authz"]
			if !ok {
				t.Fatalf("%s %s has no x-occ-authz", method, path)
			}
			b, _ := json.Marshal(raw)
			var a struct {
				Mode, Permission, Item, Parent string
				Requires, Also                 []string
			}
			if err := json.Unmarshal(b, &a); err != nil {
				t.Fatal(err)
			}
			r := route{method: method, path: path, id: op.OperationID, mode: a.Mode, op: op, item: a.Item}
			if r.item == "" {
				r.item = "namespaceId"
			}
			if a.Parent != "" {
				p, err := occ.ParsePermission(a.Parent)
				if err != nil {
					t.Fatalf("%s: %v", op.OperationID, err)
				}
				r.parent = p
			}
			for _, q := range a.Requires {
				p, err := occ.ParsePermission(q)
				if err != nil {
					t.Fatalf("%s: %v", op.OperationID, err)
				}
				r.requires = append(r.requires, p)
			}
			for _, q := range a.Also {
				p, err := occ.ParsePermission(q)
				if err != nil {
					t.Fatalf("%s: %v", op.OperationID, err)
				}
				if a.Mode != "exact" {
					t.Fatalf("%s: also is for exact routes", op.OperationID)
				}
				r.also = append(r.also, p)
			}
			if a.Mode != "public" && a.Mode != "session" {
				p, err := occ.ParsePermission(a.Permission)
				if err != nil {
					t.Fatalf("%s: %v", op.OperationID, err)
				}
				r.perm = p
			}
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// successStatus is the lowest 2xx status the operation documents.
func successStatus(op *openapi3.Operation) int {
	best := 0
	for code := range op.Responses.Map() {
		n, err := strconv.Atoi(code)
		if err == nil && n >= 200 && n < 300 && (best == 0 || n < best) {
			best = n
		}
	}
	return best
}

// exampleBody returns the request body example with names made unique and
// "{placeholder}" strings replaced by fixtures.
func exampleBody(t *testing.T, r route, fx *fixtures) any {
	body := rawExample(t, r)
	if body == nil {
		return nil
	}
	return fillPlaceholders(body, fx.get)
}

// rawExample returns the request body example of a route (nil when it
// takes no body) with its name made unique and "{placeholder}" strings left
// in place.
func rawExample(t *testing.T, r route) map[string]any {
	if r.op.RequestBody == nil {
		return nil
	}
	mt := r.op.RequestBody.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		t.Fatalf("%s: request body has no JSON schema", r.id)
	}
	ex := mt.Schema.Value.Example
	if x, ok := mt.Schema.Value.Extensions["x-occ-example"]; ok {
		ex = x // an example with {placeholders} the matrix fills in
	}
	if ex == nil {
		t.Fatalf("%s: request body schema has no example; the permission matrix needs one", r.id)
	}
	body := map[string]any{}
	raw, _ := json.Marshal(ex)
	_ = json.Unmarshal(raw, &body)
	if name, ok := body["name"].(string); ok && r.op.OperationID != "createServiceKey" {
		body["name"] = name + "-" + occ.NewUUID()[:8]
	}
	return body
}

// placeholder returns the fixture name of a "{name}" string.
func placeholder(v any) (string, bool) {
	s, ok := v.(string)
	if !ok || len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return "", false
	}
	return s[1 : len(s)-1], true
}

// fillPlaceholders returns a copy of v (decoded JSON) with every
// "{name}" string, at any depth, replaced by get(name).
func fillPlaceholders(v any, get func(string) string) any {
	if name, ok := placeholder(v); ok {
		return get(name)
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = fillPlaceholders(e, get)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fillPlaceholders(e, get)
		}
		return out
	}
	return v
}

// TestPermissionMatrix walks every route of api/openapi.yaml with: no
// credentials (401), a principal of another Namespace (404), one without the
// permission (403), one with it (2xx) and a restricted one (403). New routes
// are covered by declaring x-occ-authz; a new kind of path parameter needs a
// fixture here.
func TestPermissionMatrix(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		// A Backend and a Credential Gateway, so that the service account
		// and credential source routes can succeed (a gateway-less server
		// is TestCredentialSourcesWithoutGateway's).
		e := servertest.Boot(t, url, nil, servertest.WithBackend(backendstest.New(t).Backend(matrixBackendID)), servertest.WithGateway(credgatewaytest.New(t).URL))
		other := e.CreateNamespace("matrix-other-" + occ.NewUUID()[:8])
		nsRead := occ.P(occ.KindNamespace, occ.ActionRead)
		for _, r := range routes(t, e.Spec) {
			t.Run(r.id, func(t *testing.T) {
				e := e.WithT(t)
				want := successStatus(r.op)
				if r.mode == "public" {
					fx := &fixtures{e: e, made: map[string]string{"_route": r.path}}
					if got := e.Call(strings.ToUpper(r.method), r.path, "", exampleBody(t, r, fx)); got.Status != want {
						t.Fatalf("public route without credentials = %d %v, want %d", got.Status, got.Body, want)
					}
					return
				}
				target := e.CreateNamespace("matrix-" + occ.NewUUID()[:8])
				scope := ""
				if strings.HasPrefix(r.path, "/namespaces/{namespaceId}") {
					scope = target
				}
				fx := &fixtures{e: e, scope: scope, made: map[string]string{"namespaceId": target, "_route": r.path}}
				path := r.path
				for strings.Contains(path, "{") {
					i, j := strings.Index(path, "{"), strings.Index(path, "}")
					path = path[:i] + fx.get(path[i+1:j]) + path[j+1:]
				}
				body := exampleBody(t, r, fx)
				do := func(key string) servertest.Resp { return e.Call(strings.ToUpper(r.method), path, key, body) }
				expect := func(who string, got servertest.Resp, status int) {
					t.Helper()
					if got.Status != status {
						t.Fatalf("%s: %s %s = %d %v, want %d", who, r.method, path, got.Status, got.Body, status)
					}
				}
				if got := do(""); got.Status != 401 {
					t.Fatalf("no credentials = %d, want 401", got.Status)
				}
				switch r.mode {
				case "session":
					if got := do(e.Admin); got.Status != 401 {
						t.Fatalf("service key on a session route = %d, want 401", got.Status)
					}
					cookie := e.SignIn("admin@occ.local", servertest.AdminPassword)
					got := e.Call(strings.ToUpper(r.method), path, "", body, "Cookie", cookie, "Origin", servertest.Origin)
					expect("with a session", got, want)
				case "installation":
					none, _ := e.Principal(servertest.Grant{})
					expect("without permission", do(none), 403)
					other, _ := e.Principal(servertest.Grant{Perms: []occ.Permission{r.perm}, Namespace: other})
					expect("principal of another namespace", do(other), 403)
					restricted, _ := e.Principal(servertest.Grant{Perms: []occ.Permission{r.perm}, Restrict: []occ.Permission{r.perm}})
					expect("restricted", do(restricted), 403)
					with, _ := e.Principal(servertest.Grant{Perms: append([]occ.Permission{r.perm}, r.requires...)})
					expect("with permission", do(with), want)
				case "exact":
					// The permission on the resource the path names; seeing it
					// takes <kind>:read (and its Namespace's read).
					read := occ.P(r.perm.Kind, occ.ActionRead)
					perms := append(append([]occ.Permission{r.perm, read, nsRead}, r.requires...), r.also...)
					elsewhere, _ := e.Principal(servertest.Grant{Perms: perms, Namespace: other})
					expect("principal of another namespace", do(elsewhere), 404)
					denied := 403
					if r.perm == read {
						denied = 404 // cannot read: existence stays private
					}
					readOnly, _ := e.Principal(servertest.Grant{Perms: []occ.Permission{read, nsRead}, Namespace: target})
					if r.perm == read {
						readOnly, _ = e.Principal(servertest.Grant{Perms: []occ.Permission{nsRead}, Namespace: target})
						if read == nsRead {
							readOnly, _ = e.Principal(servertest.Grant{})
						}
					}
					expect("without permission", do(readOnly), denied)
					restricted, _ := e.Principal(servertest.Grant{Perms: perms, Namespace: target, Restrict: []occ.Permission{r.perm}})
					expect("restricted", do(restricted), denied)
					// Every further permission is needed too: without it, or
					// restricted, 404 for a read (existence stays private), else 403.
					for _, q := range r.also {
						denied := 403
						if q.Action == occ.ActionRead {
							denied = 404
						}
						without, _ := e.Principal(servertest.Grant{Perms: slices.DeleteFunc(slices.Clone(perms), func(p occ.Permission) bool { return p == q }), Namespace: target})
						expect("without "+q.String(), do(without), denied)
						restricted, _ := e.Principal(servertest.Grant{Perms: perms, Namespace: target, Restrict: []occ.Permission{q}})
						expect("restricted "+q.String(), do(restricted), denied)
					}
					with, _ := e.Principal(servertest.Grant{Perms: perms, Namespace: target})
					expect("with permission", do(with), want)
				case "collection":
					// Create in a Namespace: checked on the collection; seeing the
					// Namespace takes namespace:read.
					perms := append([]occ.Permission{r.perm, nsRead}, r.requires...)
					elsewhere, _ := e.Principal(servertest.Grant{Perms: perms, Namespace: other})
					expect("principal of another namespace", do(elsewhere), 404)
					readOnly, _ := e.Principal(servertest.Grant{Perms: []occ.Permission{nsRead}, Namespace: target})
					expect("without permission", do(readOnly), 403)
					restricted, _ := e.Principal(servertest.Grant{Perms: perms, Namespace: target, Restrict: []occ.Permission{r.perm}})
					expect("restricted", do(restricted), 403)
					with, _ := e.Principal(servertest.Grant{Perms: perms, Namespace: target})
					expect("with permission", do(with), want)
				case "list":
					// Items are filtered by the permission, never refused; a list
					// inside a Namespace first needs that Namespace's read.
					itemID := fx.get(r.item)
					visible := func(key string) bool {
						got := do(key)
						expect("list", got, want)
						for _, it := range got.List() {
							if it.(map[string]any)["id"] == itemID {
								return true
							}
						}
						return false
					}
					base := []occ.Permission{}
					switch {
					case r.parent != occ.Permission{}:
						base = []occ.Permission{r.parent}
					case scope != "":
						base = []occ.Permission{nsRead}
					}
					none, _ := e.Principal(servertest.Grant{Perms: base, Namespace: target})
					elsewhere, _ := e.Principal(servertest.Grant{Perms: append([]occ.Permission{r.perm}, base...), Namespace: other})
					restricted, _ := e.Principal(servertest.Grant{Perms: append([]occ.Permission{r.perm}, base...), Namespace: target, Restrict: []occ.Permission{r.perm}})
					with, _ := e.Principal(servertest.Grant{Perms: append([]occ.Permission{r.perm}, base...), Namespace: target})
					if scope != "" {
						expect("principal of another namespace", do(elsewhere), 404)
					} else if visible(elsewhere) {
						t.Fatalf("a principal of another namespace sees %s", itemID)
					}
					for who, key := range map[string]string{"without permission": none, "restricted": restricted} {
						if visible(key) {
							t.Fatalf("%s sees %s in the list", who, itemID)
						}
					}
					if !visible(with) {
						t.Fatalf("principal with %s does not see %s", r.perm, itemID)
					}
				default:
					t.Fatalf("unknown x-occ-authz mode %q", r.mode)
				}
			})
		}
	})
}

// matrixBackendID is the Backend the matrix server has (and the
// createServiceAccount example names).
const matrixBackendID = "chatgpt-main"

// fixtures makes, on first use, the resources a route's path parameters and
// example body name, as the admin, in the route's scope.
type fixtures struct {
	e     *servertest.Env
	scope string // "" = installation
	made  map[string]string
}

func (f *fixtures) get(name string) string {
	if v, ok := f.made[name]; ok {
		return v
	}
	e := f.e
	iamPath := "/iam"
	if f.scope != "" {
		iamPath = "/namespaces/" + f.scope + "/iam"
	}
	create := func(path string, body map[string]any) string {
		r := e.Call("POST", path, e.Admin, body)
		if r.Status != 201 {
			e.T.Fatalf("fixture %s: POST %s = %d %v", name, path, r.Status, r.Body)
		}
		return r.Data()["id"].(string)
	}
	var v string
	switch name {
	case "principalId":
		if strings.HasPrefix(f.made["_route"], "/iam/principals") {
			v = f.get("human")
		} else {
			_, v = e.Principal(servertest.Grant{})
		}
	case "servicePrincipalId":
		_, v = e.Principal(servertest.Grant{})
	case "human":
		v = create("/iam/principals", map[string]any{"email": f.get("email"), "name": "Fixture", "password": "correct horse battery"})
	case "adminEmail":
		v = "admin@occ.local"
	case "adminPassword":
		v = servertest.AdminPassword
	case "email":
		v = "u-" + occ.NewUUID()[:8] + "@example.com"
	case "roleId":
		v = create(iamPath+"/roles", map[string]any{"name": "fx-" + occ.NewUUID()[:8], "permissions": []string{"namespace:read"}})
	case "bindingId":
		v = create(iamPath+"/bindings", map[string]any{"principalId": f.get("servicePrincipalId"), "roleId": f.get("roleId")})
	case "restrictionId":
		v = create(iamPath+"/restrictions", map[string]any{"principalId": f.get("servicePrincipalId"), "permission": "namespace:read"})
	case "configurationId":
		v = create("/namespaces/"+f.made["namespaceId"]+"/configurations", map[string]any{"name": "fx-" + occ.NewUUID()[:8], "kind": "agent", "values": map[string]any{}})
	case "secretId":
		v = create("/namespaces/"+f.made["namespaceId"]+"/secrets", map[string]any{"name": "fx-" + occ.NewUUID()[:8], "value": "fixture-value"})
	case "presetId":
		v = create("/namespaces/"+f.made["namespaceId"]+"/presets", map[string]any{"name": "fx-" + occ.NewUUID()[:8]})
	case "agentId":
		// A deployable Agent: an api_key binding to a Secret its own
		// service principal may operate.
		ns := f.made["namespaceId"]
		secret := f.get("secretId")
		r := e.Call("POST", "/namespaces/"+ns+"/agents", e.Admin, map[string]any{"name": "fx-" + occ.NewUUID()[:8], "configurationId": f.get("configurationId"),
			"harnessAuth":           map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "id": secret}},
			"initialWorkspaceFiles": map[string]any{"AGENTS.md": "Fixture instructions.\n"}})
		if r.Status != 201 {
			e.T.Fatalf("fixture agentId: %d %v", r.Status, r.Body)
		}
		v = r.Data()["id"].(string)
		role := create("/namespaces/"+ns+"/iam/roles", map[string]any{"name": "fx-" + occ.NewUUID()[:8], "permissions": []string{"secret:operate"}})
		create("/namespaces/"+ns+"/iam/bindings", map[string]any{"principalId": r.Data()["servicePrincipalId"], "roleId": role,
			"target": map[string]any{"kind": "secret", "id": secret}})
		if strings.Contains(f.made["_route"], "/workspace/") {
			// Live workspace routes need a running gateway: deploy it.
			dep := e.Call("POST", "/namespaces/"+ns+"/agents/"+v+"/deploy", e.Admin, nil)
			if dep.Status != 202 {
				e.T.Fatalf("fixture deploy: %d %v", dep.Status, dep.Body)
			}
			servertest.WaitFor(e.T, "the fixture Agent running", func() bool {
				return e.Call("GET", "/namespaces/"+ns+"/agents/"+v, e.Admin, nil).Data()["activeRevisionId"] != nil
			})
		}
	case "name":
		v = "AGENTS.md"
	case "revisionId":
		v = insertRevision(e, f.made["namespaceId"], f.get("agentId"), f.get("configurationId"))
	case "keyId":
		v = create("/api/auth/service-keys", map[string]any{"servicePrincipalId": f.get("servicePrincipalId"), "name": "fx"})
	case "serviceAccountId":
		v = create("/namespaces/"+f.scope+"/service-accounts", map[string]any{"name": "fx-" + occ.NewUUID()[:8], "backendId": matrixBackendID})
	case "credentialSourceId":
		v = create("/namespaces/"+f.scope+"/credential-sources", map[string]any{"name": "fx-" + occ.NewUUID()[:8], "type": "openai"})
	default:
		e.T.Fatalf("no fixture for %q: add one to the permission matrix", name)
	}
	f.made[name] = v
	return v
}
