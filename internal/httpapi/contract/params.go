package contract

import (
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/openclaw/occ/internal/occ"
)

// Exact decimal text: no sign other than a leading minus, no leading zeros,
// no exponent, no fraction, no whitespace.
var (
	integerText = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
	numberText  = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
)

// paramValue turns the text of a parameter into the JSON value its schema
// describes, without coercion: integers and numbers must be exact decimal
// text, booleans exactly true or false. ok is false when the text is not of
// the schema's type.
func paramValue(s *openapi3.Schema, text string) (v any, ok bool) {
	t := s.Type
	if t.IsEmpty() || t.Includes(openapi3.TypeString) {
		return text, true
	}
	if t.Includes(openapi3.TypeInteger) && integerText.MatchString(text) {
		return json.Number(text), true
	}
	if t.Includes(openapi3.TypeNumber) && numberText.MatchString(text) {
		return json.Number(text), true
	}
	if t.Includes(openapi3.TypeBoolean) && (text == "true" || text == "false") {
		return text == "true", true
	}
	return nil, false
}

// checkPathParams validates each path parameter against its schema. Any
// mismatch is INVALID_FORMAT at /<name>: a path parameter is an identifier.
func (a *Admission) checkPathParams(o *operation, params map[string]string) *occ.Error {
	var ps []problem
	for _, name := range sortedKeys(o.pathParams) {
		p := o.pathParams[name]
		s := p.Schema.Value
		v, ok := paramValue(s, params[name])
		if ok && s.VisitJSON(v, a.schema...) == nil {
			continue
		}
		ps = append(ps, problem{pointer("", name), occ.DetailInvalidFmt, "has an invalid format"})
	}
	if len(ps) > 0 {
		return invalid(ps)
	}
	return nil
}

// checkQuery validates the query string: every name must be declared by the
// operation, a single-valued parameter may appear once, required ones must
// be present, and each value must match its schema.
func (a *Admission) checkQuery(o *operation, rawQuery string) *occ.Error {
	values, err := url.ParseQuery(rawQuery)
	if err != nil {
		return occ.E(occ.CodeInvalidRequest, "The query string is malformed.")
	}
	var ps []problem
	for _, name := range sortedKeys(values) {
		p := o.queryParams[name]
		if p == nil {
			ps = append(ps, problem{pointer("", name), occ.DetailUnknownField, "is not an accepted query parameter"})
			continue
		}
		ps = append(ps, a.queryProblems(p, values[name])...)
	}
	for _, name := range sortedKeys(o.queryParams) {
		if p := o.queryParams[name]; p.Required && len(values[name]) == 0 {
			ps = append(ps, problem{pointer("", name), occ.DetailRequired, "is required"})
		}
	}
	if len(ps) > 0 {
		return invalid(ps)
	}
	return nil
}

func (a *Admission) queryProblems(p *openapi3.Parameter, texts []string) []problem {
	base := pointer("", p.Name)
	s := p.Schema.Value
	if !s.Type.Includes(openapi3.TypeArray) {
		if len(texts) > 1 {
			return []problem{{base, occ.DetailInvalidValue, "must not be repeated"}}
		}
		if texts[0] == "" && p.AllowEmptyValue {
			return nil
		}
		v, ok := paramValue(s, texts[0])
		if !ok {
			return []problem{{base, occ.DetailInvalidType, "must be " + typeWords(s)}}
		}
		return a.visit(base, s, v)
	}
	// An array: repeated names (explode, the default) or one comma-separated
	// value (explode: false).
	explode := p.Explode == nil || *p.Explode
	if !explode {
		if len(texts) > 1 {
			return []problem{{base, occ.DetailInvalidValue, "must not be repeated"}}
		}
		texts = strings.Split(texts[0], ",")
	}
	items := s.Items.Value
	var ps []problem
	arr := make([]any, 0, len(texts))
	for i, text := range texts {
		v, ok := paramValue(items, text)
		if !ok {
			ps = append(ps, problem{pointer(base, strconv.Itoa(i)), occ.DetailInvalidType, "must be " + typeWords(items)})
			continue
		}
		arr = append(arr, v)
	}
	if len(ps) > 0 {
		return ps
	}
	return a.visit(base, s, arr)
}

// visit validates v against s and returns the problems, under base.
func (a *Admission) visit(base string, s *openapi3.Schema, v any) []problem {
	ps, other := schemaProblems(base, s.VisitJSON(v, a.schema...))
	if other != nil {
		// Not a schema mismatch (e.g. a pattern the regexp engine rejects):
		// still the value is not accepted.
		return []problem{{base, occ.DetailInvalidValue, "has a value that is not accepted"}}
	}
	return ps
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
