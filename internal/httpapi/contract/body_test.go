package contract

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/openclaw/occ/internal/occ"
)

// nested returns a putDocument body with depth nested containers in total
// (the top-level object is level 1, "document" level 2, then arrays and
// objects alternate), and the pointer of the container at level depth.
func nested(depth int) (body, deepest string) {
	open, closing := `{"document":`, "}"
	ptr := "/document"
	for level := 2; level <= depth; level++ {
		if level == depth {
			deepest = ptr
		}
		if level%2 == 0 {
			open += `{"a":`
			closing = "}" + closing
			if level < depth {
				ptr += "/a"
			}
		} else {
			open += "["
			closing = "]" + closing
			if level < depth {
				ptr += "/0"
			}
		}
	}
	return open + "1" + closing, deepest
}

func TestNestedHelper(t *testing.T) {
	t.Parallel()
	body, ptr := nested(5)
	if body != `{"document":{"a":[{"a":[1]}]}}` || ptr != "/document/a/0/a" {
		t.Fatalf("nested(5) = %s %s", body, ptr)
	}
}

func TestBody(t *testing.T) {
	t.Parallel()
	s := newStack(t, Options{}, nil)
	ok := occ.Code("")
	ok24, _ := nested(24)
	deep25, deep25Ptr := nested(25)
	deep30, deep30Ptr := nested(25) // the walk stops at the first too-deep value
	deep30 = strings.Replace(deep30, "1", "[[[[[1]]]]]", 1)
	var many, manyDetails []string
	for i := range 40 {
		many = append(many, fmt.Sprintf(`"f%02d":%d`, i, i))
		manyDetails = append(manyDetails, fmt.Sprintf("/f%02d", i))
	}
	var want32 []occ.Detail
	for _, p := range manyDetails[:32] {
		want32 = append(want32, occ.Detail{Path: p, Code: occ.DetailUnknownField})
	}
	ns := "/namespaces"
	item := "/namespaces/" + nsID
	stop := "/namespaces/" + nsID + "/agents/" + agtID + "/stop"
	ct := func(v string) map[string]string { return map[string]string{"Content-Type": v} }
	d := func(path, code string) []occ.Detail { return []occ.Detail{{Path: path, Code: code}} }
	tests := []struct {
		name    string
		req     req
		status  int
		code    occ.Code
		details []occ.Detail
		message string
		echo    string // the body the handler must see
	}{
		// Media type.
		{name: "no Content-Type", req: req{method: "POST", target: ns, body: `{"name":"a"}`, header: ct("")},
			status: 415, code: occ.CodeUnsupportedMediaType, message: "Requests must use application/json."},
		{name: "text/plain", req: req{method: "POST", target: ns, body: `{"name":"a"}`, header: ct("text/plain")},
			status: 415, code: occ.CodeUnsupportedMediaType},
		{name: "a +json type", req: req{method: "PATCH", target: item, body: `{"name":"a"}`, header: ct("application/merge-patch+json")},
			status: 415, code: occ.CodeUnsupportedMediaType},
		{name: "non-UTF-8 charset", req: req{method: "POST", target: ns, body: `{"name":"a"}`, header: ct("application/json; charset=latin1")},
			status: 415, code: occ.CodeUnsupportedMediaType},
		{name: "malformed Content-Type", req: req{method: "POST", target: ns, body: `{"name":"a"}`, header: ct("application/json;;")},
			status: 415, code: occ.CodeUnsupportedMediaType},
		{name: "charset=utf-8", req: req{method: "POST", target: ns, body: `{"name":"a"}`, header: ct("application/json; charset=utf-8")},
			status: 200, code: ok, echo: `{"name":"a"}`},
		{name: "media type is case-insensitive", req: req{method: "POST", target: ns, body: `{"name":"a"}`, header: ct("Application/JSON; Charset=UTF-8")},
			status: 200, code: ok},
		{name: "authentication before the media type", req: req{method: "POST", target: ns, body: `{"name":"a"}`, header: ct("text/plain"), noAuth: true},
			status: 401, code: occ.CodeUnauthenticated},

		// Size.
		{name: "chunked body over the limit", req: req{method: "POST", target: ns, body: `{"name":"` + strings.Repeat("a", 2100) + `"}`, contentLength: -1},
			status: 413, code: occ.CodePayloadTooLarge, message: "The request body is larger than this route accepts."},
		{name: "chunked body within the limit", req: req{method: "POST", target: ns, body: `{"name":"a"}`, contentLength: -1},
			status: 200, code: ok, echo: `{"name":"a"}`},

		// Presence.
		{name: "empty body where required", req: req{method: "POST", target: ns, header: ct("application/json")},
			status: 400, code: occ.CodeInvalidRequest, details: d("", occ.DetailRequired),
			message: "The request does not match the contract: the request body is required."},
		{name: "optional body absent, no Content-Type", req: req{method: "POST", target: stop},
			status: 200, code: ok, echo: ""},
		{name: "optional body present", req: req{method: "POST", target: stop, body: `{"force":true}`},
			status: 200, code: ok, echo: `{"force":true}`},
		{name: "optional body checked", req: req{method: "POST", target: stop, body: `{"force":"yes"}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/force", occ.DetailInvalidType),
			message: "The request does not match the contract: /force must be a boolean."},

		// Syntax.
		{name: "truncated JSON", req: req{method: "POST", target: ns, body: `{"name":`},
			status: 400, code: occ.CodeInvalidRequest, message: "The request body is not valid JSON."},
		{name: "trailing comma", req: req{method: "POST", target: ns, body: `{"name":"a",}`},
			status: 400, code: occ.CodeInvalidRequest, message: "The request body is not valid JSON."},
		{name: "two documents", req: req{method: "POST", target: ns, body: `{"name":"a"} {}`},
			status: 400, code: occ.CodeInvalidRequest, message: "The request body is not valid JSON."},
		{name: "trailing garbage", req: req{method: "POST", target: ns, body: `{"name":"a"}x`},
			status: 400, code: occ.CodeInvalidRequest, message: "The request body is not valid JSON."},
		{name: "trailing whitespace is fine", req: req{method: "POST", target: ns, body: "{\"name\":\"a\"}\r\n\t "},
			status: 200, code: ok},
		{name: "whitespace only", req: req{method: "POST", target: ns, body: "  "},
			status: 400, code: occ.CodeInvalidRequest, message: "The request body is not valid JSON."},
		{name: "invalid UTF-8", req: req{method: "POST", target: ns, body: "{\"name\":\"a\xff\"}"},
			status: 400, code: occ.CodeInvalidRequest, message: "The request body is not valid UTF-8."},
		{name: "byte order mark", req: req{method: "POST", target: ns, body: "\ufeff{\"name\":\"a\"}"},
			status: 400, code: occ.CodeInvalidRequest, message: "The request body is not valid JSON."},

		// Structure.
		{name: "depth 24 is accepted", req: req{method: "PUT", target: "/documents", body: ok24},
			status: 200, code: ok, echo: ok24},
		{name: "depth 25 is too deep", req: req{method: "PUT", target: "/documents", body: deep25},
			status: 400, code: occ.CodeInvalidRequest, details: d(deep25Ptr, occ.DetailTooDeep),
			message: "The request does not match the contract: " + deep25Ptr + " is nested deeper than 24 levels."},
		{name: "only the first too-deep value", req: req{method: "PUT", target: "/documents", body: deep30},
			status: 400, code: occ.CodeInvalidRequest, details: d(deep30Ptr, occ.DetailTooDeep)},
		{name: "depth counts arrays at the top", req: req{method: "PUT", target: "/documents", body: strings.Repeat("[", 25) + strings.Repeat("]", 25)},
			status: 400, code: occ.CodeInvalidRequest, details: d("/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0", occ.DetailTooDeep)},
		{name: "far too deep for the decoder", req: req{method: "PUT", target: "/documents", body: strings.Repeat("[", 20000) + strings.Repeat("]", 20000)},
			status: 400, code: occ.CodeInvalidRequest, details: d(strings.Repeat("/0", 24), occ.DetailTooDeep)},
		{name: "__proto__ nested in an array", req: req{method: "PUT", target: "/documents", body: `{"document":{"list":[{"x":1},{"__proto__":{"admin":true}}]}}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/document/list/1/__proto__", occ.DetailInvalidValue),
			message: "The request does not match the contract: /document/list/1/__proto__ is a forbidden key."},
		{name: "constructor and prototype", req: req{method: "PUT", target: "/documents", body: `{"document":{"a":[[{"prototype":1}]],"constructor":{}}}`},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{
				{Path: "/document/a/0/0/prototype", Code: occ.DetailInvalidValue}, {Path: "/document/constructor", Code: occ.DetailInvalidValue}}},
		{name: "forbidden key at the top", req: req{method: "POST", target: ns, body: `{"name":"a","__proto__":{}}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/__proto__", occ.DetailInvalidValue)},
		{name: "forbidden key under an escaped key", req: req{method: "PUT", target: "/documents", body: `{"document":{"x/y~z":{"constructor":1}}}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/document/x~1y~0z/constructor", occ.DetailInvalidValue)},
		{name: "forbidden words as values are fine", req: req{method: "PUT", target: "/documents", body: `{"document":{"a":"__proto__","b":["constructor"]}}`},
			status: 200, code: ok},
		{name: "duplicate key", req: req{method: "POST", target: ns, body: `{"name":"a","name":"b"}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/name", occ.DetailInvalidValue),
			message: "The request does not match the contract: /name is a duplicate key."},
		{name: "duplicate key nested", req: req{method: "PUT", target: "/documents", body: `{"document":{"a":[{"k":1,"j":2,"k":3}]}}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/document/a/0/k", occ.DetailInvalidValue)},
		{name: "same key in sibling objects is fine", req: req{method: "PUT", target: "/documents", body: `{"document":{"a":{"k":1},"b":{"k":1}}}`},
			status: 200, code: ok},

		// Schema, one detail code each.
		{name: "required", req: req{method: "POST", target: ns, body: `{"description":"d"}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/name", occ.DetailRequired),
			message: "The request does not match the contract: /name is required."},
		{name: "required nested", req: req{method: "POST", target: ns, body: `{"name":"a","owner":{}}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/owner/kind", occ.DetailRequired)},
		{name: "unknown field", req: req{method: "POST", target: ns, body: `{"name":"a","foo":1}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/foo", occ.DetailUnknownField),
			message: "The request does not match the contract: /foo is not an accepted field."},
		{name: "unknown field nested", req: req{method: "POST", target: ns, body: `{"name":"a","owner":{"kind":"k","bar":{}}}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/owner/bar", occ.DetailUnknownField)},
		{name: "read-only field", req: req{method: "PATCH", target: item, body: `{"id":"x"}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/id", occ.DetailUnknownField)},
		{name: "type", req: req{method: "POST", target: ns, body: `{"name":"a","replicas":"2"}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/replicas", occ.DetailInvalidType),
			message: "The request does not match the contract: /replicas must be an integer."},
		{name: "integer with a fraction", req: req{method: "POST", target: ns, body: `{"name":"a","replicas":1.5}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/replicas", occ.DetailInvalidType)},
		{name: "top-level type", req: req{method: "POST", target: ns, body: `["name"]`},
			status: 400, code: occ.CodeInvalidRequest, details: d("", occ.DetailInvalidType),
			message: "The request does not match the contract: the request body must be an object."},
		{name: "null where not nullable", req: req{method: "POST", target: ns, body: `{"name":null}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/name", occ.DetailInvalidType),
			message: "The request does not match the contract: /name must not be null."},
		{name: "null where nullable", req: req{method: "PATCH", target: item, body: `{"description":null}`},
			status: 200, code: ok, echo: `{"description":null}`},
		{name: "format", req: req{method: "POST", target: ns, body: `{"name":"a","expiresAt":"2026-13-01T00:00:00Z"}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/expiresAt", occ.DetailInvalidFmt),
			message: "The request does not match the contract: /expiresAt must be a valid date-time."},
		{name: "pattern", req: req{method: "POST", target: ns, body: `{"name":"Upper"}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/name", occ.DetailInvalidFmt),
			message: "The request does not match the contract: /name does not have the required format."},
		{name: "maxLength", req: req{method: "POST", target: ns, body: `{"name":"a","description":"` + strings.Repeat("é", 41) + `"}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/description", occ.DetailTooLong),
			message: "The request does not match the contract: /description must be at most 40 characters."},
		{name: "maxLength counts characters", req: req{method: "POST", target: ns, body: `{"name":"a","description":"` + strings.Repeat("é", 40) + `"}`},
			status: 200, code: ok},
		{name: "maxLength in a map value", req: req{method: "POST", target: ns, body: `{"name":"a","labels":{"k/1":"0123456789x"}}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/labels/k~11", occ.DetailTooLong)},
		{name: "enum", req: req{method: "POST", target: ns, body: `{"name":"a","mode":"shared"}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/mode", occ.DetailInvalidValue),
			message: `The request does not match the contract: /mode must be one of "embedded", "dedicated".`},
		{name: "maximum", req: req{method: "POST", target: ns, body: `{"name":"a","replicas":6}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/replicas", occ.DetailInvalidValue),
			message: "The request does not match the contract: /replicas must be at most 5."},
		{name: "minimum", req: req{method: "POST", target: ns, body: `{"name":"a","replicas":-1}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/replicas", occ.DetailInvalidValue),
			message: "The request does not match the contract: /replicas must be at least 0."},
		{name: "minLength", req: req{method: "POST", target: ns, body: `{"name":""}`},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/name", Code: occ.DetailInvalidFmt}, {Path: "/name", Code: occ.DetailInvalidValue}}},
		{name: "maxItems and item problems", req: req{method: "POST", target: ns, body: `{"name":"a","tags":["a","b","c",4]}`},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{
				{Path: "/tags", Code: occ.DetailInvalidValue}, {Path: "/tags/3", Code: occ.DetailInvalidType}}},
		{name: "minProperties", req: req{method: "PATCH", target: item, body: `{}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("", occ.DetailInvalidValue),
			message: "The request does not match the contract: the request body must have at least 1 fields."},
		{name: "no defaults, no coercion: a valid body passes untouched", req: req{method: "POST", target: ns, body: `{"name":"a","replicas":2,"tags":[]}`},
			status: 200, code: ok, echo: `{"name":"a","replicas":2,"tags":[]}`},

		// Discriminated union: only the chosen shape's problems.
		{name: "union: chosen shape's problems", req: req{method: "POST", target: ns, body: `{"name":"a","auth":{"method":"apiKey","secretId":"x","extra":1}}`},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{
				{Path: "/auth/extra", Code: occ.DetailUnknownField}, {Path: "/auth/secretId", Code: occ.DetailInvalidFmt}}},
		{name: "union: discriminator missing", req: req{method: "POST", target: ns, body: `{"name":"a","auth":{"secretId":"sec_1"}}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/auth/method", occ.DetailRequired)},
		{name: "union: unknown kind", req: req{method: "POST", target: ns, body: `{"name":"a","auth":{"method":"password"}}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/auth/method", occ.DetailInvalidValue)},
		{name: "union: valid", req: req{method: "POST", target: ns, body: `{"name":"a","auth":{"method":"oauth","clientId":"c"}}`},
			status: 200, code: ok},

		// Messages, ordering and caps.
		{name: "three problems and N more", req: req{method: "POST", target: ns, body: `{"name":"a","a5":5,"a1":1,"a4":4,"a2":2,"a3":3}`},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{
				{Path: "/a1", Code: occ.DetailUnknownField}, {Path: "/a2", Code: occ.DetailUnknownField}, {Path: "/a3", Code: occ.DetailUnknownField},
				{Path: "/a4", Code: occ.DetailUnknownField}, {Path: "/a5", Code: occ.DetailUnknownField}},
			message: "The request does not match the contract: /a1 is not an accepted field; /a2 is not an accepted field; /a3 is not an accepted field; and 2 more."},
		{name: "mixed problems sorted by path then code", req: req{method: "POST", target: ns, body: `{"replicas":9,"mode":"x","zz":1}`},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{
				{Path: "/mode", Code: occ.DetailInvalidValue}, {Path: "/name", Code: occ.DetailRequired},
				{Path: "/replicas", Code: occ.DetailInvalidValue}, {Path: "/zz", Code: occ.DetailUnknownField}},
			message: `The request does not match the contract: /mode must be one of "embedded", "dedicated"; /name is required; /replicas must be at most 5; and 1 more.`},
		{name: "details cap at 32", req: req{method: "POST", target: ns, body: `{"name":"a",` + strings.Join(many, ",") + `}`},
			status: 400, code: occ.CodeInvalidRequest, details: want32,
			message: "The request does not match the contract: /f00 is not an accepted field; /f01 is not an accepted field; /f02 is not an accepted field; and 37 more."},
		{name: "pointer escaping", req: req{method: "POST", target: ns, body: `{"name":"a","a/b~c":1,"~":2,"":3}`},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{
				{Path: "/", Code: occ.DetailUnknownField}, {Path: "/a~1b~0c", Code: occ.DetailUnknownField}, {Path: "/~0", Code: occ.DetailUnknownField}}},
		{name: "control characters in a key", req: req{method: "POST", target: ns, body: `{"name":"a","x\u0007\u202ey\n":1}`},
			status: 400, code: occ.CodeInvalidRequest, details: d("/x\u0007\u202ey\n", occ.DetailUnknownField),
			message: "The request does not match the contract: /x??y? is not an accepted field."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := s.do(t, tc.req)
			if res.status != tc.status || res.code() != tc.code {
				t.Fatalf("got %d %s, want %d %s: %s", res.status, res.code(), tc.status, tc.code, res.raw)
			}
			if tc.details != nil || len(res.details()) > 0 {
				if !slices.Equal(res.details(), tc.details) {
					t.Errorf("details = %v, want %v", res.details(), tc.details)
				}
			}
			if tc.message != "" && res.message() != tc.message {
				t.Errorf("message = %q\n           want %q", res.message(), tc.message)
			}
			checkMessage(t, res.message())
			if tc.code == ok && tc.echo != "" {
				if got := string(res.echoed(t).Body); got != tc.echo {
					t.Errorf("handler saw body %s, want %s", got, tc.echo)
				}
			}
		})
	}
}

// checkMessage asserts the message rules: at most 256 code points, no
// control or format characters.
func checkMessage(t testing.TB, msg string) {
	t.Helper()
	if n := len([]rune(msg)); n > 256 {
		t.Errorf("message has %d code points", n)
	}
	for _, r := range msg {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			t.Errorf("message has control character %U: %q", r, msg)
		}
	}
}

// TestBodyLimits checks which limit applies: BodyLimits by operationId, then
// the x-occ-body-limit extension, then DefaultBodyLimit.
func TestBodyLimits(t *testing.T) {
	t.Parallel()
	s := newStack(t, Options{DefaultBodyLimit: 100, BodyLimits: map[string]int64{"putDocument": 300}}, nil)
	pad := func(target, method string, size int, tmpl string) req {
		body := fmt.Sprintf(tmpl, "")
		body = fmt.Sprintf(tmpl, strings.Repeat("a", size-len(body)))
		if len(body) != size {
			t.Fatalf("pad: %d", len(body))
		}
		return req{method: method, target: target, body: body}
	}
	item := "/namespaces/" + nsID
	tests := []struct {
		name   string
		req    req
		status int
	}{
		{"BodyLimits over the extension: at the limit", pad("/documents", "PUT", 300, `{"document":{"a":"%s"}}`), 200},
		{"BodyLimits over the extension: one over", pad("/documents", "PUT", 301, `{"document":{"a":"%s"}}`), 413},
		{"extension over the default: far above the default", pad("/namespaces", "POST", 2048, `{"name":"a","description":"%s"}`), 400},
		{"extension over the default: one over", pad("/namespaces", "POST", 2049, `{"name":"a","description":"%s"}`), 413},
		{"default: at the limit", pad(item, "PATCH", 100, `{"name":"%s"}`), 400},
		{"default: one over", pad(item, "PATCH", 101, `{"name":"%s"}`), 413},
	}
	for _, tc := range tests {
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/chunked=%v", tc.name, chunked), func(t *testing.T) {
				t.Parallel()
				q := tc.req
				if chunked {
					q.contentLength = -1
				}
				res := s.do(t, q)
				if res.status != tc.status {
					t.Fatalf("status %d, want %d: %s", res.status, tc.status, res.raw)
				}
			})
		}
	}
}

// TestNoValueInMessages submits a canary in every position a value can fail
// and checks it never comes back.
func TestNoValueInMessages(t *testing.T) {
	t.Parallel()
	s := newStack(t, Options{}, nil)
	c := canary
	bodies := []string{
		`{"name":"` + c + `"}`,
		`{"name":"a","description":"` + c + c + c + `"}`,
		`{"name":"a","mode":"` + c + `"}`,
		`{"name":"a","expiresAt":"` + c + `"}`,
		`{"name":"a","replicas":"` + c + `"}`,
		`{"name":"a","tags":["` + c + `"]}`,
		`{"name":"a","labels":{"k":"` + c + `"}}`,
		`{"name":"a","owner":"` + c + `"}`,
		`{"name":"a","auth":{"method":"` + c + `"}}`,
		`{"name":"a","auth":{"method":"apiKey","secretId":"` + c + `"}}`,
		`{"name":"` + c + `","name":"` + c + `"}`,
		`{"name":"` + c,
		`{"name":"` + c + "\xff" + `"}`,
	}
	var reqs []req
	for _, b := range bodies {
		reqs = append(reqs, req{method: "POST", target: "/namespaces", body: b})
	}
	reqs = append(reqs,
		req{method: "GET", target: "/namespaces?pageToken=" + c},
		req{method: "GET", target: "/namespaces?since=" + c},
		req{method: "GET", target: "/namespaces?mode=" + c},
		req{method: "GET", target: "/namespaces?pageSize=" + c},
		req{method: "GET", target: "/namespaces?label=" + c},
		req{method: "GET", target: "/namespaces/" + c},
		req{method: "GET", target: "/namespaces/ns_" + c + "/agents/" + c + "/stop"},
	)
	for _, q := range reqs {
		res := s.do(t, q)
		if res.status < 400 {
			t.Errorf("%s %s %s: status %d", q.method, q.target, q.body, res.status)
		}
		if strings.Contains(res.raw, c[:10]) {
			t.Errorf("%s %s %s: the submitted value came back: %s", q.method, q.target, q.body, res.raw)
		}
	}
}

func TestBodyPassThrough(t *testing.T) {
	t.Parallel()
	s := newStack(t, Options{}, nil)
	// An operation without a requestBody passes Body untouched.
	if res := s.do(t, req{method: "GET", target: "/namespaces"}); res.status != 200 {
		t.Fatalf("GET: %d %s", res.status, res.raw)
	}
	// Body without PreAuth in front fails closed.
	rec := httptest.NewRecorder()
	s.adm.Body(http.HandlerFunc(echo)).ServeHTTP(rec, httptest.NewRequest("POST", "/namespaces", strings.NewReader(`{}`)))
	res := parse(t, rec)
	if res.status != 500 || res.code() != occ.CodeInternal {
		t.Fatalf("Body alone: %d %s", res.status, res.raw)
	}
}

func TestLoneSurrogate(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]bool{
		`"plain"`:                 false,
		`"\u00e9"`:                false,
		`"\ud83d\ude00"`:          false, // a pair: 😀
		`"\ud83d"`:                true,
		`"\ude00"`:                true,
		`"\ud83d\u0041"`:          true,
		`"x\ud83d"`:               true,
		`"\\ud83d"`:               false, // an escaped backslash, then text
		`"\\\ud83d"`:              true,
		`, "a": "\udc00", "b": 1`: true,
	} {
		if got := loneSurrogate([]byte(raw)); got != want {
			t.Errorf("loneSurrogate(%s) = %v, want %v", raw, got, want)
		}
	}
}
