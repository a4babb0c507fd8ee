package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/openclaw/occ/internal/client/gen"
)

// Error codes of the API a client commonly tests for (APIError.Code).
const (
	CodeInvalidRequest    = "INVALID_REQUEST"
	CodeUnauthenticated   = "UNAUTHENTICATED"
	CodeForbidden         = "FORBIDDEN"
	CodeNotFound          = "NOT_FOUND"
	CodeResourceConflict  = "RESOURCE_CONFLICT"
	CodeNamespaceNotReady = "NAMESPACE_NOT_READY"
	CodeNamespaceNotEmpty = "NAMESPACE_NOT_EMPTY"
	CodeAgentDeleting     = "AGENT_DELETING"
)

// APIError is an error answer of the server: its HTTP status and the error
// envelope ({error: {code, message, details}, meta: {requestId}}). An answer
// that is not an error envelope (a proxy's page, say) has Code "HTTP_<status>"
// and the start of the body as Message.
type APIError struct {
	Status    int
	Code      string
	Message   string
	Details   []ErrorDetail
	RequestID string
}

// Error returns "CODE: message (request req_…)", with the invalid fields
// in brackets when the server named them.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.Code)
	b.WriteString(": ")
	b.WriteString(e.Message)
	if len(e.Details) > 0 {
		b.WriteString(" [")
		for i, d := range e.Details {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s: %s", d.Path, d.Code)
		}
		b.WriteString("]")
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " (request %s)", e.RequestID)
	}
	return b.String()
}

// IsCode reports whether err is (or wraps) an *APIError with the code.
func IsCode(err error, code string) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Code == code
}

// IsNotFound reports whether err is (or wraps) a NOT_FOUND answer.
func IsNotFound(err error) bool { return IsCode(err, CodeNotFound) }

// ErrorFromResponse returns nil for a 2xx answer and an *APIError for any
// other, decoded from the error envelope in body. Use it with the responses
// of [Client.API].
func ErrorFromResponse(res *http.Response, body []byte) error {
	if res == nil {
		return &APIError{Code: "NO_RESPONSE", Message: "no response"}
	}
	if res.StatusCode >= 200 && res.StatusCode < 300 {
		return nil
	}
	return apiError(res, body)
}

// apiError builds the *APIError of a non-2xx answer.
func apiError(res *http.Response, body []byte) *APIError {
	e := &APIError{Status: res.StatusCode, RequestID: res.Header.Get("X-Request-Id")}
	var eb gen.ErrorBody
	if err := json.Unmarshal(body, &eb); err == nil && eb.Error.Code != "" {
		e.Code, e.Message = eb.Error.Code, eb.Error.Message
		if eb.Error.Details != nil {
			e.Details = *eb.Error.Details
		}
		if eb.Meta.RequestId != "" {
			e.RequestID = eb.Meta.RequestId
		}
		return e
	}
	e.Code = fmt.Sprintf("HTTP_%d", res.StatusCode)
	e.Message = snippet(body)
	if e.Message == "" {
		e.Message = http.StatusText(res.StatusCode)
	}
	return e
}

// unexpected is the error of a response whose status is not the one the
// route answers on success: the error envelope when it is one, otherwise
// the status and body.
func unexpected(res *http.Response, body []byte) error {
	if res == nil {
		return &APIError{Code: "NO_RESPONSE", Message: "no response"}
	}
	if res.StatusCode >= 200 && res.StatusCode < 300 {
		return &APIError{Status: res.StatusCode, Code: fmt.Sprintf("HTTP_%d", res.StatusCode),
			Message: "unexpected response: " + snippet(body), RequestID: res.Header.Get("X-Request-Id")}
	}
	return apiError(res, body)
}

// snippet returns the first line of body, at most 200 bytes of valid UTF-8.
func snippet(body []byte) string {
	s := strings.TrimSpace(string(body))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// DeploymentError is returned by WaitDeployment when the deployment
// failed: the deployment's error code and message.
type DeploymentError struct {
	DeploymentID string
	Code         string
	Message      string
}

// Error returns "CODE: message (deployment rev_…)".
func (e *DeploymentError) Error() string {
	return fmt.Sprintf("%s: %s (deployment %s)", e.Code, e.Message, e.DeploymentID)
}
