package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/openclaw/occ/internal/occ"
)

const (
	nsID  = "ns_0b6e8f5a-1c2d-4e3f-8a9b-0c1d2e3f4a5b"
	agtID = "agt_1b6e8f5a-1c2d-4e3f-9a9b-0c1d2e3f4a5b"
	// canary is a "secret" submitted value that must never be echoed.
	canary = "CANARY-s3cr3t-7f1d"
)

var requestIDPattern = regexp.MustCompile(`^req_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

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

// syncBuffer is a log sink safe for concurrent use.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// stack is a test server: PreAuth → authentication → Body → handler.
type stack struct {
	adm  *Admission
	logs *syncBuffer
	h    http.Handler
}

// echoed is what the echo handler answers with.
type echoed struct {
	OperationID  string            `json:"operationId"`
	PathTemplate string            `json:"pathTemplate"`
	PathParams   map[string]string `json:"pathParams"`
	Body         json.RawMessage   `json:"body,omitempty"`
}

// requireAuth stands for authentication: it rejects requests without
// "Authorization: Bearer ok".
func requireAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer ok" {
			WriteError(w, r, occ.ErrUnauthenticated)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// echo answers with what admission learned and the body it passed on.
func echo(w http.ResponseWriter, r *http.Request) {
	rt := RouteFrom(r.Context())
	if rt == nil {
		WriteError(w, r, occ.E(occ.CodeInternal, "no route"))
		return
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	out := echoed{OperationID: rt.OperationID, PathTemplate: rt.PathTemplate, PathParams: rt.PathParams}
	if len(b) > 0 {
		out.Body = b
	}
	WriteData(w, r, http.StatusOK, out, nil)
}

func newStack(t testing.TB, opts Options, handler http.HandlerFunc) *stack {
	t.Helper()
	logs := &syncBuffer{}
	if opts.Spec == nil {
		opts.Spec = spec(t)
	}
	opts.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	adm, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if handler == nil {
		handler = echo
	}
	return &stack{adm: adm, logs: logs, h: adm.PreAuth(requireAuth(adm.Body(handler)))}
}

// req describes one request of a table test.
type req struct {
	method, target string
	header         map[string]string
	body           string
	contentLength  int64 // when non-zero, overrides the Content-Length
	noAuth         bool
}

func (s *stack) do(t testing.TB, q req) *response {
	t.Helper()
	r := httptest.NewRequest(q.method, q.target, strings.NewReader(q.body))
	if q.body == "" {
		r.Body = http.NoBody
		r.ContentLength = 0
	}
	if q.contentLength != 0 {
		r.ContentLength = q.contentLength
	}
	if !q.noAuth {
		r.Header.Set("Authorization", "Bearer ok")
	}
	if q.body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range q.header {
		if v == "" {
			r.Header.Del(k)
			continue
		}
		r.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, r)
	return parse(t, rec)
}

// response is a recorded response with its envelope decoded.
type response struct {
	status int
	header http.Header
	raw    string
	env    struct {
		Data  json.RawMessage `json:"data"`
		Error *struct {
			Code    occ.Code     `json:"code"`
			Message string       `json:"message"`
			Details []occ.Detail `json:"details"`
		} `json:"error"`
		Meta map[string]any `json:"meta"`
	}
}

func parse(t testing.TB, rec *httptest.ResponseRecorder) *response {
	t.Helper()
	res := &response{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	checkWire(t, res.header)
	if res.raw == "" {
		return res
	}
	if ct := res.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	dec := json.NewDecoder(strings.NewReader(res.raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res.env); err != nil {
		t.Fatalf("body %s: %v", res.raw, err)
	}
	if got := res.env.Meta["requestId"]; got != res.header.Get("X-Request-Id") {
		t.Errorf("meta.requestId %v != X-Request-Id %q", got, res.header.Get("X-Request-Id"))
	}
	if res.env.Error != nil && StatusOf(res.env.Error.Code) != res.status {
		t.Errorf("status %d for code %s", res.status, res.env.Error.Code)
	}
	return res
}

// checkWire asserts the headers every response carries.
func checkWire(t testing.TB, h http.Header) {
	t.Helper()
	if got := h.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control = %q", got)
	}
	if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options = %q", got)
	}
	if got := h.Get("X-Request-Id"); !requestIDPattern.MatchString(got) {
		t.Errorf("X-Request-Id = %q", got)
	}
}

// code returns the error code, or "" for a success.
func (r *response) code() occ.Code {
	if r.env.Error == nil {
		return ""
	}
	return r.env.Error.Code
}

func (r *response) details() []occ.Detail {
	if r.env.Error == nil {
		return nil
	}
	return r.env.Error.Details
}

func (r *response) message() string {
	if r.env.Error == nil {
		return ""
	}
	return r.env.Error.Message
}

func (r *response) echoed(t testing.TB) echoed {
	t.Helper()
	var e echoed
	if err := json.Unmarshal(r.env.Data, &e); err != nil {
		t.Fatalf("data %s: %v", r.env.Data, err)
	}
	return e
}
