// Package wiretest checks recorded HTTP exchanges against the OpenAPI
// document and the wire rules of CONTRACT.md §1. It is a test helper: import
// it only from _test.go files.
package contracttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/openclaw/occ/internal/httpapi/contract"
	"github.com/openclaw/occ/internal/occ"
)

// EnvelopeExtension, set to false on an operation, exempts its JSON success
// responses from the {"data","meta"} envelope check (e.g. GET /openapi.json,
// which serves the document itself). Its responses are still validated
// against the document.
const EnvelopeExtension = "x-occ-envelope"

var detailCodes = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range occ.DetailCodes {
		m[c] = true
	}
	return m
}()

// ValidateResponse checks one recorded exchange against the spec with
// openapi3filter.ValidateResponse: the status must be documented (a status
// the operation lists neither explicitly nor through "default" is an error),
// the body must match the schema, the Content-Type must be one the response
// documents, and a response that documents no content must have no body. It
// also checks the wire invariants: Cache-Control: no-store,
// X-Content-Type-Options: nosniff and an X-Request-Id "req_<uuidv4>" on
// every response; meta.requestId equal to X-Request-Id; JSON success bodies
// shaped {"data","meta"}; error bodies shaped {"error":{"code","message",
// "details"?},"meta":{"requestId"}} with a known code whose status equals
// contract.StatusOf(code), a message of 1-256 code points without control
// characters, at most 32 details with known detail codes and RFC 6901 paths
// of at most 512 characters; Allow on 405 and Retry-After on 429; no body on
// 204 and 304. A request matching no path must have been answered 404, and
// one matching a path but not its method 405 with the path's methods in
// Allow. body may be nil for a streamed (text/event-stream) response, whose
// body is then not checked.
func ValidateResponse(spec *openapi3.T, req *http.Request, status int, header http.Header, body []byte) error {
	v := &validation{}
	v.headers(header)
	mediaType, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	isJSON := mediaType == "application/json"
	head := req.Method == http.MethodHead

	route, allow, err := contract.Lookup(spec, req.Method, req.URL.EscapedPath())
	if err != nil {
		v.fail("the document cannot be served: %v", err)
		return v.err()
	}
	switch {
	case status == http.StatusNoContent || status == http.StatusNotModified:
		if len(body) > 0 {
			v.fail("status %d with a %d-byte body", status, len(body))
		}
	case head:
	case status >= 400:
		if !isJSON {
			v.fail("error response with Content-Type %q, want application/json", header.Get("Content-Type"))
		} else {
			v.errorEnvelope(body, status, header)
		}
	case isJSON && (route == nil || envelopeRequired(route.Operation)):
		v.successEnvelope(body, header)
	}

	switch {
	case !contract.CanonicalPath(req.URL.EscapedPath()):
		if status != http.StatusBadRequest {
			v.fail("%s %s has an empty, '.' or '..' segment, so only 400 is possible, got %d", req.Method, req.URL.EscapedPath(), status)
		}
	case route == nil && allow == nil:
		if status != http.StatusNotFound {
			v.fail("%s %s matches no path of the document, so only 404 is possible, got %d", req.Method, req.URL.Path, status)
		}
	case route == nil:
		if status != http.StatusMethodNotAllowed {
			v.fail("%s %s matches a path but not its method, so only 405 is possible, got %d", req.Method, req.URL.Path, status)
		} else if got, want := header.Get("Allow"), strings.Join(allow, ", "); got != want {
			v.fail("Allow = %q, want %q", got, want)
		}
	default:
		v.againstSpec(spec, req, route, status, header, body, mediaType)
	}
	return v.err()
}

type validation struct{ errs []error }

func (v *validation) fail(format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf(format, args...))
}

func (v *validation) err() error { return errors.Join(v.errs...) }

func (v *validation) headers(h http.Header) {
	if !hasToken(h.Values("Cache-Control"), "no-store") {
		v.fail("Cache-Control = %q, want no-store", h.Values("Cache-Control"))
	}
	if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
		v.fail("X-Content-Type-Options = %q, want nosniff", got)
	}
	if got := h.Values(contract.HeaderRequestID); len(got) != 1 || !occ.ValidID(occ.PrefixRequest, got[0]) {
		v.fail("X-Request-Id = %q, want one req_<uuidv4>", got)
	}
}

