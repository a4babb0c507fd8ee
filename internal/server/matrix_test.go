package server_test

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store/storetest"
)

// route is one operation of api/openapi.yaml with its x-occ-authz.
type route struct {
	method, path, id string
	mode             string
	perm             occ.Permission
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
			var a struct{ Mode, Permission string }
			if err := json.Unmarshal(b, &a); err != nil {
				t.Fatal(err)
			}
			r := route{method: method, path: path, id: op.OperationID, mode: a.Mode, op: op}
			if a.Mode != "public" {
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

// exampleBody returns the request body example with names made unique.
func exampleBody(t *testing.T, r route) any {
	if r.op.RequestBody == nil {
		return nil
	}
	mt := r.op.RequestBody.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value.Example == nil {
		t.Fatalf("%s: request body schema has no example; the permission matrix needs one", r.id)
	}
	body := map[string]any{}
	raw, _ := json.Marshal(mt.Schema.Value.Example)
	_ = json.Unmarshal(raw, &body)
	if name, ok := body["name"].(string); ok {
		body["name"] = name + "-" + occ.NewUUID()[:8]
	}
	return body
}

// TestPermissionMatrix walks every route of api/openapi.yaml with: no
// credentials (401), a principal of another Namespace (404), one without the
// permission (403), one with it (2xx) and a restricted one (403). New routes
// are covered by declaring x-occ-authz; a new kind of path parameter needs a
// fixture here.
func TestPermissionMatrix(t *testing.T) {
	storetest.Each(t, func(t *testing.T, url string) {
		e := boot(t, url, nil)
		other := e.createNamespace("matrix-other-" + occ.NewUUID()[:8])
		nsRead := occ.P(occ.KindNamespace, occ.ActionRead)
		for _, r := range routes(t, e.spec) {
			t.Run(r.id, func(t *testing.T) {
				e := e.withT(t)
				want := successStatus(r.op)
				if r.mode == "public" {
					if got := e.call(strings.ToUpper(r.method), r.path, "", nil); got.Status != want {
						t.Fatalf("public route without credentials = %d, want %d", got.Status, want)
					}
					return
				}
				target := e.createNamespace("matrix-" + occ.NewUUID()[:8])
				path := strings.ReplaceAll(r.path, "{namespaceId}", target)
				if strings.Contains(path, "{") {
					t.Fatalf("no fixture for a path parameter of %s", r.path)
				}
				do := func(key string) resp { return e.call(strings.ToUpper(r.method), path, key, exampleBody(t, r)) }
				expect := func(who string, got resp, status int) {
					t.Helper()
					if got.Status != status {
						t.Fatalf("%s: %s %s = %d %v, want %d", who, r.method, path, got.Status, got.Body, status)
					}
				}
				if got := do(""); got.Status != 401 {
					t.Fatalf("no credentials = %d, want 401", got.Status)
				}
				switch r.mode {
				case "installation":
					none, _ := e.principal(grant{})
					expect("without permission", do(none), 403)
					other, _ := e.principal(grant{perms: []occ.Permission{r.perm}, namespace: other})
					expect("principal of another namespace", do(other), 403)
					restricted, _ := e.principal(grant{perms: []occ.Permission{r.perm}, restrict: []occ.Permission{r.perm}})
					expect("restricted", do(restricted), 403)
					with, _ := e.principal(grant{perms: []occ.Permission{r.perm}})
					expect("with permission", do(with), want)
				case "exact":
					perms := []occ.Permission{r.perm, nsRead}
					elsewhere, _ := e.principal(grant{perms: perms, namespace: other})
					expect("principal of another namespace", do(elsewhere), 404)
					denied := 403
					if r.perm == nsRead {
						denied = 404 // cannot read: existence stays private
					}
					readOnly, _ := e.principal(grant{perms: []occ.Permission{nsRead}, namespace: target})
					if r.perm == nsRead {
						readOnly, _ = e.principal(grant{})
					}
					expect("without permission", do(readOnly), denied)
					restricted, _ := e.principal(grant{perms: perms, namespace: target, restrict: []occ.Permission{r.perm}})
					expect("restricted", do(restricted), denied)
					with, _ := e.principal(grant{perms: perms, namespace: target})
					expect("with permission", do(with), want)
				case "list":
					visible := func(key string) bool {
						got := do(key)
						expect("list", got, want)
						for _, it := range got.list() {
							if it.(map[string]any)["id"] == target {
								return true
							}
						}
						return false
					}
					none, _ := e.principal(grant{})
					elsewhere, _ := e.principal(grant{perms: []occ.Permission{r.perm}, namespace: other})
					restricted, _ := e.principal(grant{perms: []occ.Permission{r.perm}, namespace: target, restrict: []occ.Permission{r.perm}})
					with, _ := e.principal(grant{perms: []occ.Permission{r.perm}, namespace: target})
					for who, key := range map[string]string{"without permission": none, "principal of another namespace": elsewhere, "restricted": restricted} {
						if visible(key) {
							t.Fatalf("%s sees %s in the list", who, target)
						}
					}
					if !visible(with) {
						t.Fatalf("principal with %s does not see %s", r.perm, target)
					}
				default:
					t.Fatalf("unknown x-occ-authz mode %q", r.mode)
				}
			})
		}
	})
}

