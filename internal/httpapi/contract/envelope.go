package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/openclaw/occ/internal/occ"
)

// Security headers set on every response.
const (
	HeaderRequestID = "X-Request-Id"
	headerCC        = "Cache-Control"
	headerNosniff   = "X-Content-Type-Options"
	contentTypeJSON = "application/json; charset=utf-8"
)

type ctxKey struct{}

// state is what admission keeps about one request.
type state struct {
	id        string
	logger    *slog.Logger
	route     *Route
	op        *operation
	principal atomic.Value // string: the authenticated caller, once known
}

func stateFrom(ctx context.Context) *state {
	st, _ := ctx.Value(ctxKey{}).(*state)
	return st
}

// RouteFrom returns what admission learned about the request, or nil
// outside admission (or before the route was found).
func RouteFrom(ctx context.Context) *Route {
	if st := stateFrom(ctx); st != nil {
		return st.route
	}
	return nil
}

// RequestID returns the request's ID, "req_<uuidv4>", assigned by PreAuth;
// "" outside admission. It is always server-generated: a client-sent
// X-Request-Id is ignored.
func RequestID(ctx context.Context) string {
	if st := stateFrom(ctx); st != nil {
		return st.id
	}
	return ""
}

// setSecurityHeaders sets the headers every response carries.
func setSecurityHeaders(h http.Header, id string) {
	h.Set(headerCC, "no-store")
	h.Set(headerNosniff, "nosniff")
	h.Set(HeaderRequestID, id)
}

