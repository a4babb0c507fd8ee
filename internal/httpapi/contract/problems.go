package contract

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/openclaw/occ/internal/occ"
)

// Limits of the error envelope (CONTRACT.md §1, api-access.md §1.2).
const (
	maxMessageLen = 256 // code points (counted as UTF-16 units, which is never fewer)
	maxPointerLen = 512
)

// ContractPrefix starts the message of every validation error.
const ContractPrefix = "The request does not match the contract: "

// problem is one thing wrong with a request: a detail plus the words that
// describe it in the message. phrase never contains a submitted value.
type problem struct {
	path   string // RFC 6901 pointer
	code   string // occ.Detail* code
	phrase string // e.g. "is required"
}

// escapeToken escapes one reference token of an RFC 6901 pointer.
func escapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// pointer joins tokens onto base.
func pointer(base string, tokens ...string) string {
	var b strings.Builder
	b.WriteString(base)
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapeToken(t))
	}
	return b.String()
}

// textLen counts s in UTF-16 units: at least its code points, and what
// JSON Schema validators that count UTF-16 (kin-openapi) see.
func textLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// capText cuts s to at most n UTF-16 units, at a code point boundary.
func capText(s string, n int) string {
	used := 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if used+w > n {
			return s[:i]
		}
		used += w
	}
	return s
}

// capPointer shortens a pointer longer than maxPointerLen to its longest
// ancestor that fits, so it still points at the problem's surroundings.
func capPointer(p string) string {
	for textLen(p) > maxPointerLen {
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return ""
		}
		p = p[:i]
	}
	return p
}

// sanitize makes text safe for a message: invalid UTF-8, control and format
// characters and line or paragraph separators become "?".
func sanitize(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == utf8.RuneError && size <= 1 || unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
			b.WriteByte('?')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// cleanMessage applies the message rules: sanitized and capped.
func cleanMessage(s string) string { return capText(sanitize(s), maxMessageLen) }

// where names a problem's location in a message.
func where(path string) string {
	if path == "" {
		return "the request body"
	}
	return path
}

// invalid builds the 400 INVALID_REQUEST error for problems: details sorted
// by path then code, deduplicated, at most occ.MaxDetails, and a message
// naming the first problems.
func invalid(problems []problem) *occ.Error {
	ps := slices.Clone(problems)
	for i := range ps {
		ps[i].path = capPointer(ps[i].path)
	}
	slices.SortStableFunc(ps, func(a, b problem) int {
		return cmp.Or(strings.Compare(a.path, b.path), strings.Compare(a.code, b.code))
	})
	ps = slices.CompactFunc(ps, func(a, b problem) bool { return a.path == b.path && a.code == b.code })
	details := make([]occ.Detail, 0, min(len(ps), occ.MaxDetails))
	for _, p := range ps[:min(len(ps), occ.MaxDetails)] {
		details = append(details, occ.Detail{Path: p.path, Code: p.code})
	}
	return &occ.Error{Code: occ.CodeInvalidRequest, Message: contractMessage(ps), Details: details}
}

// contractMessage names up to three problems, then how many more there are,
// within maxMessageLen.
func contractMessage(ps []problem) string {
	tail := func(more int) string {
		if more == 0 {
			return "."
		}
		return fmt.Sprintf("; and %d more.", more)
	}
	msg := ContractPrefix
	shown := 0
	for i, p := range ps {
		if i == 3 {
			break
		}
		part := sanitize(where(p.path) + " " + p.phrase)
		sep := ""
		if shown > 0 {
			sep = "; "
		}
		if textLen(msg+sep+part+tail(len(ps)-i-1)) > maxMessageLen {
			if shown > 0 {
				break
			}
			// The first problem alone is too long: shorten it.
			room := maxMessageLen - textLen(msg+tail(len(ps)-1)) - 1
			part = capText(part, max(room, 0)) + "…"
		}
		msg += sep + part
		shown++
	}
	return cleanMessage(msg + tail(len(ps)-shown))
}

// collectSchemaErrors gathers the leaf schema errors of a kin-openapi
// validation error. allOf failures and the failure of the shape a
// discriminator chose are replaced by their inner errors. Anything that is
// not a schema error is returned as other.
func collectSchemaErrors(err error, out []*openapi3.SchemaError) ([]*openapi3.SchemaError, error) {
	switch e := err.(type) {
	case nil:
		return out, nil
	case openapi3.MultiError:
		for _, x := range e {
			var other error
			if out, other = collectSchemaErrors(x, out); other != nil {
				return out, other
			}
		}
		return out, nil
	case *openapi3.SchemaError:
		if inner := innerErrors(e); len(inner) > 0 {
			return collectSchemaErrors(inner, out)
		}
		return append(out, e), nil
	case *openapi3filter.RequestError:
		if e.Err == nil {
			return out, e
		}
		return collectSchemaErrors(e.Err, out)
	}
	if u := errors.Unwrap(err); u != nil {
		return collectSchemaErrors(u, out)
	}
	return out, err
}

func innerErrors(e *openapi3.SchemaError) openapi3.MultiError {
	flatten := e.SchemaField == "allOf" ||
		e.SchemaField == "oneOf" && e.Schema != nil && e.Schema.Discriminator != nil
	if !flatten {
		return nil
	}
	for x := e.Origin; x != nil; x = errors.Unwrap(x) {
		if me, ok := x.(openapi3.MultiError); ok {
			return me
		}
	}
	return nil
}

// schemaProblems turns a kin-openapi validation error into problems, with
// paths under base. A non-schema error is returned as other.
func schemaProblems(base string, err error) (ps []problem, other error) {
	errs, other := collectSchemaErrors(err, nil)
	if other != nil {
		return nil, other
	}
	for _, e := range errs {
		ps = append(ps, schemaErrorProblems(base, e)...)
	}
	return ps, nil
}

// schemaErrorProblems maps one schema error to problems by its keyword. The
// phrase is built from the schema alone, never from the value or from
// kin-openapi's reason, which can quote the value.
func schemaErrorProblems(base string, e *openapi3.SchemaError) []problem {
	path := pointer(base, e.JSONPointer()...)
	s := e.Schema
	if s == nil {
		s = &openapi3.Schema{}
	}
	switch e.SchemaField {
	case "required":
		return []problem{{path, occ.DetailRequired, "is required"}}
	case "properties", "additionalProperties":
		m, _ := e.Value.(map[string]any)
		var ps []problem
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range m {
				if s.Properties[k] == nil && !yield(k) {
					return
				}
			}
		}) {
			ps = append(ps, problem{pointer(path, k), occ.DetailUnknownField, "is not an accepted field"})
		}
		if len(ps) == 0 {
			ps = append(ps, problem{path, occ.DetailUnknownField, "has a field that is not accepted"})
		}
		return ps
	case "readOnly":
		return []problem{{path, occ.DetailUnknownField, "is not an accepted field (it is read-only)"}}
	case "type":
		return []problem{{path, occ.DetailInvalidType, "must be " + typeWords(s)}}
	case "nullable":
		return []problem{{path, occ.DetailInvalidType, "must not be null"}}
	case "format":
		return []problem{{path, occ.DetailInvalidFmt, "must be a valid " + s.Format}}
	case "pattern":
		return []problem{{path, occ.DetailInvalidFmt, "does not have the required format"}}
	case "maxLength":
		return []problem{{path, occ.DetailTooLong, fmt.Sprintf("must be at most %s characters", uintText(s.MaxLength))}}
	case "discriminator":
		name := ""
		if s.Discriminator != nil {
			name = s.Discriminator.PropertyName
		}
		switch {
		case strings.Contains(e.Reason, "does not contain"):
			return []problem{{pointer(path, name), occ.DetailRequired, "is required"}}
		case strings.Contains(e.Reason, "not a string"):
			return []problem{{pointer(path, name), occ.DetailInvalidType, "must be a string"}}
		}
		return []problem{{pointer(path, name), occ.DetailInvalidValue, "is not one of the accepted kinds"}}
	}
	return []problem{{path, occ.DetailInvalidValue, valuePhrase(e.SchemaField, s)}}
}

