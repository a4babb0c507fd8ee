package contract

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/occ"
)

// PreAuth runs before authentication, in this order:
//  1. assigns the request ID; sets on EVERY response (also errors, also
//     404s): Cache-Control: no-store, X-Content-Type-Options: nosniff,
//     X-Request-Id.
//  2. a path with an empty, "." or ".." segment (also percent-encoded) →
//     400 INVALID_REQUEST: nothing cleans or redirects it.
//     Then finds the route in the spec: no path → 404 NOT_FOUND; path but not
//     method → 405 METHOD_NOT_ALLOWED with an Allow header listing the
//     methods (sorted, comma+space).
//  3. Content-Length over the route's limit → 413 PAYLOAD_TOO_LARGE (before
//     reading anything).
//  4. path parameters checked against their schema (pattern/format): a
//     mismatch → 400 INVALID_REQUEST with detail {"/<name>", INVALID_FORMAT}.
//  5. query parameters: a name the operation does not declare → 400 with
//     detail {"/<name>", UNKNOWN_FIELD}; declared ones validated against
//     their schema (exact decimal text for integers, no coercion; bounds) →
//     INVALID_VALUE/INVALID_FORMAT/INVALID_TYPE/TOO_LONG details; a missing
//     required one → REQUIRED; a repeated single-valued one → INVALID_VALUE.
//  6. a route whose operation has no requestBody but the request carries one
//     (Content-Length > 0, or any Transfer-Encoding header) → 400
//     INVALID_REQUEST "This route does not accept a request body."
//
// A panic in next is recovered: logged with its stack and answered with a
// 500 envelope (or, when the response has already started, the connection
// is aborted). The security headers are enforced on whatever next writes.
func (a *Admission) PreAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := occ.NewID(occ.PrefixRequest)
		setSecurityHeaders(w.Header(), id)
		st := &state{id: id, logger: a.logger}
		r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, st))
		sw := &secureWriter{ResponseWriter: w, id: id}
		if a.observe != nil {
			// Deferred first, so it runs last: after a recovered panic's 500.
			start := time.Now()
			defer func() { a.observe(st.served(r.Method, sw.status, time.Since(start))) }()
		}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			a.logger.ErrorContext(r.Context(), "panic in HTTP handler", "requestId", id,
				"method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if sw.wrote {
				// Part of a response is out: cut the connection so the
				// client cannot take it for a complete one.
				panic(http.ErrAbortHandler)
			}
			WriteError(sw, r, occ.E(occ.CodeInternal, occ.MsgInternal))
		}()

		if err := a.admit(sw, r, st); err != nil {
			WriteError(sw, r, err)
			return
		}
		next.ServeHTTP(sw, r)
	})
}

// admit runs steps 2-6 of PreAuth.
func (a *Admission) admit(w http.ResponseWriter, r *http.Request, st *state) *occ.Error {
	if !CanonicalPath(r.URL.EscapedPath()) {
		return occ.E(occ.CodeInvalidRequest, msgPathNotCanonical)
	}
	o, params, allow := a.router.match(r.Method, r.URL.EscapedPath())
	if o == nil {
		if len(allow) > 0 {
			w.Header().Set("Allow", methodList(allow))
			return occ.E(occ.CodeMethodNotAllowed, msgMethodNotAllowed)
		}
		return occ.E(occ.CodeNotFound, occ.MsgNotFound)
	}
	st.op = o
	st.route = o.route(params)
	if r.ContentLength > o.limit {
		return occ.E(occ.CodePayloadTooLarge, msgTooLarge)
	}
	if err := a.checkPathParams(o, params); err != nil {
		return err
	}
	if err := a.checkQuery(o, r.URL.RawQuery); err != nil {
		return err
	}
	if o.body == nil && hasBody(r) {
		return occ.E(occ.CodeInvalidRequest, msgBodyNotAccepted)
	}
	return nil
}

// secureWriter enforces the security headers on every response a handler
// writes and remembers whether the response has started.
type secureWriter struct {
	http.ResponseWriter
	id     string
	wrote  bool
	status int // the final status written, 0 before
}

func (s *secureWriter) WriteHeader(code int) {
	setSecurityHeaders(s.ResponseWriter.Header(), s.id)
	if code >= 200 {
		s.wrote = true
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *secureWriter) Write(b []byte) (int, error) {
	if !s.wrote {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

// Flush lets streaming handlers (Server-Sent Events) flush.
func (s *secureWriter) Flush() {
	if !s.wrote {
		s.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(s.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the underlying writer.
func (s *secureWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

const msgPathNotCanonical = "The request path must not contain empty, '.' or '..' segments."

// CanonicalPath reports whether an escaped path has no empty, "." or ".."
// segment once each segment is decoded (a trailing slash is an empty
// segment; "/" alone is fine).
func CanonicalPath(escaped string) bool {
	if escaped == "/" {
		return true
	}
	for _, seg := range strings.Split(strings.TrimPrefix(escaped, "/"), "/") {
		dec, err := url.PathUnescape(seg)
		if err != nil {
			return false
		}
		if dec == "" || dec == "." || dec == ".." {
			return false
		}
	}
	return true
}
