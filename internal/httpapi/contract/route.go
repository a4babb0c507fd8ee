package contract

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
)

// Route is what admission learned about the request.
type Route struct {
	// OperationID is the operationId of the matched operation.
	OperationID string
	// PathTemplate is the spec's path key, e.g. "/namespaces/{namespaceId}".
	PathTemplate string
	// PathParams holds the decoded path parameters by name.
	PathParams map[string]string
	// Operation is the matched operation of the spec.
	Operation *openapi3.Operation
}

// segment is one "/"-separated part of a path template: a literal, or a whole
// "{name}" parameter.
type segment struct {
	literal string
	param   string
}

// pathEntry is one path of the spec with its operations by method.
type pathEntry struct {
	template string
	segs     []segment
	ops      map[string]*operation
	methods  []string // sorted
}

// router resolves a request path against the spec's paths. Literal segments
// beat parameters, so /namespaces/current wins over /namespaces/{namespaceId}.
type router struct {
	paths []*pathEntry
}

func parseTemplate(template string) ([]segment, error) {
	if !strings.HasPrefix(template, "/") {
		return nil, fmt.Errorf("path %q does not start with /", template)
	}
	rest := template[1:]
	if rest == "" {
		return nil, nil
	}
	var segs []segment
	seen := map[string]bool{}
	for part := range strings.SplitSeq(rest, "/") {
		if strings.ContainsAny(part, "{}") {
			if len(part) < 3 || part[0] != '{' || part[len(part)-1] != '}' || strings.ContainsAny(part[1:len(part)-1], "{}") {
				return nil, fmt.Errorf("path %q: a parameter must be a whole segment like {name}, got %q", template, part)
			}
			name := part[1 : len(part)-1]
			if seen[name] {
				return nil, fmt.Errorf("path %q: parameter {%s} appears twice", template, name)
			}
			seen[name] = true
			segs = append(segs, segment{param: name})
			continue
		}
		segs = append(segs, segment{literal: part})
	}
	return segs, nil
}

// moreSpecific orders path entries: at the first position where one has a
// literal and the other a parameter, the literal comes first.
func moreSpecific(a, b *pathEntry) int {
	for i := 0; i < len(a.segs) && i < len(b.segs); i++ {
		al, bl := a.segs[i].param == "", b.segs[i].param == ""
		if al != bl {
			if al {
				return -1
			}
			return 1
		}
	}
	if c := len(a.segs) - len(b.segs); c != 0 {
		return c
	}
	return strings.Compare(a.template, b.template)
}

// match resolves method and escapedPath (as from url.URL.EscapedPath). It
// returns the operation and its decoded path parameters; when the path exists
// but not with this method, op is nil and allow lists the path's methods,
// sorted; when no path matches, both are nil.
func (rt *router) match(method, escapedPath string) (op *operation, params map[string]string, allow []string) {
	if !strings.HasPrefix(escapedPath, "/") {
		return nil, nil, nil
	}
	var parts []string
	if rest := escapedPath[1:]; rest != "" {
		parts = strings.Split(rest, "/")
	}
	decoded := make([]string, len(parts))
	for i, p := range parts {
		d, err := url.PathUnescape(p)
		if err != nil {
			return nil, nil, nil
		}
		decoded[i] = d
	}
	var allowSet []string
	for _, pe := range rt.paths {
		if len(pe.segs) != len(decoded) {
			continue
		}
		ok := true
		for i, s := range pe.segs {
			if s.param == "" && s.literal != decoded[i] || s.param != "" && decoded[i] == "" {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		if o := pe.ops[method]; o != nil {
			params := make(map[string]string, len(o.pathParams))
			for i, s := range pe.segs {
				if s.param != "" {
					params[s.param] = decoded[i]
				}
			}
			return o, params, nil
		}
		allowSet = append(allowSet, pe.methods...)
	}
	if len(allowSet) == 0 {
		return nil, nil, nil
	}
	slices.Sort(allowSet)
	return nil, nil, slices.Compact(allowSet)
}

// Lookup resolves method and path (escaped, as url.URL.EscapedPath returns
// it) against spec the way admission does. It returns the matched route; when
// the path exists but not with this method, route is nil and allow lists the
// path's methods, sorted; when no path matches, both are nil. err reports a
// document that admission cannot serve (see New). Lookup compiles the
// document on every call and is meant for tests (contracttest uses it).
func Lookup(spec *openapi3.T, method, path string) (route *Route, allow []string, err error) {
	a, err := New(Options{Spec: spec})
	if err != nil {
		return nil, nil, err
	}
	op, params, allow := a.router.match(method, path)
	if op == nil {
		return nil, allow, nil
	}
	return op.route(params), nil, nil
}

func (o *operation) route(params map[string]string) *Route {
	return &Route{
		OperationID:  o.id,
		PathTemplate: o.template,
		PathParams:   params,
		Operation:    o.op,
	}
}

// kinRoute builds the kin-openapi route of an operation, for openapi3filter.
func kinRoute(spec *openapi3.T, template, method string, item *openapi3.PathItem, op *openapi3.Operation) *routers.Route {
	return &routers.Route{Spec: spec, Path: template, PathItem: item, Method: method, Operation: op}
}
