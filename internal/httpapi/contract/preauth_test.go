package contract

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/occ"
)

func TestPreAuth(t *testing.T) {
	t.Parallel()
	s := newStack(t, Options{}, nil)
	ok := occ.Code("")
	tests := []struct {
		name    string
		req     req
		status  int
		code    occ.Code
		details []occ.Detail
		message string // exact when set
		allow   string
		opID    string
	}{
		// Routing.
		{name: "unknown path, unauthenticated", req: req{method: "GET", target: "/nope", noAuth: true},
			status: 404, code: occ.CodeNotFound, message: occ.MsgNotFound},
		{name: "too many segments", req: req{method: "GET", target: "/namespaces/" + nsID + "/extra"},
			status: 404, code: occ.CodeNotFound},
		{name: "trailing slash", req: req{method: "GET", target: "/namespaces/"},
			status: 400, code: occ.CodeInvalidRequest},
		{name: "dot-dot segment", req: req{method: "GET", target: "/namespaces/../namespaces"},
			status: 400, code: occ.CodeInvalidRequest},
		{name: "empty segment before auth", req: req{method: "GET", target: "//namespaces", noAuth: true},
			status: 400, code: occ.CodeInvalidRequest},
		{name: "method not allowed on collection", req: req{method: "PUT", target: "/namespaces", noAuth: true},
			status: 405, code: occ.CodeMethodNotAllowed, allow: "GET, POST"},
		{name: "method not allowed on item", req: req{method: "POST", target: "/namespaces/" + nsID},
			status: 405, code: occ.CodeMethodNotAllowed, allow: "DELETE, GET, PATCH"},
		{name: "literal segment beats parameter", req: req{method: "GET", target: "/namespaces/current"},
			status: 200, code: ok, opID: "currentNamespace"},
		{name: "literal path, other method falls back to none", req: req{method: "DELETE", target: "/namespaces/current"},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/namespaceId", Code: occ.DetailInvalidFmt}}},
		{name: "valid ID", req: req{method: "GET", target: "/namespaces/" + nsID},
			status: 200, code: ok, opID: "getNamespace"},

		// Path parameters, before authentication.
		{name: "bad ID prefix, unauthenticated", req: req{method: "GET", target: "/namespaces/agt_0b6e8f5a-1c2d-4e3f-8a9b-0c1d2e3f4a5b", noAuth: true},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/namespaceId", Code: occ.DetailInvalidFmt}},
			message: "The request does not match the contract: /namespaceId has an invalid format."},
		{name: "good ID, unauthenticated", req: req{method: "GET", target: "/namespaces/" + nsID, noAuth: true},
			status: 401, code: occ.CodeUnauthenticated},
		{name: "uppercase UUID", req: req{method: "GET", target: "/namespaces/" + strings.ToUpper(nsID)},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/namespaceId", Code: occ.DetailInvalidFmt}}},
		{name: "escaped slash in a parameter", req: req{method: "GET", target: "/namespaces/ns%2F0b6e8f5a"},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/namespaceId", Code: occ.DetailInvalidFmt}}},
		{name: "two bad IDs, sorted", req: req{method: "POST", target: "/namespaces/ns_1/agents/agt_2/stop", noAuth: true},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{
				{Path: "/agentId", Code: occ.DetailInvalidFmt}, {Path: "/namespaceId", Code: occ.DetailInvalidFmt}}},
		{name: "bad ID with unknown query: path first", req: req{method: "GET", target: "/namespaces/x?foo=1", noAuth: true},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/namespaceId", Code: occ.DetailInvalidFmt}}},

		// Content-Length over the limit: 413 before anything is read, even
		// before authentication and on bodyless routes.
		{name: "huge Content-Length, tiny body", req: req{method: "POST", target: "/namespaces", body: "{}", contentLength: 10 << 20, noAuth: true},
			status: 413, code: occ.CodePayloadTooLarge},
		{name: "Content-Length one over the limit", req: req{method: "POST", target: "/namespaces", body: "{}", contentLength: 2049},
			status: 413, code: occ.CodePayloadTooLarge},
		{name: "huge Content-Length on a bodyless route", req: req{method: "GET", target: "/namespaces", body: "{}", contentLength: 1 << 30},
			status: 413, code: occ.CodePayloadTooLarge},

		// Query parameters.
		{name: "no query", req: req{method: "GET", target: "/namespaces"}, status: 200, code: ok, opID: "listNamespaces"},
		{name: "valid query", req: req{method: "GET", target: "/namespaces?pageSize=1000&pageToken=abc&label=a&label=b&archived=false&since=2026-11-30T12:00:00.000Z&mode=embedded"},
			status: 200, code: ok},
		{name: "unknown query parameter", req: req{method: "GET", target: "/namespaces?foo=1", noAuth: true},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/foo", Code: occ.DetailUnknownField}},
			message: "The request does not match the contract: /foo is not an accepted query parameter."},
		{name: "query on a route that takes none", req: req{method: "GET", target: "/namespaces/current?x"},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/x", Code: occ.DetailUnknownField}}},
		{name: "unknown names escaped and sorted", req: req{method: "GET", target: "/namespaces?z=1&a%2Fb=2&pageSize=x"},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{
				{Path: "/a~1b", Code: occ.DetailUnknownField}, {Path: "/pageSize", Code: occ.DetailInvalidType}, {Path: "/z", Code: occ.DetailUnknownField}}},
		{name: "integer: letters", req: req{method: "GET", target: "/namespaces?pageSize=abc"},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/pageSize", Code: occ.DetailInvalidType}},
			message: "The request does not match the contract: /pageSize must be an integer."},
		{name: "integer: leading zero", req: req{method: "GET", target: "/namespaces?pageSize=05"},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/pageSize", Code: occ.DetailInvalidType}}},
		{name: "integer: plus sign", req: req{method: "GET", target: "/namespaces?pageSize=%2B5"},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/pageSize", Code: occ.DetailInvalidType}}},
		{name: "integer: exponent", req: req{method: "GET", target: "/namespaces?pageSize=1e3"},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/pageSize", Code: occ.DetailInvalidType}}},
		{name: "integer: fraction", req: req{method: "GET", target: "/namespaces?pageSize=5.0"},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/pageSize", Code: occ.DetailInvalidType}}},
		{name: "integer: space", req: req{method: "GET", target: "/namespaces?pageSize=%205"},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/pageSize", Code: occ.DetailInvalidType}}},
		{name: "integer: empty", req: req{method: "GET", target: "/namespaces?pageSize="},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/pageSize", Code: occ.DetailInvalidType}}},
		{name: "integer: below minimum", req: req{method: "GET", target: "/namespaces?pageSize=0"},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/pageSize", Code: occ.DetailInvalidValue}},
			message: "The request does not match the contract: /pageSize must be at least 1."},
		{name: "integer: above maximum", req: req{method: "GET", target: "/namespaces?pageSize=1001"},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/pageSize", Code: occ.DetailInvalidValue}},
			message: "The request does not match the contract: /pageSize must be at most 1000."},
		{name: "single-valued parameter repeated", req: req{method: "GET", target: "/namespaces?pageSize=1&pageSize=2"},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/pageSize", Code: occ.DetailInvalidValue}},
			message: "The request does not match the contract: /pageSize must not be repeated."},
		{name: "string too long", req: req{method: "GET", target: "/namespaces?pageToken=" + strings.Repeat("x", 17)},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/pageToken", Code: occ.DetailTooLong}}},
		{name: "format", req: req{method: "GET", target: "/namespaces?since=yesterday"},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/since", Code: occ.DetailInvalidFmt}}},
		{name: "enum", req: req{method: "GET", target: "/namespaces?mode=shared"},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/mode", Code: occ.DetailInvalidValue}},
			message: `The request does not match the contract: /mode must be one of "embedded", "dedicated".`},
		{name: "boolean is exact", req: req{method: "GET", target: "/namespaces?archived=1"},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/archived", Code: occ.DetailInvalidType}}},
		{name: "array item pattern", req: req{method: "GET", target: "/namespaces?label=a&label=B1"},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/label/1", Code: occ.DetailInvalidFmt}}},
		{name: "array too long", req: req{method: "GET", target: "/namespaces?label=a&label=b&label=c&label=d"},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/label", Code: occ.DetailInvalidValue}}},
		{name: "required parameter missing", req: req{method: "GET", target: "/search"},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/q", Code: occ.DetailRequired}},
			message: "The request does not match the contract: /q is required."},
		{name: "required parameter empty", req: req{method: "GET", target: "/search?q="},
			status: 400, code: occ.CodeInvalidRequest, details: []occ.Detail{{Path: "/q", Code: occ.DetailInvalidValue}}},
		{name: "required parameter present", req: req{method: "GET", target: "/search?q=x"}, status: 200, code: ok},
		{name: "malformed query", req: req{method: "GET", target: "/namespaces?pageSize=%zz"},
			status: 400, code: occ.CodeInvalidRequest, message: "The query string is malformed."},
		{name: "semicolon in query", req: req{method: "GET", target: "/namespaces?pageSize=1;x=2"},
			status: 400, code: occ.CodeInvalidRequest, message: "The query string is malformed."},

		// A body on a route that takes none.
		{name: "body on a bodyless route", req: req{method: "GET", target: "/namespaces", body: "{}", noAuth: true},
			status: 400, code: occ.CodeInvalidRequest, message: "This route does not accept a request body."},
		{name: "Transfer-Encoding on a bodyless route", req: req{method: "DELETE", target: "/namespaces/" + nsID, header: map[string]string{"Transfer-Encoding": "chunked"}},
			status: 400, code: occ.CodeInvalidRequest, message: "This route does not accept a request body."},
		{name: "no body on a bodyless route", req: req{method: "DELETE", target: "/namespaces/" + nsID}, status: 200, code: ok},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := s.do(t, tc.req)
			if res.status != tc.status || res.code() != tc.code {
				t.Fatalf("got %d %s, want %d %s: %s", res.status, res.code(), tc.status, tc.code, res.raw)
			}
			if tc.code == occ.CodeInvalidRequest && tc.details != nil || len(res.details()) > 0 {
				if !slices.Equal(res.details(), tc.details) {
					t.Errorf("details = %v, want %v", res.details(), tc.details)
				}
			}
			if tc.message != "" && res.message() != tc.message {
				t.Errorf("message = %q, want %q", res.message(), tc.message)
			}
			if got := res.header.Get("Allow"); got != tc.allow {
				t.Errorf("Allow = %q, want %q", got, tc.allow)
			}
			if tc.opID != "" {
				if got := res.echoed(t).OperationID; got != tc.opID {
					t.Errorf("operationId = %q, want %q", got, tc.opID)
				}
			}
		})
	}
}

func TestPreAuthRouteAndRequestID(t *testing.T) {
	t.Parallel()
	var gotID string
	var gotRoute *Route
	s := newStack(t, Options{}, func(w http.ResponseWriter, r *http.Request) {
		gotID = RequestID(r.Context())
		gotRoute = RouteFrom(r.Context())
		WriteData(w, r, http.StatusAccepted, map[string]string{"ok": "yes"}, nil)
	})
	const client = "req_00000000-0000-4000-8000-000000000000"
	res := s.do(t, req{method: "POST", target: "/namespaces/" + nsID + "/agents/" + agtID + "/stop",
		header: map[string]string{"X-Request-Id": client}})
	if res.status != http.StatusAccepted {
		t.Fatalf("status %d: %s", res.status, res.raw)
	}
	id := res.header.Get("X-Request-Id")
	if id == client || gotID != id {
		t.Errorf("request ID: handler saw %q, header %q, client sent %q", gotID, id, client)
	}
	want := &Route{OperationID: "stopAgent", PathTemplate: "/namespaces/{namespaceId}/agents/{agentId}/stop",
		PathParams: map[string]string{"namespaceId": nsID, "agentId": agtID}}
	if gotRoute == nil || gotRoute.OperationID != want.OperationID || gotRoute.PathTemplate != want.PathTemplate ||
		fmt.Sprint(gotRoute.PathParams) != fmt.Sprint(want.PathParams) || gotRoute.Operation == nil ||
		gotRoute.Operation.OperationID != "stopAgent" {
		t.Errorf("route = %+v, want %+v", gotRoute, want)
	}
	if RouteFrom(context.Background()) != nil || RequestID(context.Background()) != "" {
		t.Error("RouteFrom/RequestID outside admission should be empty")
	}
	// Every request gets a fresh ID.
	if again := s.do(t, req{method: "GET", target: "/nope"}); again.header.Get("X-Request-Id") == id {
		t.Error("request ID reused")
	}
}

func TestPreAuthRecoversPanic(t *testing.T) {
	t.Parallel()
	s := newStack(t, Options{}, func(w http.ResponseWriter, r *http.Request) {
		panic("boom: " + canary)
	})
	res := s.do(t, req{method: "GET", target: "/namespaces"})
	if res.status != 500 || res.code() != occ.CodeInternal || res.message() != occ.MsgInternal {
		t.Fatalf("got %d %s", res.status, res.raw)
	}
	if strings.Contains(res.raw, canary) {
		t.Error("panic value reached the response")
	}
	logs := s.logs.String()
	for _, want := range []string{res.header.Get("X-Request-Id"), canary, "panic in HTTP handler", "goroutine"} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q: %s", want, logs)
		}
	}
}

func TestPreAuthPanicAfterWriteAborts(t *testing.T) {
	t.Parallel()
	s := newStack(t, Options{}, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "partial")
		panic("late")
	})
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Errorf("recovered %v, want http.ErrAbortHandler", v)
		}
		if !strings.Contains(s.logs.String(), "late") {
			t.Error("late panic not logged")
		}
	}()
	r := httptest.NewRequest("GET", "/namespaces", nil)
	r.Header.Set("Authorization", "Bearer ok")
	s.h.ServeHTTP(httptest.NewRecorder(), r)
}

func TestPreAuthEnforcesSecurityHeaders(t *testing.T) {
	t.Parallel()
	handlers := map[string]func(t *testing.T) http.HandlerFunc{
		"deletes and overrides": func(*testing.T) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Del("X-Request-Id")
				w.Header().Del("X-Content-Type-Options")
				w.Header().Set("Cache-Control", "max-age=3600")
				w.WriteHeader(http.StatusTeapot)
			}
		},
		"writes without WriteHeader": func(*testing.T) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Del("Cache-Control")
				_, _ = io.WriteString(w, "text")
			}
		},
		"flushes": func(t *testing.T) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Del("Cache-Control")
				w.(http.Flusher).Flush()
				if err := http.NewResponseController(w).Flush(); err != nil {
					t.Errorf("ResponseController.Flush: %v", err)
				}
			}
		},
	}
	for name, h := range handlers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newStack(t, Options{}, h(t))
			r := httptest.NewRequest("GET", "/namespaces", nil)
			r.Header.Set("Authorization", "Bearer ok")
			rec := httptest.NewRecorder()
			s.h.ServeHTTP(rec, r)
			checkWire(t, rec.Header())
		})
	}
}