func hasToken(values []string, token string) bool {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(part), token) {
				return true
			}
		}
	}
	return false
}

func envelopeRequired(op *openapi3.Operation) bool {
	if op == nil {
		return true
	}
	b, ok := op.Extensions[EnvelopeExtension].(bool)
	return !ok || b
}

// decodeObject decodes a JSON object strictly: one value, no duplicate
// handling needed beyond encoding/json's.
func decodeObject(data []byte) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("not a JSON object")
	}
	if dec.More() {
		return nil, errors.New("trailing data")
	}
	return m, nil
}

func onlyKeys(m map[string]json.RawMessage, allowed ...string) []string {
	var extra []string
	for k := range m {
		found := false
		for _, a := range allowed {
			found = found || k == a
		}
		if !found {
			extra = append(extra, k)
		}
	}
	return extra
}

// meta checks {"requestId": <X-Request-Id>, …}; only requestId when exact.
func (v *validation) meta(raw json.RawMessage, header http.Header, exact bool) {
	m, err := decodeObject(raw)
	if err != nil {
		v.fail("meta: %v", err)
		return
	}
	var id string
	if err := json.Unmarshal(m["requestId"], &id); err != nil {
		v.fail("meta.requestId: %v", err)
	} else if want := header.Get(contract.HeaderRequestID); id != want {
		v.fail("meta.requestId %q differs from X-Request-Id %q", id, want)
	}
	if extra := onlyKeys(m, "requestId"); exact && len(extra) > 0 {
		v.fail("meta has unexpected members %q", extra)
	}
}

func (v *validation) successEnvelope(body []byte, header http.Header) {
	m, err := decodeObject(body)
	if err != nil {
		v.fail("success body: %v", err)
		return
	}
	if extra := onlyKeys(m, "data", "meta"); len(extra) > 0 {
		v.fail("success body has unexpected members %q", extra)
	}
	if _, ok := m["data"]; !ok {
		v.fail("success body lacks data")
	}
	if _, ok := m["meta"]; !ok {
		v.fail("success body lacks meta")
		return
	}
	v.meta(m["meta"], header, false)
}

func (v *validation) errorEnvelope(body []byte, status int, header http.Header) {
	m, err := decodeObject(body)
	if err != nil {
		v.fail("error body: %v", err)
		return
	}
	if extra := onlyKeys(m, "error", "meta"); len(extra) > 0 {
		v.fail("error body has unexpected members %q", extra)
	}
	if _, ok := m["meta"]; ok {
		v.meta(m["meta"], header, true)
	} else {
		v.fail("error body lacks meta")
	}
	e, err := decodeObject(m["error"])
	if err != nil {
		v.fail("error: %v", err)
		return
	}
	if extra := onlyKeys(e, "code", "message", "details"); len(extra) > 0 {
		v.fail("error has unexpected members %q", extra)
	}
	var code occ.Code
	if err := json.Unmarshal(e["code"], &code); err != nil || code == "" {
		v.fail("error.code missing or not a string")
	} else if got := contract.StatusOf(code); got == http.StatusInternalServerError && code != occ.CodeInternal {
		v.fail("error.code %q is not a known code", code)
	} else if got != status {
		v.fail("error.code %s means status %d, got %d", code, got, status)
	}
	var msg string
	if err := json.Unmarshal(e["message"], &msg); err != nil {
		v.fail("error.message missing or not a string")
	} else {
		if n := utf8.RuneCountInString(msg); n < 1 || n > 256 {
			v.fail("error.message has %d code points, want 1-256", n)
		}
		for _, r := range msg {
			if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
				v.fail("error.message contains control character %U", r)
				break
			}
		}
	}
	if raw, ok := e["details"]; ok {
		var details []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &details); err != nil {
			v.fail("error.details: %v", err)
		}
		if len(details) > occ.MaxDetails {
			v.fail("error.details has %d entries, at most %d allowed", len(details), occ.MaxDetails)
		}
		for i, d := range details {
			if extra := onlyKeys(d, "path", "code"); len(extra) > 0 {
				v.fail("error.details[%d] has unexpected members %q", i, extra)
			}
			var path, dcode string
			if err := json.Unmarshal(d["path"], &path); err != nil {
				v.fail("error.details[%d].path missing or not a string", i)
			} else if !validPointer(path) {
				v.fail("error.details[%d].path %q is not an RFC 6901 pointer of at most 512 characters", i, path)
			}
			if err := json.Unmarshal(d["code"], &dcode); err != nil || !detailCodes[dcode] {
				v.fail("error.details[%d].code %s is not a known detail code", i, d["code"])
			}
		}
	}
	switch status {
	case http.StatusMethodNotAllowed:
		if header.Get("Allow") == "" {
			v.fail("405 without Allow")
		}
	case http.StatusTooManyRequests:
		if header.Get("Retry-After") == "" {
			v.fail("429 without Retry-After")
		}
	}
}

