// Package wire is the spec-driven admission and envelope layer of the HTTP
// API: everything route-independent that every request passes through. It
// finds each request's operation in the OpenAPI document, checks its path
// parameters, query string and body against the document before any handler
// runs, and writes the success and error envelopes of CONTRACT.md §1, with
// the security headers on every response.
//
// A server composes it as PreAuth → authentication → Body → handler.
package contract

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// DefaultBodyLimit is the body limit used when Options.DefaultBodyLimit is
// not set: 64 KiB (CONTRACT.md §1).
const DefaultBodyLimit = 64 << 10

// BodyLimitExtension is the operation extension that sets an operation's body
// limit in bytes, e.g. `x-occ-body-limit: 458752`. It must be a positive
// integer.
const BodyLimitExtension = "x-occ-body-limit"

// MaxDepth is the deepest nesting of objects and arrays a request body may
// have; the top-level value is depth 1.
const MaxDepth = 24

// Options configure admission.
type Options struct {
	// Spec is the OpenAPI 3 document every request is admitted against.
	Spec *openapi3.T
	// DefaultBodyLimit is the body limit in bytes of an operation that sets
	// none; 0 means DefaultBodyLimit (64 KiB).
	DefaultBodyLimit int64
	// BodyLimits are body limits in bytes by operationId. One overrides the
	// operation's x-occ-body-limit extension (an integer), which overrides
	// DefaultBodyLimit. A key that names no operation is an error.
	BodyLimits map[string]int64
	// Logger receives internal errors and recovered panics, with the request
	// ID; they are never written to the response. nil means slog.Default().
	Logger *slog.Logger
	// Observe, when set, is told what every request came to once its
	// response is written (metrics, the access log).
	Observe func(Served)
}

// Admission admits requests against the OpenAPI document. It is safe for
// concurrent use.
type Admission struct {
	spec    *openapi3.T
	logger  *slog.Logger
	observe func(Served)
	router  *router
	filter  *openapi3filter.Options
	schema  []openapi3.SchemaValidationOption
}

// operation is one operation of the spec, compiled for admission.
type operation struct {
	id          string
	method      string
	template    string
	op          *openapi3.Operation
	pathParams  map[string]*openapi3.Parameter
	queryParams map[string]*openapi3.Parameter
	limit       int64
	body        *openapi3.RequestBody // nil when the operation takes no body
	kin         *routers.Route
}

