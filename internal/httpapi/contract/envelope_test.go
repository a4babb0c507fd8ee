package contract

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/occ"
)

func TestStatusOf(t *testing.T) {
	t.Parallel()
	want := map[occ.Code]int{
		occ.CodeInvalidRequest:         400,
		occ.CodeUnauthenticated:        401,
		occ.CodeForbidden:              403,
		occ.CodeNotFound:               404,
		occ.CodeMethodNotAllowed:       405,
		occ.CodeResourceConflict:       409,
		occ.CodeAgentDeleting:          409,
		occ.CodeNamespaceNotReady:      409,
		occ.CodeNamespaceNotEmpty:      409,
		occ.CodeInstallationExists:     409,
		occ.CodeCredentialGatewayUnset: 409,
		occ.CodePreconditionFailed:     412,
		occ.CodePayloadTooLarge:        413,
		occ.CodeUnsupportedMediaType:   415,
		occ.CodeRateLimited:            429,
		occ.CodeInternal:               500,
		occ.CodeNotImplemented:         501,
		occ.CodeDependencyUnavailable:  503,
		occ.CodeUnknownOutcome:         503,
		"SOMETHING_ELSE":               500,
		"":                             500,
	}
	for code, status := range want {
		if got := StatusOf(code); got != status {
			t.Errorf("StatusOf(%q) = %d, want %d", code, got, status)
		}
	}
	for code := range defaultMessages {
		if _, ok := want[code]; !ok {
			t.Errorf("code %s has a default message but no status test", code)
		}
	}
}

// writeErrorThroughPreAuth runs WriteError inside PreAuth, so the request ID and logger are
// admission's.
func writeErrorThroughPreAuth(t *testing.T, prepare func(http.ResponseWriter), err error) (*response, string) {
	t.Helper()
	s := newStack(t, Options{}, func(w http.ResponseWriter, r *http.Request) {
		if prepare != nil {
			prepare(w)
		}
		WriteError(w, r, err)
	})
	res := s.do(t, req{method: "GET", target: "/namespaces"})
	checkMessage(t, res.message())
	return res, s.logs.String()
}

func TestWriteError(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 300)
	var manyDetails []occ.Detail
	for i := range 40 {
		manyDetails = append(manyDetails, occ.Detail{Path: fmt.Sprintf("/f%02d", i), Code: occ.DetailRequired})
	}
	tests := []struct {
		name    string
		err     error
		prepare func(http.ResponseWriter)
		status  int
		code    occ.Code
		message string
		logged  []string // substrings of the log; nil means nothing logged
		header  map[string]string
		details int
	}{
		{name: "plain error", err: errors.New("db password=" + canary), status: 500, code: occ.CodeInternal,
			message: occ.MsgInternal, logged: []string{canary, "internal error"}},
		{name: "nil error", err: nil, status: 500, code: occ.CodeInternal, message: occ.MsgInternal, logged: []string{"<nil error>"}},
		{name: "wrapped occ error", err: fmt.Errorf("loading: %w", occ.ErrNotFound), status: 404, code: occ.CodeNotFound, message: occ.MsgNotFound},
		{name: "unknown code", err: occ.E("TEAPOT", canary), status: 500, code: occ.CodeInternal, message: occ.MsgInternal, logged: []string{"TEAPOT"}},
		{name: "internal with cause", err: occ.Wrap(occ.CodeInternal, occ.MsgInternal, errors.New(canary)), status: 500,
			code: occ.CodeInternal, message: occ.MsgInternal, logged: []string{canary, "INTERNAL_ERROR"}},
		{name: "dependency with cause", err: occ.Unavailable(errors.New("dial tcp: " + canary)), status: 503,
			code: occ.CodeDependencyUnavailable, message: occ.MsgDependency, logged: []string{canary, "DEPENDENCY_UNAVAILABLE"}},
		{name: "unknown outcome with cause", err: occ.Wrap(occ.CodeUnknownOutcome, "The write could not be confirmed.", errors.New(canary)), status: 503,
			code: occ.CodeUnknownOutcome, logged: []string{canary}},
		{name: "conflict with cause is not logged", err: occ.Wrap(occ.CodeResourceConflict, "Name taken.", errors.New(canary)), status: 409,
			code: occ.CodeResourceConflict, message: "Name taken."},
		{name: "rate limited", err: &occ.Error{Code: occ.CodeRateLimited, Message: "Slow down.", RetryAfter: 30}, status: 429,
			code: occ.CodeRateLimited, header: map[string]string{"Retry-After": "30"}},
		{name: "rate limited without a delay", err: occ.E(occ.CodeRateLimited, "Slow down."), status: 429,
			code: occ.CodeRateLimited, header: map[string]string{"Retry-After": "1"}},
		{name: "405 keeps Allow", err: occ.E(occ.CodeMethodNotAllowed, msgMethodNotAllowed),
			prepare: func(w http.ResponseWriter) { w.Header().Set("Allow", "GET, POST") },
			status:  405, code: occ.CodeMethodNotAllowed, header: map[string]string{"Allow": "GET, POST"}},
		{name: "empty message gets the code's", err: &occ.Error{Code: occ.CodeForbidden}, status: 403, code: occ.CodeForbidden, message: occ.MsgForbidden},
		{name: "message capped", err: occ.E(occ.CodeInvalidRequest, long), status: 400, code: occ.CodeInvalidRequest, message: long[:512]},
		{name: "control characters replaced", err: occ.E(occ.CodeResourceConflict, "a\x00b\nc\u200bd\u2028e\x7f"), status: 409,
			code: occ.CodeResourceConflict, message: "a?b?c?d?e?"},
		{name: "details capped", err: occ.Invalid("Bad.", manyDetails...), status: 400, code: occ.CodeInvalidRequest, details: 32},
		{name: "details capped without occ.Invalid", err: &occ.Error{Code: occ.CodeInvalidRequest, Message: "Bad.", Details: manyDetails}, status: 400,
			code: occ.CodeInvalidRequest, details: 32},
		{name: "header set by the handler is replaced", err: occ.ErrForbidden,
			prepare: func(w http.ResponseWriter) {
				w.Header().Set("Content-Type", "text/html")
				w.Header().Set("Cache-Control", "public")
			},
			status: 403, code: occ.CodeForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, logs := writeErrorThroughPreAuth(t, tc.prepare, tc.err)
			if res.status != tc.status || res.code() != tc.code {
				t.Fatalf("got %d %s, want %d %s", res.status, res.code(), tc.status, tc.code)
			}
			if tc.message != "" && res.message() != tc.message {
				t.Errorf("message = %q, want %q", res.message(), tc.message)
			}
			if strings.Contains(res.raw, canary) {
				t.Errorf("cause reached the response: %s", res.raw)
			}
			for k, v := range tc.header {
				if got := res.header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if tc.code != occ.CodeRateLimited && res.header.Get("Retry-After") != "" {
				t.Error("Retry-After on a non-429")
			}
			if got := len(res.details()); got != tc.details {
				t.Errorf("%d details, want %d", got, tc.details)
			}
			if tc.logged == nil && logs != "" {
				t.Errorf("unexpected log: %s", logs)
			}
			for _, want := range append(tc.logged, res.header.Get("X-Request-Id")) {
				if tc.logged != nil && !strings.Contains(logs, want) {
					t.Errorf("log lacks %q: %s", want, logs)
				}
			}
		})
	}
}

