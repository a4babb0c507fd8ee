package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/openclaw/occ/internal/occ"
)

// Body runs after authentication, for operations with a requestBody (others
// pass through):
//  1. Content-Type must be application/json (parameters allowed; a charset
//     must be utf-8); anything else, or missing → 415 UNSUPPORTED_MEDIA_TYPE
//     "Requests must use application/json.". A request without any body to
//     an operation whose body is optional passes without this check.
//  2. reads at most limit+1 bytes (http.MaxBytesReader); over → 413.
//  3. empty body where one is required → 400 with detail {"", REQUIRED}.
//  4. syntax: invalid UTF-8, invalid JSON or trailing data → 400 without
//     details.
//  5. structure, checked with a streaming json.Decoder token walk before
//     anything is unmarshalled: nesting deeper than 24 (objects+arrays) →
//     400 detail TOO_DEEP at the pointer of the first too-deep value; an
//     object key __proto__, constructor or prototype anywhere → 400 detail
//     INVALID_VALUE at that key's pointer; a duplicate key in one object →
//     400 INVALID_VALUE at that key.
//  6. schema validation against the operation's schema with openapi3filter
//     (all errors, no defaults filled, no coercion), each error mapped to a
//     detail by keyword: required → REQUIRED at the missing property;
//     additionalProperties → UNKNOWN_FIELD at the unknown key; type →
//     INVALID_TYPE; format or pattern → INVALID_FORMAT; maxLength →
//     TOO_LONG; anything else → INVALID_VALUE. The message names up to
//     three problems and never a submitted value.
//  7. replaces r.Body with the buffered bytes so the handler can decode it
//     again.
//
// Body needs PreAuth in front of it; without it the request fails with 500.
func (a *Admission) Body(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := stateFrom(r.Context())
		if st == nil || st.op == nil {
			WriteError(w, r, errors.New("wire: Body is used without PreAuth in front of it"))
			return
		}
		o := st.op
		if o.body == nil {
			next.ServeHTTP(w, r)
			return
		}
		if !o.body.Required && !hasBody(r) {
			next.ServeHTTP(w, r)
			return
		}
		data, err := a.readBody(w, r, o)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		if err := a.checkBody(r, o, data); err != nil {
			WriteError(w, r, err)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(data))
		r.ContentLength = int64(len(data))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
		next.ServeHTTP(w, r)
	})
}

// isJSON reports whether a Content-Type header is application/json, with
// at most a utf-8 charset among its parameters.
func isJSON(contentType string) bool {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != jsonMediaType {
		return false
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return false
	}
	return true
}

// readBody checks the media type and reads the body within the limit.
func (a *Admission) readBody(w http.ResponseWriter, r *http.Request, o *operation) ([]byte, *occ.Error) {
	if ct := r.Header.Values("Content-Type"); len(ct) != 1 || !isJSON(ct[0]) {
		return nil, occ.E(occ.CodeUnsupportedMediaType, msgMediaType)
	}
	if r.ContentLength > o.limit {
		return nil, occ.E(occ.CodePayloadTooLarge, msgTooLarge)
	}
	if r.Body == nil {
		return nil, nil
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, o.limit))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, occ.E(occ.CodePayloadTooLarge, msgTooLarge)
		}
		return nil, occ.E(occ.CodeInvalidRequest, msgUnreadable)
	}
	return data, nil
}

// checkBody runs steps 3-6 of Body on the read bytes.
func (a *Admission) checkBody(r *http.Request, o *operation, data []byte) *occ.Error {
	if len(data) == 0 {
		if o.body.Required {
			return invalid([]problem{{"", occ.DetailRequired, "is required"}})
		}
		return nil
	}
	if !utf8.Valid(data) {
		return occ.E(occ.CodeInvalidRequest, msgInvalidUTF8)
	}
	ps, syntaxErr := walkJSON(data)
	if syntaxErr != nil {
		return occ.E(occ.CodeInvalidRequest, msgInvalidJSON)
	}
	if len(ps) > 0 {
		return invalid(ps)
	}
	return a.checkSchema(r, o, data)
}

// checkSchema validates the body against the operation's schema.
func (a *Admission) checkSchema(r *http.Request, o *operation, data []byte) *occ.Error {
	req := &http.Request{
		Method:        r.Method,
		URL:           r.URL,
		Header:        http.Header{"Content-Type": {jsonMediaType}},
		Body:          io.NopCloser(bytes.NewReader(data)),
		ContentLength: int64(len(data)),
	}
	input := &openapi3filter.RequestValidationInput{Request: req, Route: o.kin, Options: a.filter}
	err := openapi3filter.ValidateRequestBody(r.Context(), input, o.body)
	if err == nil {
		return nil
	}
	ps, other := schemaProblems("", err)
	if other != nil || len(ps) == 0 {
		return occ.Wrap(occ.CodeInternal, occ.MsgInternal, fmt.Errorf("wire: validating the body of %s: %w", o.id, err))
	}
	return invalid(ps)
}

