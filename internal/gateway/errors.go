package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The kinds of failure a caller must tell apart. Every error returned by this
// package is an *Error whose Kind is one of these, so errors.Is(err, ErrX)
// answers "which kind"; errors.As(err, &*Error) gives the details.
var (
	// ErrUnreachable: nothing answered (connection refused, reset, timeout,
	// DNS), or the connection was lost while a request was outstanding.
	ErrUnreachable = errors.New("gateway unreachable")
	// ErrNotReady: the gateway answered but is starting, draining or not
	// ready (/startupz or /readyz 503, connect refused with UNAVAILABLE, close
	// 1013, a retryable UNAVAILABLE method error).
	ErrNotReady = errors.New("gateway not ready")
	// ErrUnauthorized: the gateway refused occ's own credentials or identity
	// (token mismatch, device identity or pairing required, missing scope,
	// proxy attribution required). Retrying with the same settings cannot help.
	ErrUnauthorized = errors.New("gateway refused occ's credentials")
	// ErrModelAuth: the runtime reports that the model provider rejected the
	// configured credential (models.probe status "auth"). The worker maps it
	// to RUNTIME_AUTHENTICATION_FAILED.
	ErrModelAuth = errors.New("model provider rejected the credential")
	// ErrProtocol: the gateway said something this client does not
	// understand, or broke the protocol (bad frame, wrong protocol version,
	// oversized frame, a response that contradicts the request).
	ErrProtocol = errors.New("gateway protocol error")
	// ErrFileConflict: agents.files.set was refused because the file changed
	// since the expected hash was read (details.type agent_file_conflict).
	ErrFileConflict = errors.New("agent file changed since it was read")
	// ErrRequest: the gateway understood the request and refused it for
	// another reason (INVALID_REQUEST such as an unknown agent or file name).
	ErrRequest = errors.New("gateway refused the request")
)

// ErrFrameTooLarge is the cause (wrapped in an ErrProtocol *Error) when a
// frame would exceed the size limit: an outgoing request is refused before it
// is sent (the connection stays usable); an incoming frame over the limit
// closes the connection (close 1009).
var ErrFrameTooLarge = errors.New("frame over the size limit")

// Error is the error type of this package.
type Error struct {
	// Kind is one of the Err* kinds above.
	Kind error
	// Op is what was being done: "probe /readyz", "dial", "connect", or the
	// method name.
	Op string
	// Code, Message, DetailCode, Details, Retryable and RetryAfter come from
	// the gateway's error shape {code, message, details?, retryable?,
	// retryAfterMs?} when the gateway answered with one (DetailCode is
	// details.code, or details.type, when present). For an HTTP probe, Code is
	// the error type of the body (e.g. proxy_attribution_required).
	Code       string
	Message    string
	DetailCode string
	Details    json.RawMessage
	Retryable  bool
	RetryAfter time.Duration
	// Status is the HTTP status of a probe, 0 otherwise.
	Status int
	// CloseCode is the WebSocket close status when the connection was closed,
	// 0 otherwise.
	CloseCode int
	// Sent is true when a request had been written and no answer came: the
	// outcome of a write is unknown.
	Sent bool
	// Err is the underlying cause, if any.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("gateway")
	if e.Op != "" {
		b.WriteString(" " + e.Op)
	}
	b.WriteString(": " + e.Kind.Error())
	if e.Code != "" {
		fmt.Fprintf(&b, ": %s", e.Code)
		if e.DetailCode != "" {
			fmt.Fprintf(&b, "/%s", e.DetailCode)
		}
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %q", e.Message)
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.CloseCode != 0 {
		fmt.Fprintf(&b, " (close %d)", e.CloseCode)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// Unwrap lets errors.Is match both the kind and the cause (for example
// context.DeadlineExceeded or ErrFrameTooLarge).
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// CurrentHash returns details.currentHash of a file conflict, "" otherwise.
func (e *Error) CurrentHash() string {
	var d struct {
		CurrentHash string `json:"currentHash"`
	}
	if len(e.Details) == 0 || json.Unmarshal(e.Details, &d) != nil {
		return ""
	}
	return d.CurrentHash
}

// OutcomeUnknown reports whether err means a request may or may not have
// taken effect: it was sent and the connection or the caller's context ended
// before the answer. A write that ends this way must not be retried blindly.
func OutcomeUnknown(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Sent
}

// errorShape is the gateway's error object.
type errorShape struct {
	Code         string          `json:"code"`
	Message      string          `json:"message"`
	Details      json.RawMessage `json:"details,omitempty"`
	Retryable    bool            `json:"retryable,omitempty"`
	RetryAfterMs int64           `json:"retryAfterMs,omitempty"`
}

// rpcError turns a gateway error shape into an *Error of the right kind.
func rpcError(op string, s *errorShape) *Error {
	e := &Error{
		Op:         op,
		Code:       s.Code,
		Message:    s.Message,
		Details:    s.Details,
		Retryable:  s.Retryable,
		RetryAfter: time.Duration(s.RetryAfterMs) * time.Millisecond,
	}
	var d struct {
		Code string `json:"code"`
		Type string `json:"type"`
	}
	if len(s.Details) > 0 && json.Unmarshal(s.Details, &d) == nil {
		e.DetailCode = d.Code
		if e.DetailCode == "" {
			e.DetailCode = d.Type
		}
	}
	e.Kind = classify(op, s.Code, e.DetailCode, s.Message)
	if s.Retryable && e.Kind != ErrFileConflict {
		e.Kind = ErrNotReady // the gateway says: try again later
	}
	return e
}

// classify maps a gateway error to a kind. The codes are those of
// reference/openclaw-runtime.md §2.3-§2.4; anything unknown on connect is a
// protocol error (occ cannot act on it), and on a method a refused request.
func classify(op, code, detail, message string) error {
	switch {
	case detail == "agent_file_conflict":
		return ErrFileConflict
	case detail == "PROTOCOL_MISMATCH":
		return ErrProtocol
	case detail == "AUTH_RATE_LIMITED":
		return ErrNotReady
	case code == "UNAVAILABLE":
		return ErrNotReady
	case code == "FORBIDDEN", code == "NOT_PAIRED", code == "NOT_LINKED":
		return ErrUnauthorized
	case strings.HasPrefix(detail, "AUTH_"), strings.HasPrefix(detail, "DEVICE_"), detail == "PAIRING_REQUIRED":
		return ErrUnauthorized
	case strings.HasPrefix(message, "unauthorized"):
		return ErrUnauthorized
	case op == "connect":
		return ErrProtocol
	default:
		return ErrRequest
	}
}
