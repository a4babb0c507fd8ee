package cli

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
)

const (
	prnID    = "prn_00000000-0000-4000-8000-000000000001"
	editorID = "role_00000000-0000-4000-8000-0000000000e1"
	nsIAM    = "/namespaces/" + defaultNS + "/iam"
)

// fakeIAM keeps the roles and bindings of the fake's default Namespace and
// of the installation (which has the built-in editor role), behind the
// routes of both scopes.
type fakeIAM struct {
	mu       sync.Mutex
	n        int
	roles    map[string][]map[string]any // scope path ("/iam" or nsIAM) → roles
	bindings map[string][]map[string]any
	// raceRole makes the next role create answer 409 after storing the
	// role, as when another client made it at the same moment.
	raceRole bool
}

// withIAM adds the IAM routes to f; call it before start.
func (f *fakeOCC) withIAM() *fakeIAM {
	s := &fakeIAM{roles: map[string][]map[string]any{"/iam": {{"id": editorID, "name": "editor", "namespaceId": nil,
		"builtin": true, "permissions": []any{"agent:deploy", "agent:read", "secret:operate", "secret:read", "configuration:read"},
		"createdAt": timestamp}}}, bindings: map[string][]map[string]any{}}
	for _, scope := range []string{"/iam", nsIAM} {
		var ns any
		if scope == nsIAM {
			ns = defaultNS
		}
		f.routes["GET "+scope+"/roles"] = func(w http.ResponseWriter, r *http.Request) { writeList(w, s.list(s.roles, scope), "") }
		f.routes["GET "+scope+"/bindings"] = func(w http.ResponseWriter, r *http.Request) { writeList(w, s.list(s.bindings, scope), "") }
		f.routes["POST "+scope+"/roles"] = func(w http.ResponseWriter, r *http.Request) {
			b := f.body("POST " + scope + "/roles")
			s.mu.Lock()
			defer s.mu.Unlock()
			for _, x := range s.roles[scope] {
				if x["name"] == b["name"] {
					writeError(w, 409, "RESOURCE_CONFLICT", "A role with this name exists in this scope.")
					return
				}
			}
			s.n++
			role := map[string]any{"id": fmt.Sprintf("role_00000000-0000-4000-8000-%012d", s.n), "name": b["name"],
				"namespaceId": ns, "builtin": false, "permissions": b["permissions"], "createdAt": timestamp}
			s.roles[scope] = append(s.roles[scope], role)
			if s.raceRole {
				s.raceRole = false
				writeError(w, 409, "RESOURCE_CONFLICT", "A role with this name exists in this scope.")
				return
			}
			writeData(w, 201, role)
		}
		f.routes["POST "+scope+"/bindings"] = func(w http.ResponseWriter, r *http.Request) {
			b := f.body("POST " + scope + "/bindings")
			s.mu.Lock()
			defer s.mu.Unlock()
			s.n++
			bnd := map[string]any{"id": fmt.Sprintf("bnd_00000000-0000-4000-8000-%012d", s.n), "principalId": b["principalId"],
				"roleId": b["roleId"], "namespaceId": ns, "target": b["target"], "createdBy": prnID, "createdAt": timestamp}
			s.bindings[scope] = append(s.bindings[scope], bnd)
			writeData(w, 201, bnd)
		}
		for _, kind := range []string{"roles", "bindings"} {
			store := s.roles
			if kind == "bindings" {
				store = s.bindings
			}
			f.routes["GET "+scope+"/"+kind+"/{id}"] = func(w http.ResponseWriter, r *http.Request) {
				if x := s.find(store, scope, r.PathValue("id"), false); x != nil {
					writeData(w, 200, x)
					return
				}
				writeError(w, 404, "NOT_FOUND", "The resource does not exist.")
			}
			f.routes["DELETE "+scope+"/"+kind+"/{id}"] = func(w http.ResponseWriter, r *http.Request) {
				if s.find(store, scope, r.PathValue("id"), true) != nil {
					w.WriteHeader(204)
					return
				}
				writeError(w, 404, "NOT_FOUND", "The resource does not exist.")
			}
		}
	}
	return s
}

// list returns a copy of a scope's items.
func (s *fakeIAM) list(store map[string][]map[string]any, scope string) []any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []any{}
	for _, x := range store[scope] {
		out = append(out, x)
	}
	return out
}

// find returns the scope's item with the ID, removing it when remove is set.
func (s *fakeIAM) find(store map[string][]map[string]any, scope, id string, remove bool) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range store[scope] {
		if x["id"] == id {
			if remove {
				store[scope] = slices.Delete(store[scope], i, i+1)
			}
			return x
		}
	}
	return nil
}

// count returns how many items a scope holds.
func (s *fakeIAM) count(store map[string][]map[string]any, scope string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(store[scope])
}

// addRole stores a role directly.
func (s *fakeIAM) addRole(scope, id, name string, perms ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roles[scope] = append(s.roles[scope], map[string]any{"id": id, "name": name, "namespaceId": defaultNS, "builtin": false,
		"permissions": perms, "createdAt": timestamp})
}

// countOf returns how many requests in reqs are exactly req.
func countOf(reqs []string, req string) int {
	n := 0
	for _, r := range reqs {
		if r == req {
			n++
		}
	}
	return n
}