// StatusOf is THE one mapping from occ codes to HTTP statuses
// (CONTRACT.md §1). An unknown code maps to 500.
func StatusOf(code occ.Code) int {
	switch code {
	case occ.CodeInvalidRequest:
		return http.StatusBadRequest
	case occ.CodeUnauthenticated:
		return http.StatusUnauthorized
	case occ.CodeForbidden:
		return http.StatusForbidden
	case occ.CodeNotFound:
		return http.StatusNotFound
	case occ.CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case occ.CodeResourceConflict, occ.CodeAgentDeleting, occ.CodeNamespaceNotReady,
		occ.CodeNamespaceNotEmpty, occ.CodeInstallationExists, occ.CodeCredentialGatewayUnset:
		return http.StatusConflict
	case occ.CodePreconditionFailed:
		return http.StatusPreconditionFailed
	case occ.CodePayloadTooLarge:
		return http.StatusRequestEntityTooLarge
	case occ.CodeUnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	case occ.CodeRateLimited:
		return http.StatusTooManyRequests
	case occ.CodeInternal:
		return http.StatusInternalServerError
	case occ.CodeNotImplemented:
		return http.StatusNotImplemented
	case occ.CodeDependencyUnavailable, occ.CodeUnknownOutcome:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// knownCode reports whether code is one of the contract's fixed codes.
func knownCode(code occ.Code) bool {
	return code == occ.CodeInternal || StatusOf(code) != http.StatusInternalServerError
}

// defaultMessages stand in for an occ.Error without a message.
var defaultMessages = map[occ.Code]string{
	occ.CodeInvalidRequest:         "The request is not valid.",
	occ.CodeUnauthenticated:        occ.MsgUnauthenticated,
	occ.CodeForbidden:              occ.MsgForbidden,
	occ.CodeNotFound:               occ.MsgNotFound,
	occ.CodeMethodNotAllowed:       msgMethodNotAllowed,
	occ.CodeResourceConflict:       "The request conflicts with the current state of the resource.",
	occ.CodeAgentDeleting:          "The Agent is being deleted.",
	occ.CodeNamespaceNotReady:      "The Namespace is not ready.",
	occ.CodeNamespaceNotEmpty:      "The Namespace is not empty.",
	occ.CodePreconditionFailed:     "The resource has changed since it was read.",
	occ.CodePayloadTooLarge:        msgTooLarge,
	occ.CodeUnsupportedMediaType:   msgMediaType,
	occ.CodeRateLimited:            "Too many requests; retry later.",
	occ.CodeInternal:               occ.MsgInternal,
	occ.CodeNotImplemented:         "This feature is not implemented.",
	occ.CodeDependencyUnavailable:  occ.MsgDependency,
	occ.CodeUnknownOutcome:         "The outcome of the operation could not be confirmed.",
	occ.CodeInstallationExists:     "The Installation already exists.",
	occ.CodeCredentialGatewayUnset: "No Credential Gateway is configured.",
}

// Fixed messages of admission.
const (
	msgMethodNotAllowed = "The method is not allowed for this route."
	msgTooLarge         = "The request body is larger than this route accepts."
	msgMediaType        = "Requests must use application/json."
	msgBodyNotAccepted  = "This route does not accept a request body."
	msgInvalidJSON      = "The request body is not valid JSON."
	msgInvalidUTF8      = "The request body is not valid UTF-8."
	msgUnreadable       = "The request body could not be read."
)

type errorObject struct {
	Code    occ.Code     `json:"code"`
	Message string       `json:"message"`
	Details []occ.Detail `json:"details,omitempty"`
}

type errorEnvelope struct {
	Error errorObject    `json:"error"`
	Meta  map[string]any `json:"meta"`
}

// requestState returns the request's ID and logger; outside admission a new
// ID and the default logger.
func requestState(r *http.Request) (string, *slog.Logger) {
	if st := stateFrom(r.Context()); st != nil {
		return st.id, st.logger
	}
	return occ.NewID(occ.PrefixRequest), slog.Default()
}

// WriteError writes the error envelope
// {"error":{"code","message","details"?},"meta":{"requestId"}} with the
// status StatusOf(code), Content-Type application/json; charset=utf-8 and
// the security headers. A non-*occ.Error (or an unknown code) becomes 500
// INTERNAL_ERROR with the fixed message occ.MsgInternal and is logged with
// the request ID at error level; an occ.Error with code INTERNAL_ERROR,
// DEPENDENCY_UNAVAILABLE or UNKNOWN_OUTCOME and a Cause is logged too (at
// debug level when the client has gone away). The
// cause never reaches the response. RATE_LIMITED sets Retry-After (at least
// 1 second). An Allow header already set (405) is kept. The message is
// capped at 256 code points with control characters replaced by "?"; details
// are capped at 32 with paths of at most 512 characters.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	id, logger := requestState(r)
	e := occ.AsError(err)
	switch {
	case e == nil || !knownCode(e.Code):
		logger.ErrorContext(r.Context(), "internal error", "requestId", id,
			"method", r.Method, "path", r.URL.Path, "error", errText(err))
		e = occ.E(occ.CodeInternal, occ.MsgInternal)
	case e.Cause != nil && r.Context().Err() != nil:
		// The client went away (a browser cancelling what it no longer
		// needs): not occ's failure.
		logger.DebugContext(r.Context(), "request abandoned by the client", "requestId", id,
			"method", r.Method, "path", r.URL.Path, "code", string(e.Code), "error", e.Error())
	case e.Cause != nil && (e.Code == occ.CodeInternal || e.Code == occ.CodeDependencyUnavailable || e.Code == occ.CodeUnknownOutcome):
		logger.ErrorContext(r.Context(), "request failed", "requestId", id,
			"method", r.Method, "path", r.URL.Path, "code", string(e.Code), "error", e.Error())
	}
	msg := e.Message
	if msg == "" {
		msg = defaultMessages[e.Code]
	}
	body := errorEnvelope{
		Error: errorObject{Code: e.Code, Message: cleanMessage(msg)},
		Meta:  map[string]any{"requestId": id},
	}
	for _, d := range e.Details[:min(len(e.Details), occ.MaxDetails)] {
		body.Error.Details = append(body.Error.Details, occ.Detail{Path: capPointer(d.Path), Code: d.Code})
	}
	h := w.Header()
	if e.Code == occ.CodeRateLimited {
		h.Set("Retry-After", strconv.Itoa(max(e.RetryAfter, 1)))
	}
	status := StatusOf(e.Code)
	b, err := encode(body)
	if err != nil {
		// An envelope of strings always encodes; stay well-formed regardless.
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"INTERNAL_ERROR","message":"` + occ.MsgInternal + `"},"meta":{"requestId":"` + id + `"}}` + "\n")
	}
	writeJSON(w, id, status, b)
}

func errText(err error) string {
	if err == nil {
		return "<nil error>"
	}
	return err.Error()
}

// WriteData writes {"data": data, "meta": {"requestId": …}} plus any extra
// meta fields (e.g. "nextPageToken"; "requestId" cannot be overridden), with
// status and the security headers. A 204 or 304 gets no body. If data cannot
// be encoded, it writes a 500 instead.
func WriteData(w http.ResponseWriter, r *http.Request, status int, data any, extraMeta map[string]any) {
	id, _ := requestState(r)
	if status == http.StatusNoContent || status == http.StatusNotModified {
		setSecurityHeaders(w.Header(), id)
		w.WriteHeader(status)
		return
	}
	meta := make(map[string]any, len(extraMeta)+1)
	for k, v := range extraMeta {
		meta[k] = v
	}
	meta["requestId"] = id
	env := struct {
		Data any            `json:"data"`
		Meta map[string]any `json:"meta"`
	}{data, meta}
	b, err := encode(env)
	if err != nil {
		WriteError(w, r, occ.Wrap(occ.CodeInternal, occ.MsgInternal, err))
		return
	}
	writeJSON(w, id, status, b)
}

func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeJSON writes the JSON document b with the JSON content type and the
// security headers.
func writeJSON(w http.ResponseWriter, id string, status int, b []byte) {
	h := w.Header()
	setSecurityHeaders(h, id)
	h.Set("Content-Type", contentTypeJSON)
	h.Del("Content-Length")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
