package contracttest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/openclaw/occ/internal/httpapi/contract"
	"github.com/openclaw/occ/internal/httpapi/contracttest"
	"github.com/openclaw/occ/internal/occ"
)

var loadSpec = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromFile("testdata/api.yaml")
	if err != nil {
		return nil, err
	}
	return doc, doc.Validate(context.Background())
})

func spec(t testing.TB) *openapi3.T {
	t.Helper()
	doc, err := loadSpec()
	if err != nil {
		t.Fatalf("fixture spec: %v", err)
	}
	return doc
}

// recorder is a testing.TB that records Errorf calls instead of failing.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Helper() {}

func (r *recorder) errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

// server serves the fixture contract correctly, except that getWidget
// answers badly when broken is set.
func server(t *testing.T, broken bool) *httptest.Server {
	t.Helper()
	adm, err := contract.New(contract.Options{Spec: spec(t), DefaultBodyLimit: 256})
	if err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt := contract.RouteFrom(r.Context())
		switch rt.OperationID {
		case "listWidgets":
			contract.WriteData(w, r, http.StatusOK, []map[string]string{{"id": "wdg_0001", "name": "a"}}, map[string]any{"nextPageToken": "t"})
		case "createWidget":
			var in struct{ Name string }
			if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
				contract.WriteError(w, r, err)
				return
			}
			contract.WriteData(w, r, http.StatusCreated, map[string]string{"id": "wdg_0002", "name": in.Name}, nil)
		case "getWidget":
			switch id := rt.PathParams["widgetId"]; {
			case broken:
				contract.WriteData(w, r, http.StatusOK, map[string]string{"id": id}, nil)
			case id == "wdg_dead":
				contract.WriteError(w, r, occ.ErrNotFound)
			case id == "wdg_beef":
				contract.WriteError(w, r, &occ.Error{Code: occ.CodeRateLimited, Message: "Slow down.", RetryAfter: 5})
			default:
				contract.WriteData(w, r, http.StatusOK, map[string]string{"id": id, "name": "a"}, nil)
			}
		case "deleteWidget":
			contract.WriteData(w, r, http.StatusNoContent, nil, nil)
		case "streamEvents":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			for i := range 3 {
				fmt.Fprintf(w, "data: %d\n\n", i)
				w.(http.Flusher).Flush()
			}
		case "getDocument":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"openapi":"3.0.3"}`)
		default:
			contract.WriteError(w, r, fmt.Errorf("unexpected operation %s", rt.OperationID))
		}
	})
	srv := httptest.NewServer(adm.PreAuth(adm.Body(h)))
	t.Cleanup(srv.Close)
	return srv
}

type call struct {
	method, path, contentType, body string
	status                          int
}

func (c call) do(t *testing.T, client *http.Client, base string) {
	t.Helper()
	req, err := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	if c.body == "" {
		req.Body = nil
	}
	if c.contentType != "" {
		req.Header.Set("Content-Type", c.contentType)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", c.method, c.path, err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != c.status {
		t.Errorf("%s %s: status %d, want %d", c.method, c.path, resp.StatusCode, c.status)
	}
}

// TestTransportValidExchanges drives a correct server through the
// validating transport: nothing may be reported.
func TestTransportValidExchanges(t *testing.T) {
	t.Parallel()
	srv := server(t, false)
	rec := &recorder{TB: t}
	client := &http.Client{Transport: contracttest.NewValidatingTransport(rec, spec(t), srv.Client().Transport)}
	calls := []call{
		{method: "GET", path: "/widgets", status: 200},
		{method: "GET", path: "/widgets?pageSize=10", status: 200},
		{method: "GET", path: "/widgets?pageSize=0", status: 400},
		{method: "GET", path: "/widgets?color=red", status: 400},
		{method: "GET", path: "/widgets", body: "{}", contentType: "application/json", status: 400},
		{method: "POST", path: "/widgets", body: `{"name":"a"}`, contentType: "application/json", status: 201},
		{method: "POST", path: "/widgets", body: `{"name":"a"}`, contentType: "text/plain", status: 415},
		{method: "POST", path: "/widgets", body: `{"nom":"a"}`, contentType: "application/json", status: 400},
		{method: "POST", path: "/widgets", body: `{"name":"` + strings.Repeat("a", 300) + `"}`, contentType: "application/json", status: 413},
		{method: "GET", path: "/widgets/wdg_0001", status: 200},
		{method: "GET", path: "/widgets/abc", status: 400},
		{method: "GET", path: "/widgets/wdg_dead", status: 404},
		{method: "GET", path: "/widgets/wdg_beef", status: 429},
		{method: "DELETE", path: "/widgets/wdg_0001", status: 204},
		{method: "PUT", path: "/widgets", status: 405},
		{method: "HEAD", path: "/widgets", status: 405},
		{method: "GET", path: "/nope", status: 404},
		{method: "GET", path: "/events", status: 200},
		{method: "GET", path: "/openapi.json", status: 200},
	}
	for _, c := range calls {
		c.do(t, client, srv.URL)
	}
	for _, e := range rec.errors() {
		t.Errorf("reported for a valid exchange: %s", e)
	}
}

// TestTransportReportsInvalidExchange: a server that answers against the
// contract is reported through t.Errorf, and the caller still gets the body.
func TestTransportReportsInvalidExchange(t *testing.T) {
	t.Parallel()
	srv := server(t, true)
	rec := &recorder{TB: t}
	client := &http.Client{Transport: contracttest.NewValidatingTransport(rec, spec(t), srv.Client().Transport)}
	resp, err := client.Get(srv.URL + "/widgets/wdg_0001")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"wdg_0001"`) {
		t.Errorf("the caller lost the body: %s", b)
	}
	errs := rec.errors()
	if len(errs) != 1 || !strings.Contains(errs[0], "GET /widgets/wdg_0001 → 200") || !strings.Contains(errs[0], "name") {
		t.Errorf("reported %q", errs)
	}
}

