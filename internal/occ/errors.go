// Package occ holds the domain vocabulary shared by every other package: IDs,
// error codes, permissions, statuses and timestamps. It imports only the
// standard library.
package occ

import (
	"errors"
	"fmt"
)

// Code is a fixed, machine-readable error code. The HTTP layer maps each code to
// exactly one status in one place.
type Code string

// The fixed error codes of the contract (CONTRACT.md §1).
const (
	CodeInvalidRequest         Code = "INVALID_REQUEST"
	CodeUnauthenticated        Code = "UNAUTHENTICATED"
	CodeForbidden              Code = "FORBIDDEN"
	CodeNotFound               Code = "NOT_FOUND"
	CodeMethodNotAllowed       Code = "METHOD_NOT_ALLOWED"
	CodeResourceConflict       Code = "RESOURCE_CONFLICT"
	CodeAgentDeleting          Code = "AGENT_DELETING"
	CodeNamespaceNotReady      Code = "NAMESPACE_NOT_READY"
	CodeNamespaceNotEmpty      Code = "NAMESPACE_NOT_EMPTY"
	CodePreconditionFailed     Code = "PRECONDITION_FAILED"
	CodePayloadTooLarge        Code = "PAYLOAD_TOO_LARGE"
	CodeUnsupportedMediaType   Code = "UNSUPPORTED_MEDIA_TYPE"
	CodeRateLimited            Code = "RATE_LIMITED"
	CodeInternal               Code = "INTERNAL_ERROR"
	CodeNotImplemented         Code = "NOT_IMPLEMENTED"
	CodeDependencyUnavailable  Code = "DEPENDENCY_UNAVAILABLE"
	CodeUnknownOutcome         Code = "UNKNOWN_OUTCOME"
	CodeInstallationExists     Code = "INSTALLATION_EXISTS"
	CodeCredentialGatewayUnset Code = "CREDENTIAL_GATEWAY_NOT_CONFIGURED"
)

// Detail codes name what is wrong with one field of a request.
const (
	DetailRequired     = "REQUIRED"
	DetailUnknownField = "UNKNOWN_FIELD"
	DetailInvalidType  = "INVALID_TYPE"
	DetailInvalidFmt   = "INVALID_FORMAT"
	DetailTooLong      = "TOO_LONG"
	DetailTooDeep      = "TOO_DEEP"
	DetailInvalidValue = "INVALID_VALUE"
	// DetailExecutionModeUnsupported, DetailHarnessAuthUnsupported and
	// DetailSecretEnvironmentUnsupported refuse a deploy the
	// installation's compute driver cannot run (the codes of
	// ComputeCapabilities.Refusal).
	DetailExecutionModeUnsupported     = DeployExecutionModeUnsupported
	DetailHarnessAuthUnsupported       = DeployHarnessAuthUnsupported
	DetailSecretEnvironmentUnsupported = DeploySecretEnvironmentUnsupported
)

// DetailCodes is the closed set of detail codes.
var DetailCodes = []string{DetailRequired, DetailUnknownField, DetailInvalidType, DetailInvalidFmt, DetailTooLong, DetailTooDeep,
	DetailInvalidValue, DetailExecutionModeUnsupported, DetailHarnessAuthUnsupported, DetailSecretEnvironmentUnsupported}

// MaxDetails is the most validation details one error carries.
const MaxDetails = 32

// Detail points at one problem in a request, by RFC 6901 JSON Pointer.
type Detail struct {
	Path string `json:"path"`
	Code string `json:"code"`
}

// Error is the one error type that crosses package boundaries towards a caller.
// Message is fixed per code and situation and safe to show; Cause is for logs
// only and never reaches a response.
type Error struct {
	Code       Code
	Message    string
	Details    []Detail
	RetryAfter int // seconds; set for RATE_LIMITED
	Cause      error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// E builds an Error with a fixed message.
func E(code Code, message string) *Error { return &Error{Code: code, Message: message} }

// Wrap builds an Error that keeps cause for the logs.
func Wrap(code Code, message string, cause error) *Error {
	return &Error{Code: code, Message: message, Cause: cause}
}

// Invalid builds an INVALID_REQUEST error with details.
func Invalid(message string, details ...Detail) *Error {
	if len(details) > MaxDetails {
		details = details[:MaxDetails]
	}
	return &Error{Code: CodeInvalidRequest, Message: message, Details: details}
}

// AsError returns the *Error in err's chain, or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// CodeOf returns the code of err, INTERNAL_ERROR for an unknown error and ""
// for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	if e := AsError(err); e != nil {
		return e.Code
	}
	return CodeInternal
}

// Fixed messages used across the code base.
const (
	MsgUnauthenticated = "The caller did not provide valid credentials."
	MsgForbidden       = "The exact platform operation was not authorized."
	MsgNotFound        = "The requested platform resource was not found."
	MsgDependency      = "A required platform dependency is unavailable."
	MsgInternal        = "An unexpected error occurred."
	MsgUntrustedOrigin = "A trusted browser Origin is required for this request."
	// MsgSignInThrottled refuses a sign-in over its failure limits.
	MsgSignInThrottled = "Too many failed sign-ins; try again later."
	// MsgPasswordChecksBusy refuses a sign-in when every password check
	// slot stayed busy.
	MsgPasswordChecksBusy = "Too many sign-ins at once; try again shortly."
	// MsgTooManyStreams refuses an event stream over the caller's cap of
	// open streams (streams.maxPerPrincipal).
	MsgTooManyStreams = "Too many event streams open for this principal; close one and try again."
	// MsgIdempotencyKeyReused refuses a key already used with another request.
	MsgIdempotencyKeyReused = "The Idempotency-Key was already used with a different request."
	// MsgIdempotencyUnsupported refuses a key on a POST whose first
	// response is never replayed (a service key is shown once), rather
	// than ignore it and let a retry make a second resource.
	MsgIdempotencyUnsupported = "This operation does not take an Idempotency-Key: its response cannot be replayed."
	// MsgIdempotencyUnfinished answers a key whose first request is running,
	// or committed without its response being stored.
	MsgIdempotencyUnfinished = "A request with this Idempotency-Key is still in progress, or its outcome is unknown."
	// MsgPreconditionFailed answers an If-Match naming another version.
	MsgPreconditionFailed = "The resource has changed since it was read (If-Match does not match its ETag)."
	// MsgChangedConcurrently answers a change that kept losing races to
	// concurrent writers (RESOURCE_CONFLICT).
	MsgChangedConcurrently = "The resource kept changing while this change was applied; read it again and retry."
	// MsgCommitUnknown answers a change whose database commit failed in a
	// way that does not say whether it took effect (UNKNOWN_OUTCOME).
	MsgCommitUnknown = "occ could not confirm whether the change was saved; read the resource before repeating it, or repeat it with the same Idempotency-Key."
)

// Common errors.
var (
	ErrNotFound        = E(CodeNotFound, MsgNotFound)
	ErrForbidden       = E(CodeForbidden, MsgForbidden)
	ErrUnauthenticated = E(CodeUnauthenticated, MsgUnauthenticated)
)

// Unavailable wraps a dependency failure (database, audit, driver) as 503.
func Unavailable(cause error) *Error {
	return &Error{Code: CodeDependencyUnavailable, Message: MsgDependency, Cause: cause}
}