// New compiles the document for admission. It rejects what admission cannot
// serve faithfully: an operation without a unique operationId, a path
// parameter that is not a whole segment or is not declared, a query
// parameter that is not a primitive or an array of primitives in form style,
// a request body whose content has no application/json entry, an unresolved
// reference, a bad x-occ-body-limit, or a BodyLimits key naming no operation.
func New(opts Options) (*Admission, error) {
	if opts.Spec == nil {
		return nil, fmt.Errorf("wire: Options.Spec is nil")
	}
	if opts.Spec.Paths == nil {
		return nil, fmt.Errorf("wire: the document has no paths")
	}
	def := opts.DefaultBodyLimit
	if def < 0 {
		return nil, fmt.Errorf("wire: DefaultBodyLimit %d is negative", def)
	}
	if def == 0 {
		def = DefaultBodyLimit
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	a := &Admission{
		spec:    opts.Spec,
		logger:  logger,
		observe: opts.Observe,
		router:  &router{},
		filter: &openapi3filter.Options{
			MultiError:          true,
			SkipSettingDefaults: true,
		},
	}
	a.schema = []openapi3.SchemaValidationOption{openapi3.MultiErrors()}
	if opts.Spec.IsOpenAPI31OrLater() {
		a.schema = append(a.schema, openapi3.EnableJSONSchema2020())
	} else {
		// Keep schemas and submitted values out of error texts (they can
		// reach the logs); problems are built from the errors' fields.
		a.schema = append(a.schema, openapi3.DisableSchemaErrorDetails())
		a.filter.SchemaValidationOptions = []openapi3.SchemaValidationOption{openapi3.DisableSchemaErrorDetails()}
	}

	ids := map[string]string{}
	for _, template := range slices.Sorted(maps.Keys(opts.Spec.Paths.Map())) {
		item := opts.Spec.Paths.Value(template)
		if item == nil {
			continue
		}
		segs, err := parseTemplate(template)
		if err != nil {
			return nil, fmt.Errorf("wire: %w", err)
		}
		pe := &pathEntry{template: template, segs: segs, ops: map[string]*operation{}}
		for method, op := range item.Operations() {
			o, err := compileOperation(opts.Spec, template, segs, method, item, op)
			if err != nil {
				return nil, fmt.Errorf("wire: %s %s: %w", method, template, err)
			}
			if prev, dup := ids[o.id]; dup {
				return nil, fmt.Errorf("wire: operationId %q is used by both %s and %s %s", o.id, prev, method, template)
			}
			ids[o.id] = method + " " + template
			o.limit = def
			if v, ok := op.Extensions[BodyLimitExtension]; ok {
				n, err := extensionInt(v)
				if err != nil {
					return nil, fmt.Errorf("wire: %s %s: %s: %w", method, template, BodyLimitExtension, err)
				}
				o.limit = n
			}
			if n, ok := opts.BodyLimits[o.id]; ok {
				if n <= 0 {
					return nil, fmt.Errorf("wire: BodyLimits[%q] = %d is not positive", o.id, n)
				}
				o.limit = n
			}
			pe.ops[method] = o
			pe.methods = append(pe.methods, method)
		}
		if len(pe.ops) == 0 {
			continue
		}
		slices.Sort(pe.methods)
		a.router.paths = append(a.router.paths, pe)
	}
	for id := range opts.BodyLimits {
		if _, ok := ids[id]; !ok {
			return nil, fmt.Errorf("wire: BodyLimits names operationId %q, which the document does not have", id)
		}
	}
	slices.SortFunc(a.router.paths, moreSpecific)
	return a, nil
}

func compileOperation(spec *openapi3.T, template string, segs []segment, method string, item *openapi3.PathItem, op *openapi3.Operation) (*operation, error) {
	if op.OperationID == "" {
		return nil, fmt.Errorf("the operation has no operationId")
	}
	o := &operation{
		id:          op.OperationID,
		method:      method,
		template:    template,
		op:          op,
		pathParams:  map[string]*openapi3.Parameter{},
		queryParams: map[string]*openapi3.Parameter{},
		kin:         kinRoute(spec, template, method, item, op),
	}
	// Operation parameters override path-item parameters with the same
	// location and name.
	var params []*openapi3.Parameter
	for _, list := range []openapi3.Parameters{item.Parameters, op.Parameters} {
		for _, ref := range list {
			if ref == nil || ref.Value == nil {
				return nil, fmt.Errorf("unresolved parameter reference")
			}
			p := ref.Value
			params = slices.DeleteFunc(params, func(q *openapi3.Parameter) bool { return q.In == p.In && q.Name == p.Name })
			params = append(params, p)
		}
	}
	for _, p := range params {
		switch p.In {
		case openapi3.ParameterInPath:
			if err := checkParamSchema(p, false); err != nil {
				return nil, err
			}
			o.pathParams[p.Name] = p
		case openapi3.ParameterInQuery:
			if err := checkParamSchema(p, true); err != nil {
				return nil, err
			}
			if p.Style != "" && p.Style != openapi3.SerializationForm {
				return nil, fmt.Errorf("query parameter %q: style %q is not supported (use form)", p.Name, p.Style)
			}
			o.queryParams[p.Name] = p
		}
	}
	inTemplate := map[string]bool{}
	for _, s := range segs {
		if s.param == "" {
			continue
		}
		inTemplate[s.param] = true
		if o.pathParams[s.param] == nil {
			return nil, fmt.Errorf("path parameter {%s} is not declared", s.param)
		}
	}
	for name := range o.pathParams {
		if !inTemplate[name] {
			return nil, fmt.Errorf("path parameter %q is declared but not in the path", name)
		}
	}
	if rb := op.RequestBody; rb != nil {
		if rb.Value == nil {
			return nil, fmt.Errorf("unresolved requestBody reference")
		}
		mt := rb.Value.Content.Get(jsonMediaType)
		if mt == nil {
			return nil, fmt.Errorf("the requestBody has no %s content", jsonMediaType)
		}
		if mt.Schema != nil && mt.Schema.Value == nil {
			return nil, fmt.Errorf("unresolved requestBody schema reference")
		}
		o.body = rb.Value
	}
	return o, nil
}

// checkParamSchema accepts parameters whose schema is a primitive or, for
// query parameters, an array of primitives.
func checkParamSchema(p *openapi3.Parameter, query bool) error {
	kind := "path"
	if query {
		kind = "query"
	}
	if p.Content != nil || p.Schema == nil {
		return fmt.Errorf("%s parameter %q needs a schema (content is not supported)", kind, p.Name)
	}
	s := p.Schema.Value
	if s == nil {
		return fmt.Errorf("%s parameter %q: unresolved schema reference", kind, p.Name)
	}
	if s.Type.Includes(openapi3.TypeArray) {
		if !query {
			return fmt.Errorf("path parameter %q: arrays are not supported", p.Name)
		}
		if s.Items == nil || s.Items.Value == nil {
			return fmt.Errorf("query parameter %q: an array needs resolved items", p.Name)
		}
		s = s.Items.Value
		if s.Type.Includes(openapi3.TypeArray) {
			return fmt.Errorf("query parameter %q: nested arrays are not supported", p.Name)
		}
	}
	if s.Type.Is(openapi3.TypeObject) {
		return fmt.Errorf("%s parameter %q: objects are not supported", kind, p.Name)
	}
	return nil
}

// extensionInt reads an integer extension value as the loader decoded it.
func extensionInt(v any) (int64, error) {
	var n int64
	switch x := v.(type) {
	case float64:
		if x != math.Trunc(x) || x > math.MaxInt64 || x < 1 {
			return 0, fmt.Errorf("must be a positive integer, got %v", x)
		}
		n = int64(x)
	case json.Number:
		i, err := x.Int64()
		if err != nil {
			return 0, fmt.Errorf("must be a positive integer, got %v", x)
		}
		n = i
	case int:
		n = int64(x)
	case int64:
		n = x
	case uint64:
		if x > math.MaxInt64 {
			return 0, fmt.Errorf("is too large: %d", x)
		}
		n = int64(x)
	default:
		return 0, fmt.Errorf("must be a positive integer, got %T", v)
	}
	if n <= 0 {
		return 0, fmt.Errorf("must be a positive integer, got %d", n)
	}
	return n, nil
}

const jsonMediaType = "application/json"

// hasBody reports whether a request carries a body: a positive
// Content-Length, any Transfer-Encoding, or a body of unknown length.
func hasBody(r *http.Request) bool {
	if r.ContentLength > 0 || len(r.TransferEncoding) > 0 || r.Header.Get("Transfer-Encoding") != "" {
		return true
	}
	return r.ContentLength < 0 && r.Body != nil && r.Body != http.NoBody
}

// methodList joins methods for an Allow header.
func methodList(methods []string) string { return strings.Join(methods, ", ") }
