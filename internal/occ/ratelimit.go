package occ

import (
	"math"
	"time"
)

// Fixed messages of the request limits (429 RATE_LIMITED with Retry-After).
const (
	MsgRateLimitedClient    = "Too many requests from this client address; retry after the time in Retry-After."
	MsgRateLimitedPrincipal = "Too many requests by this caller; retry after the time in Retry-After."
	MsgServerBusy           = "The server is handling too many requests at once; retry after the time in Retry-After."
)

// RateLimited builds a RATE_LIMITED error with a fixed message that asks the
// caller to retry after wait, rounded up to whole seconds (at least 1).
func RateLimited(message string, wait time.Duration) *Error {
	return &Error{Code: CodeRateLimited, Message: message, RetryAfter: max(1, int(math.Ceil(wait.Seconds())))}
}