// forbiddenKeys may appear nowhere in a body: they are prototype-pollution
// vectors for JavaScript consumers of the stored documents.
var forbiddenKeys = map[string]bool{"__proto__": true, "constructor": true, "prototype": true}

// maxWalkProblems bounds the structure problems one walk collects.
const maxWalkProblems = 1000

// frame is one open object or array of the token walk.
type frame struct {
	object    bool
	ptr       string
	index     int                 // next element index (arrays)
	key       string              // current member name (objects)
	expectKey bool                // objects: the next token is a name or '}'
	keys      map[string]struct{} // objects: names seen
}

// walkJSON checks that data is exactly one JSON value and collects its
// structure problems: the first value nested deeper than MaxDepth (the walk
// stops there), forbidden keys and duplicate keys. syntaxErr reports invalid
// JSON or trailing data.
func walkJSON(data []byte) (ps []problem, syntaxErr error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []*frame
	add := func(p problem) {
		if len(ps) < maxWalkProblems {
			ps = append(ps, p)
		}
	}
	// valuePtr is the pointer of the value about to start.
	valuePtr := func() string {
		if len(stack) == 0 {
			return ""
		}
		top := stack[len(stack)-1]
		if top.object {
			return pointer(top.ptr, top.key)
		}
		return top.ptr + "/" + strconv.Itoa(top.index)
	}
	// valueDone moves the enclosing container past a finished value.
	valueDone := func() {
		if len(stack) == 0 {
			return
		}
		top := stack[len(stack)-1]
		if top.object {
			top.expectKey = true
		} else {
			top.index++
		}
	}
	for started := false; !started || len(stack) > 0; {
		from := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		started = true
		if len(stack) > 0 {
			if top := stack[len(stack)-1]; top.object && top.expectKey {
				if tok == json.Delim('}') {
					stack = stack[:len(stack)-1]
					valueDone()
					continue
				}
				key, _ := tok.(string)
				ptr := pointer(top.ptr, key)
				if loneSurrogate(data[from:dec.InputOffset()]) {
					add(problem{ptr, occ.DetailInvalidValue, "is not well-formed Unicode"})
				}
				if forbiddenKeys[key] {
					add(problem{ptr, occ.DetailInvalidValue, "is a forbidden key"})
				}
				if _, dup := top.keys[key]; dup {
					add(problem{ptr, occ.DetailInvalidValue, "is a duplicate key"})
				}
				top.keys[key] = struct{}{}
				top.key = key
				top.expectKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			ptr := valuePtr()
			if len(stack)+1 > MaxDepth {
				// The first too-deep value; the rest is not examined (the
				// decoder itself gives up at a far greater depth).
				return append(ps, problem{ptr, occ.DetailTooDeep, fmt.Sprintf("is nested deeper than %d levels", MaxDepth)}), nil
			}
			f := &frame{object: tok == json.Delim('{'), ptr: ptr}
			if f.object {
				f.expectKey = true
				f.keys = map[string]struct{}{}
			}
			stack = append(stack, f)
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			if _, ok := tok.(string); ok && loneSurrogate(data[from:dec.InputOffset()]) {
				add(problem{valuePtr(), occ.DetailInvalidValue, "is not well-formed Unicode"})
			}
			valueDone()
		}
	}
	if rest := bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return nil, errors.New("trailing data after the JSON value")
	}
	return ps, nil
}

// loneSurrogate reports whether raw JSON text holds a \u escape of a UTF-16
// surrogate that is not part of a high-low pair. encoding/json would turn it
// into U+FFFD silently; occ refuses it, since every text it accepts must be
// well-formed Unicode.
func loneSurrogate(raw []byte) bool {
	for i := 0; i+5 < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // skip the escaped character (it may be a backslash)
			continue
		}
		r, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 32)
		if err != nil {
			return false // malformed: the decoder reports it
		}
		switch {
		case r >= 0xdc00 && r <= 0xdfff:
			return true
		case r >= 0xd800 && r <= 0xdbff:
			next := i + 6
			if next+6 > len(raw) || raw[next] != '\\' || raw[next+1] != 'u' {
				return true
			}
			lo, err := strconv.ParseUint(string(raw[next+2:next+6]), 16, 32)
			if err != nil || lo < 0xdc00 || lo > 0xdfff {
				return true
			}
			i = next + 5
		default:
			i += 5
		}
	}
	return false
}