// valuePhrase describes an INVALID_VALUE problem by the keyword it failed.
func valuePhrase(keyword string, s *openapi3.Schema) string {
	switch keyword {
	case "maximum":
		if s.Max != nil {
			return "must be at most " + numText(*s.Max)
		}
	case "minimum":
		if s.Min != nil {
			return "must be at least " + numText(*s.Min)
		}
	case "exclusiveMaximum":
		if b := exclusiveBound(s.ExclusiveMax, s.Max); b != nil {
			return "must be less than " + numText(*b)
		}
	case "exclusiveMinimum":
		if b := exclusiveBound(s.ExclusiveMin, s.Min); b != nil {
			return "must be more than " + numText(*b)
		}
	case "multipleOf":
		if s.MultipleOf != nil {
			return "must be a multiple of " + numText(*s.MultipleOf)
		}
	case "minLength":
		return fmt.Sprintf("must be at least %d characters", s.MinLength)
	case "minItems":
		return fmt.Sprintf("must have at least %d items", s.MinItems)
	case "maxItems":
		return fmt.Sprintf("must have at most %s items", uintText(s.MaxItems))
	case "uniqueItems":
		return "must not contain duplicate items"
	case "minProperties":
		return fmt.Sprintf("must have at least %d fields", s.MinProps)
	case "maxProperties":
		return fmt.Sprintf("must have at most %s fields", uintText(s.MaxProps))
	case "enum", "const":
		if len(s.Enum) > 0 {
			words := make([]string, 0, len(s.Enum))
			for _, v := range s.Enum {
				b, _ := json.Marshal(v)
				words = append(words, string(b))
			}
			if list := strings.Join(words, ", "); len(list) <= 80 {
				return "must be one of " + list
			}
		}
		return "must be one of the accepted values"
	case "oneOf", "anyOf":
		return "does not match any accepted shape"
	case "not":
		return "is not allowed"
	}
	return "has a value that is not accepted"
}

func exclusiveBound(eb openapi3.ExclusiveBound, inclusive *float64) *float64 {
	if eb.Value != nil {
		return eb.Value
	}
	if eb.IsTrue() {
		return inclusive
	}
	return nil
}

func numText(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func uintText(p *uint64) string {
	if p == nil {
		return "?"
	}
	return strconv.FormatUint(*p, 10)
}

// typeWords names the types a schema accepts: "a string", "an integer",
// "one of string, null".
func typeWords(s *openapi3.Schema) string {
	types := slices.Clone(s.Type.Slice())
	if s.Nullable && !slices.Contains(types, openapi3.TypeNull) {
		types = append(types, openapi3.TypeNull)
	}
	switch len(types) {
	case 0:
		return "of another type"
	case 1:
		switch types[0] {
		case openapi3.TypeArray, openapi3.TypeObject, openapi3.TypeInteger:
			return "an " + types[0]
		}
		return "a " + types[0]
	}
	return "one of " + strings.Join(types, ", ")
}
