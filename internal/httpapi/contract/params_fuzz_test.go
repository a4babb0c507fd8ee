package contract

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"

	"github.com/openclaw/occ/internal/occ"
)

// pathSlot is one path parameter of one operation of api/openapi.yaml.
type pathSlot struct {
	op   realOp
	name string
}

// path returns the slot's operation path with text (escaped) in the slot.
func (sl pathSlot) path(text string) string {
	return sl.op.fill(func(name string) (string, bool) { return url.PathEscape(text), name == sl.name })
}

// FuzzPathIDs puts any text (escaped as one path segment) in each path
// parameter of every operation of api/openapi.yaml and checks admission
// before authentication: the request passes exactly when the text is an ID
// occ.ValidID accepts with the prefix the parameter's pattern names (for a
// workspace file, one of the four names); otherwise the answer is 400
// INVALID_REQUEST — naming the parameter, INVALID_FORMAT, in a message that
// does not depend on the text — or, for a segment that is empty, "." or
// "..", the refusal of a non-canonical path.
func FuzzPathIDs(f *testing.F) {
	s, ops := realStack(f)
	h := s.adm.PreAuth(http.HandlerFunc(echo))
	var slots []pathSlot
	for _, o := range ops {
		for _, name := range slices.Sorted(maps.Keys(o.params)) {
			slots = append(slots, pathSlot{op: o, name: name})
		}
	}
	for i, sl := range slots {
		f.Add(uint8(i), "x")
		f.Add(uint8(i), sl.op.params[sl.name].sample)
	}
	for _, id := range []string{"", ".", "..", "%2e", "ns_00000000-0000-4000-8000-000000000000/x", "NS_00000000-0000-4000-8000-000000000000",
		"agt_00000000-0000-4000-8000-00000000000g", "AGENTS.md", "agents.md", "ns_00000000-0000-4000-8000-000000000000\x00", "é"} {
		f.Add(uint8(0), id)
	}
	f.Fuzz(func(t *testing.T, which uint8, id string) {
		sl := slots[int(which)%len(slots)]
		target := sl.path(id)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(sl.op.method, target, nil))
		if want := sl.op.params[sl.name].valid(id); (rec.Code == http.StatusOK) != want {
			t.Fatalf("%s %s: %d %s, want admitted %v", sl.op.id, target, rec.Code, rec.Body.Bytes(), want)
		}
		if rec.Code == http.StatusOK {
			return
		}
		var env struct{ Error occ.Error }
		if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || rec.Code != http.StatusBadRequest || env.Error.Code != occ.CodeInvalidRequest {
			t.Fatalf("%s %s: %d %s, want 400 INVALID_REQUEST", sl.op.id, target, rec.Code, rec.Body.Bytes())
		}
		if id == "" || id == "." || id == ".." {
			if env.Error.Message != msgPathNotCanonical {
				t.Fatalf("%s %s: %q, want the non-canonical path refusal", sl.op.id, target, env.Error.Message)
			}
			return
		}
		ref := httptest.NewRecorder()
		h.ServeHTTP(ref, httptest.NewRequest(sl.op.method, sl.path("x"), nil))
		var refEnv struct{ Error occ.Error }
		_ = json.Unmarshal(ref.Body.Bytes(), &refEnv)
		if !slices.Equal(env.Error.Details, []occ.Detail{{Path: "/" + sl.name, Code: occ.DetailInvalidFmt}}) || env.Error.Message != refEnv.Error.Message {
			t.Fatalf("%s %s: %+v, want INVALID_FORMAT at /%s in the message of any invalid value (%q)", sl.op.id, target, env.Error, sl.name, refEnv.Error.Message)
		}
	})
}
