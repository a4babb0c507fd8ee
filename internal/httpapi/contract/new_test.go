package contract

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// miniSpec loads a document made of the given paths YAML.
func miniSpec(t *testing.T, paths string) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData([]byte("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n" + paths))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return doc
}

const okResponses = "      responses: {'200': {description: ok}}\n"

func TestNewRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		paths string
		opts  Options
		want  string
	}{
		{name: "no operationId", paths: "  /a:\n    get:\n" + okResponses, want: "no operationId"},
		{name: "duplicate operationId", paths: "  /a:\n    get:\n      operationId: x\n" + okResponses + "  /b:\n    get:\n      operationId: x\n" + okResponses,
			want: "used by both"},
		{name: "undeclared path parameter", paths: "  /a/{id}:\n    get:\n      operationId: x\n" + okResponses, want: "{id} is not declared"},
		{name: "partial segment parameter", paths: "  /a/{id}.json:\n    get:\n      operationId: x\n" + okResponses, want: "whole segment"},
		{name: "object query parameter", paths: "  /a:\n    get:\n      operationId: x\n      parameters:\n        - {name: f, in: query, schema: {type: object}}\n" + okResponses,
			want: "objects are not supported"},
		{name: "deepObject style", paths: "  /a:\n    get:\n      operationId: x\n      parameters:\n        - {name: f, in: query, style: deepObject, schema: {type: string}}\n" + okResponses,
			want: "style"},
		{name: "content parameter", paths: "  /a:\n    get:\n      operationId: x\n      parameters:\n        - {name: f, in: query, content: {application/json: {schema: {type: string}}}}\n" + okResponses,
			want: "needs a schema"},
		{name: "non-JSON body", paths: "  /a:\n    post:\n      operationId: x\n      requestBody: {content: {text/plain: {schema: {type: string}}}}\n" + okResponses,
			want: "no application/json content"},
		{name: "string body limit", paths: "  /a:\n    post:\n      operationId: x\n      x-occ-body-limit: big\n" + okResponses, want: "x-occ-body-limit"},
		{name: "fractional body limit", paths: "  /a:\n    post:\n      operationId: x\n      x-occ-body-limit: 1.5\n" + okResponses, want: "x-occ-body-limit"},
		{name: "zero body limit", paths: "  /a:\n    post:\n      operationId: x\n      x-occ-body-limit: 0\n" + okResponses, want: "x-occ-body-limit"},
		{name: "BodyLimits for an unknown operation", paths: "  /a:\n    get:\n      operationId: x\n" + okResponses,
			opts: Options{BodyLimits: map[string]int64{"y": 10}}, want: `"y"`},
		{name: "non-positive BodyLimits", paths: "  /a:\n    get:\n      operationId: x\n" + okResponses,
			opts: Options{BodyLimits: map[string]int64{"x": 0}}, want: "not positive"},
		{name: "negative default", paths: "  /a:\n    get:\n      operationId: x\n" + okResponses,
			opts: Options{DefaultBodyLimit: -1}, want: "negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := tc.opts
			opts.Spec = miniSpec(t, tc.paths)
			_, err := New(opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := New(Options{}); err == nil {
		t.Error("New without a spec succeeded")
	}
}

func TestNewAcceptsFixture(t *testing.T) {
	t.Parallel()
	doc := spec(t)
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{Spec: doc})
	if err != nil {
		t.Fatal(err)
	}
	limits := map[string]int64{}
	for _, pe := range a.router.paths {
		for _, o := range pe.ops {
			limits[o.id] = o.limit
		}
	}
	if limits["createNamespace"] != 2048 || limits["putDocument"] != 100000 || limits["updateNamespace"] != DefaultBodyLimit {
		t.Errorf("limits = %v", limits)
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	doc := spec(t)
	tests := []struct {
		method, path string
		opID         string
		params       map[string]string
		allow        []string
	}{
		{"GET", "/namespaces", "listNamespaces", map[string]string{}, nil},
		{"GET", "/namespaces/current", "currentNamespace", map[string]string{}, nil},
		{"GET", "/namespaces/" + nsID, "getNamespace", map[string]string{"namespaceId": nsID}, nil},
		{"PATCH", "/namespaces/current", "updateNamespace", map[string]string{"namespaceId": "current"}, nil},
		{"GET", "/namespaces/a%20b", "getNamespace", map[string]string{"namespaceId": "a b"}, nil},
		{"GET", "/namespaces/a%2Fb", "getNamespace", map[string]string{"namespaceId": "a/b"}, nil},
		{"POST", "/namespaces/current", "", nil, []string{"DELETE", "GET", "PATCH"}},
		{"get", "/namespaces", "", nil, []string{"GET", "POST"}},
		{"GET", "/namespaces//agents/x/stop", "", nil, []string{"POST"}[:0]},
		{"GET", "/", "", nil, nil},
		{"GET", "", "", nil, nil},
		{"GET", "/namespaces/%zz", "", nil, nil},
	}
	for _, tc := range tests {
		route, allow, err := Lookup(doc, tc.method, tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if tc.opID == "" {
			if route != nil || !slices.Equal(allow, tc.allow) {
				t.Errorf("%s %s: route %+v allow %v, want allow %v", tc.method, tc.path, route, allow, tc.allow)
			}
			continue
		}
		if route == nil || route.OperationID != tc.opID || len(route.PathParams) != len(tc.params) {
			t.Errorf("%s %s: route %+v, want %s %v", tc.method, tc.path, route, tc.opID, tc.params)
			continue
		}
		for k, v := range tc.params {
			if route.PathParams[k] != v {
				t.Errorf("%s %s: param %s = %q, want %q", tc.method, tc.path, k, route.PathParams[k], v)
			}
		}
	}
}