// TestPreAuthOverTheWire uses a real server: 413 answers a huge
// Content-Length without waiting for the body, and a chunked body on a
// bodyless route is refused.
func TestPreAuthOverTheWire(t *testing.T) {
	t.Parallel()
	s := newStack(t, Options{}, nil)
	srv := httptest.NewServer(s.h)
	t.Cleanup(srv.Close)

	raw := func(t *testing.T, request string) (*http.Response, string) {
		t.Helper()
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := io.WriteString(conn, request); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	t.Run("413 before the body arrives", func(t *testing.T) {
		t.Parallel()
		// The declared body never arrives in full; the answer must not wait for it.
		resp, body := raw(t, "POST /namespaces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{}")
		if resp.StatusCode != 413 || !strings.Contains(body, `"PAYLOAD_TOO_LARGE"`) {
			t.Fatalf("got %d %s", resp.StatusCode, body)
		}
		checkWire(t, resp.Header)
	})
	t.Run("chunked body on a bodyless route", func(t *testing.T) {
		t.Parallel()
		resp, body := raw(t, "GET /namespaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ok\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
		if resp.StatusCode != 400 || !strings.Contains(body, "does not accept a request body") {
			t.Fatalf("got %d %s", resp.StatusCode, body)
		}
		checkWire(t, resp.Header)
	})
	t.Run("empty chunked body on a bodyless route", func(t *testing.T) {
		t.Parallel()
		resp, body := raw(t, "GET /namespaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ok\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n")
		if resp.StatusCode != 400 {
			t.Fatalf("got %d %s", resp.StatusCode, body)
		}
	})
}

func TestCanonicalPath(t *testing.T) {
	for path, want := range map[string]bool{
		"/":                              true,
		"/namespaces":                    true,
		"/a/b%2Fc":                       true, // an encoded slash stays inside its segment
		"/a/%2e%2e%2fb":                  true, // one segment "../b": the route's own rules judge it
		"/a/b/":                          false,
		"/a//b":                          false,
		"/a/./b":                         false,
		"/a/../b":                        false,
		"/a/%2e%2e/b":                    false,
		"/a/%2E/b":                       false,
		"/a/%zz":                         false,
		"/files/AGENTS.md/..":            false,
		"/files/AGENTS.md%00":            true,
		"/namespaces/ns_1/agents/agt_1/": false,
	} {
		if got := CanonicalPath(path); got != want {
			t.Errorf("CanonicalPath(%q) = %v, want %v", path, got, want)
		}
	}
}
