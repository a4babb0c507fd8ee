package occ

import "context"

// AuthMethod is how a caller proved who it is.
type AuthMethod string

// Authentication methods.
const (
	AuthServiceKey AuthMethod = "service_key"
	AuthSession    AuthMethod = "session"
	AuthWorker     AuthMethod = "worker" // the worker acting for a recorded actor
)

// Caller is the authenticated principal behind a request or piece of work.
type Caller struct {
	PrincipalID string
	Kind        PrincipalKind
	Method      AuthMethod
	KeyID       string // service key used, if any
	SessionID   string // session used, if any
	PinnedNS    string // a Namespace-pinned key may act only there
	// PolicyGeneration is the IAM policy's generation read with the
	// credential; 0 when unknown (the worker acting for a recorded actor).
	// Authorization may reuse policy read at the same generation.
	PolicyGeneration int64
}

// AfterRequest is the caller for checks made after its request's own, by
// what outlives the request (a stream re-checking its reader): they read
// the policy afresh, so a revocation ends the stream.
func (c Caller) AfterRequest() Caller {
	c.PolicyGeneration = 0
	return c
}

type ctxKey int

const requestIDKey ctxKey = iota

// WithRequestID returns ctx carrying the request ID for audit events.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey, id)
}

// RequestIDFrom returns the request ID in ctx, or "".
func RequestIDFrom(ctx context.Context) string {
	s, _ := ctx.Value(requestIDKey).(string)
	return s
}
