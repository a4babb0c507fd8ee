package contract

import (
	"bytes"
	"context"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/openclaw/occ/api"
	"github.com/openclaw/occ/internal/occ"
)

// realOp is one operation of api/openapi.yaml with a path that admission
// accepts (every path parameter filled with a valid value).
type realOp struct {
	id, method, template, path string
	op                         *openapi3.Operation
	params                     map[string]pathParam
}

// pathParam is what a path parameter's schema accepts: a sample, and the
// independent statement of the rule.
type pathParam struct {
	sample string
	valid  func(string) bool
}

var templateParam = regexp.MustCompile(`\{(\w+)\}`)

// realStack admits requests against api/openapi.yaml (PreAuth, an
// authentication stand-in, Body, the echo handler), and lists its
// operations sorted by ID.
func realStack(f *testing.F) (*stack, []realOp) {
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPIYAML)
	if err != nil {
		f.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		f.Fatal(err)
	}
	var ops []realOp
	for template, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			o := realOp{id: op.OperationID, method: method, template: template, op: op, params: map[string]pathParam{}}
			for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
				if p.Value.In == openapi3.ParameterInPath {
					o.params[p.Value.Name] = pathRule(f, p.Value.Schema.Value)
				}
			}
			o.path = o.fill(nil)
			ops = append(ops, o)
		}
	}
	slices.SortFunc(ops, func(a, b realOp) int { return strings.Compare(a.id, b.id) })
	return newStack(f, Options{Spec: doc}, nil), ops
}

// fill returns the operation's path with each parameter's sample, or the
// value of get when it gives one.
func (o realOp) fill(get func(name string) (string, bool)) string {
	return templateParam.ReplaceAllStringFunc(o.template, func(m string) string {
		name := m[1 : len(m)-1]
		if get != nil {
			if v, ok := get(name); ok {
				return v
			}
		}
		return o.params[name].sample
	})
}

// pathRule states a path parameter's schema: an ID of the prefix its
// pattern names, or one of its enum's values.
func pathRule(f *testing.F, s *openapi3.Schema) pathParam {
	typed := regexp.MustCompile(`^\^([a-z]+)_\[`)
	if m := typed.FindStringSubmatch(s.Pattern); m != nil {
		prefix := occ.Prefix(m[1])
		return pathParam{sample: string(prefix) + "_00000000-0000-4000-8000-000000000000", valid: func(v string) bool { return occ.ValidID(prefix, v) }}
	}
	if len(s.Enum) > 0 && s.Pattern == "" {
		return pathParam{sample: s.Enum[0].(string), valid: func(v string) bool { return slices.Contains(s.Enum, any(v)) }}
	}
	f.Fatalf("a path parameter schema the fuzz targets cannot state: %+v", s)
	return pathParam{}
}

// send admits one request with a JSON body.
func (s *stack) send(method, path string, body []byte) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	r.Header.Set("Authorization", "Bearer ok")
	r.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, r)
	return rec
}