func TestWriteErrorDetailPaths(t *testing.T) {
	t.Parallel()
	long := "/" + strings.Repeat("a", 300) + "/" + strings.Repeat("b", 300)
	res, _ := writeErrorThroughPreAuth(t, nil, occ.Invalid("Bad.", occ.Detail{Path: long, Code: occ.DetailTooLong}))
	if got := res.details(); len(got) != 1 || got[0].Path != "/"+strings.Repeat("a", 300) {
		t.Errorf("details = %v", got)
	}
}

func TestWriteOutsideAdmission(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/x", nil)
	WriteError(rec, r, occ.ErrForbidden)
	res := parse(t, rec)
	if res.status != 403 {
		t.Fatalf("status %d", res.status)
	}
	rec = httptest.NewRecorder()
	WriteData(rec, r, http.StatusOK, []int{1}, nil)
	if res := parse(t, rec); string(res.env.Data) != "[1]" {
		t.Fatalf("data %s", res.env.Data)
	}
}

func TestWriteData(t *testing.T) {
	t.Parallel()
	type item struct {
		Name string `json:"name"`
	}
	tests := []struct {
		name   string
		status int
		data   any
		meta   map[string]any
		body   string // data as JSON; "" for no body
		token  any
	}{
		{name: "object", status: 201, data: item{"a<b>"}, body: `{"name":"a<b>"}`},
		{name: "list with a page token", status: 200, data: []item{{"a"}}, meta: map[string]any{"nextPageToken": "t1", "requestId": "req_forged"},
			body: `[{"name":"a"}]`, token: "t1"},
		{name: "null", status: 200, data: nil, body: "null"},
		{name: "no content", status: 204, data: item{"ignored"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStack(t, Options{}, func(w http.ResponseWriter, r *http.Request) {
				WriteData(w, r, tc.status, tc.data, tc.meta)
			})
			res := s.do(t, req{method: "GET", target: "/namespaces"})
			if res.status != tc.status {
				t.Fatalf("status %d: %s", res.status, res.raw)
			}
			if tc.body == "" {
				if res.raw != "" {
					t.Fatalf("body %q on %d", res.raw, tc.status)
				}
				return
			}
			if string(res.env.Data) != tc.body {
				t.Errorf("data = %s, want %s", res.env.Data, tc.body)
			}
			if res.env.Meta["nextPageToken"] != tc.token {
				t.Errorf("meta = %v", res.env.Meta)
			}
		})
	}
}

func TestWriteDataUnencodable(t *testing.T) {
	t.Parallel()
	s := newStack(t, Options{}, func(w http.ResponseWriter, r *http.Request) {
		WriteData(w, r, http.StatusOK, map[string]any{"c": make(chan int)}, nil)
	})
	res := s.do(t, req{method: "GET", target: "/namespaces"})
	if res.status != 500 || res.code() != occ.CodeInternal {
		t.Fatalf("got %d %s", res.status, res.raw)
	}
	if !strings.Contains(s.logs.String(), "chan") {
		t.Errorf("encoding failure not logged: %s", s.logs.String())
	}
}