const reqID = "req_0b6e8f5a-1c2d-4e3f-8a9b-0c1d2e3f4a5b"

func headers(mutate func(http.Header)) http.Header {
	h := http.Header{
		"Cache-Control":          {"no-store"},
		"X-Content-Type-Options": {"nosniff"},
		"X-Request-Id":           {reqID},
		"Content-Type":           {"application/json; charset=utf-8"},
	}
	if mutate != nil {
		mutate(h)
	}
	return h
}

func errorBody(code, message, details string) string {
	if details != "" {
		details = `,"details":` + details
	}
	return fmt.Sprintf(`{"error":{"code":%q,"message":%q%s},"meta":{"requestId":%q}}`, code, message, details, reqID)
}

func TestValidateResponse(t *testing.T) {
	t.Parallel()
	okWidget := fmt.Sprintf(`{"data":{"id":"wdg_0001","name":"a"},"meta":{"requestId":%q}}`, reqID)
	tests := []struct {
		name         string
		method, path string
		status       int
		header       http.Header
		body         string
		want         string // "" for valid; else a substring of the error
	}{
		{name: "valid success", method: "GET", path: "/widgets/wdg_0001", status: 200, header: headers(nil), body: okWidget},
		{name: "valid list with extra meta", method: "GET", path: "/widgets", status: 200, header: headers(nil),
			body: fmt.Sprintf(`{"data":[],"meta":{"requestId":%q,"nextPageToken":"x"}}`, reqID)},
		{name: "valid error", method: "GET", path: "/widgets/wdg_0001", status: 404, header: headers(nil), body: errorBody("NOT_FOUND", "Not found.", "")},
		{name: "valid error with details", method: "GET", path: "/widgets/x", status: 400, header: headers(nil),
			body: errorBody("INVALID_REQUEST", "Bad.", `[{"path":"/widgetId","code":"INVALID_FORMAT"},{"path":"/a~1b","code":"UNKNOWN_FIELD"}]`)},
		{name: "valid 404 on an unknown route", method: "GET", path: "/nope", status: 404, header: headers(nil), body: errorBody("NOT_FOUND", "Not found.", "")},
		{name: "valid 405", method: "PUT", path: "/widgets", status: 405, header: headers(func(h http.Header) { h.Set("Allow", "GET, POST") }),
			body: errorBody("METHOD_NOT_ALLOWED", "No.", "")},
		{name: "valid 204", method: "DELETE", path: "/widgets/wdg_0001", status: 204, header: headers(func(h http.Header) { h.Del("Content-Type") })},
		{name: "valid stream without a body", method: "GET", path: "/events", status: 200, header: headers(func(h http.Header) { h.Set("Content-Type", "text/event-stream") })},

		{name: "body does not match the schema", method: "GET", path: "/widgets/wdg_0001", status: 200, header: headers(nil),
			body: fmt.Sprintf(`{"data":{"id":"wdg_0001"},"meta":{"requestId":%q}}`, reqID), want: "does not match the document"},
		{name: "status not documented", method: "GET", path: "/widgets", status: 409, header: headers(nil),
			body: errorBody("RESOURCE_CONFLICT", "Conflict.", ""), want: "status is not supported"},
		{name: "no Cache-Control", method: "GET", path: "/widgets/wdg_0001", status: 200, header: headers(func(h http.Header) { h.Del("Cache-Control") }),
			body: okWidget, want: "Cache-Control"},
		{name: "no nosniff", method: "GET", path: "/widgets/wdg_0001", status: 200, header: headers(func(h http.Header) { h.Del("X-Content-Type-Options") }),
			body: okWidget, want: "X-Content-Type-Options"},
		{name: "no request ID", method: "GET", path: "/widgets/wdg_0001", status: 200, header: headers(func(h http.Header) { h.Del("X-Request-Id") }),
			body: okWidget, want: "X-Request-Id"},
		{name: "request ID differs from meta", method: "GET", path: "/widgets/wdg_0001", status: 200,
			header: headers(func(h http.Header) { h.Set("X-Request-Id", "req_1b6e8f5a-1c2d-4e3f-8a9b-0c1d2e3f4a5b") }), body: okWidget, want: "differs"},
		{name: "code and status disagree", method: "GET", path: "/widgets/wdg_0001", status: 400, header: headers(nil),
			body: errorBody("NOT_FOUND", "Not found.", ""), want: "means status 404"},
		{name: "unknown code", method: "GET", path: "/widgets/wdg_0001", status: 500, header: headers(nil),
			body: errorBody("TEAPOT", "Tea.", ""), want: "not a known code"},
		{name: "wrong Content-Type", method: "GET", path: "/widgets/wdg_0001", status: 200, header: headers(func(h http.Header) { h.Set("Content-Type", "text/plain") }),
			body: okWidget, want: "Content-Type"},
		{name: "error that is not JSON", method: "GET", path: "/widgets/wdg_0001", status: 500, header: headers(func(h http.Header) { h.Set("Content-Type", "text/plain") }),
			body: "oops", want: "error response with Content-Type"},
		{name: "success on an unknown route", method: "GET", path: "/nope", status: 200, header: headers(nil), body: okWidget, want: "only 404 is possible"},
		{name: "405 with the wrong Allow", method: "PUT", path: "/widgets", status: 405, header: headers(func(h http.Header) { h.Set("Allow", "GET") }),
			body: errorBody("METHOD_NOT_ALLOWED", "No.", ""), want: `want "GET, POST"`},
		{name: "405 without Allow", method: "PUT", path: "/widgets", status: 405, header: headers(nil),
			body: errorBody("METHOD_NOT_ALLOWED", "No.", ""), want: "405 without Allow"},
		{name: "204 with a body", method: "DELETE", path: "/widgets/wdg_0001", status: 204, header: headers(nil), body: "{}", want: "byte body"},
		{name: "success without meta", method: "GET", path: "/widgets/wdg_0001", status: 200, header: headers(nil),
			body: `{"data":{"id":"wdg_0001","name":"a"}}`, want: "lacks meta"},
		{name: "success without envelope", method: "GET", path: "/widgets/wdg_0001", status: 200, header: headers(nil),
			body: `{"id":"wdg_0001","name":"a"}`, want: "unexpected members"},
		{name: "unknown detail code", method: "GET", path: "/widgets/x", status: 400, header: headers(nil),
			body: errorBody("INVALID_REQUEST", "Bad.", `[{"path":"/widgetId","code":"WRONG"}]`), want: "not a known detail code"},
		{name: "detail path not a pointer", method: "GET", path: "/widgets/x", status: 400, header: headers(nil),
			body: errorBody("INVALID_REQUEST", "Bad.", `[{"path":"widgetId","code":"INVALID_FORMAT"}]`), want: "RFC 6901"},
		{name: "bad pointer escape", method: "GET", path: "/widgets/x", status: 400, header: headers(nil),
			body: errorBody("INVALID_REQUEST", "Bad.", `[{"path":"/a~2","code":"INVALID_FORMAT"}]`), want: "RFC 6901"},
		{name: "control character in the message", method: "GET", path: "/widgets/wdg_0001", status: 404, header: headers(nil),
			body: errorBody("NOT_FOUND", "Not\nfound.", ""), want: "control character"},
		{name: "empty message", method: "GET", path: "/widgets/wdg_0001", status: 404, header: headers(nil),
			body: errorBody("NOT_FOUND", "", ""), want: "code points"},
		{name: "429 without Retry-After", method: "GET", path: "/widgets/wdg_0001", status: 429, header: headers(nil),
			body: errorBody("RATE_LIMITED", "Slow.", ""), want: "Retry-After"},
		{name: "extra member in the error", method: "GET", path: "/widgets/wdg_0001", status: 404, header: headers(nil),
			body: fmt.Sprintf(`{"error":{"code":"NOT_FOUND","message":"x","stack":"…"},"meta":{"requestId":%q}}`, reqID), want: "unexpected members"},
		{name: "extra member in error meta", method: "GET", path: "/widgets/wdg_0001", status: 404, header: headers(nil),
			body: fmt.Sprintf(`{"error":{"code":"NOT_FOUND","message":"x"},"meta":{"requestId":%q,"debug":1}}`, reqID), want: "unexpected members"},
		{name: "body where none is documented", method: "DELETE", path: "/widgets/wdg_0001", status: 202, header: headers(nil), body: okWidget,
			want: "documents no content"},
		{name: "success body against the default error schema", method: "DELETE", path: "/widgets/wdg_0001", status: 200, header: headers(nil), body: okWidget,
			want: "does not match the document"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(tc.method, tc.path, nil)
			var body []byte
			if tc.body != "" {
				body = []byte(tc.body)
			}
			err := contracttest.ValidateResponse(spec(t), req, tc.status, tc.header, body)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid exchange rejected: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("invalid exchange accepted, want an error about %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}