// validPointer reports whether p is an RFC 6901 pointer of at most 512
// characters.
func validPointer(p string) bool {
	if utf8.RuneCountInString(p) > 512 || p != "" && p[0] != '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 == len(p) || p[i+1] != '0' && p[i+1] != '1') {
			return false
		}
	}
	return true
}

// againstSpec validates the exchange with openapi3filter.
func (v *validation) againstSpec(spec *openapi3.T, req *http.Request, route *contract.Route, status int, header http.Header, body []byte, mediaType string) {
	item := spec.Paths.Value(route.PathTemplate)
	kin := &routers.Route{Spec: spec, Path: route.PathTemplate, PathItem: item, Method: req.Method, Operation: route.Operation}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}
	if !spec.IsOpenAPI31OrLater() {
		// Short errors: without this kin-openapi prints whole schemas.
		opts.SchemaValidationOptions = []openapi3.SchemaValidationOption{openapi3.DisableSchemaErrorDetails()}
	}
	var documented *openapi3.Response
	if ref := route.Operation.Responses.Status(status); ref != nil {
		documented = ref.Value
	} else if ref := route.Operation.Responses.Default(); ref != nil {
		documented = ref.Value
	}
	if documented != nil && req.Method != http.MethodHead && status != http.StatusNoContent && status != http.StatusNotModified {
		if len(documented.Content) == 0 && len(body) > 0 {
			v.fail("status %d documents no content, but the response has a %d-byte body", status, len(body))
		}
		streamed := body == nil && mediaType == "text/event-stream"
		if len(documented.Content) > 0 && (streamed || openapi3filter.RegisteredBodyDecoder(mediaType) == nil && !strings.HasSuffix(mediaType, "+json")) {
			// A body kin-openapi cannot decode (a stream): check only that
			// its media type is documented.
			if documented.Content.Get(header.Get("Content-Type")) == nil {
				v.fail("Content-Type %q is not documented for status %d", header.Get("Content-Type"), status)
			}
			opts.ExcludeResponseBody = true
		}
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    req,
			PathParams: route.PathParams,
			Route:      kin,
		},
		Status:  status,
		Header:  header,
		Options: opts,
	}
	input.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		v.fail("%s %s → %d does not match the document (operation %s): %v", req.Method, route.PathTemplate, status, route.OperationID, err)
	}
}

// NewValidatingTransport returns an http.RoundTripper that validates every
// exchange it carries with ValidateResponse and reports failures to
// t.Errorf, so a whole API test suite can assert "every response validates"
// by using a client with this transport. Bodies are read in full and handed
// on unchanged; a text/event-stream response is checked without its body so
// streaming still works. base nil means http.DefaultTransport.
func NewValidatingTransport(t testing.TB, spec *openapi3.T, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{t: t, spec: spec, base: base}
}

type transport struct {
	t    testing.TB
	spec *openapi3.T
	base http.RoundTripper
}

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := tr.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	var body []byte
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		body, err = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("wiretest: reading the response body: %w", err)
		}
		if body == nil {
			body = []byte{}
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	if err := ValidateResponse(tr.spec, req, resp.StatusCode, resp.Header, body); err != nil {
		tr.t.Errorf("wiretest: %s %s → %d: the response does not validate:\n%v\nbody: %s",
			req.Method, req.URL.RequestURI(), resp.StatusCode, err, truncate(body, 2000))
	}
	return resp, nil
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
