package contract

import (
	"context"
	"time"
)

// Served is what one request came to, told to Options.Observe once its
// response is written: what metrics count and the access log records.
// It carries no path parameters, query or body, so nothing a client sent
// (an ID of another tenant, a secret) reaches a label or a log line.
type Served struct {
	RequestID string
	Method    string
	// Operation is the matched operationId; "" when no route matched
	// (404, 405 or a path that is not canonical).
	Operation string
	// Status is the response status; 0 when nothing was written (the
	// client went away first).
	Status   int
	Duration time.Duration
	// Principal is the authenticated caller's ID; "" for public routes
	// and requests refused before authentication succeeded.
	Principal string
}

// SetPrincipal records the authenticated caller of the request for
// Served; the authentication middleware calls it.
func SetPrincipal(ctx context.Context, principalID string) {
	if st := stateFrom(ctx); st != nil {
		st.principal.Store(principalID)
	}
}

func (st *state) served(method string, status int, d time.Duration) Served {
	s := Served{RequestID: st.id, Method: method, Status: status, Duration: d}
	if st.route != nil {
		s.Operation = st.route.OperationID
	}
	s.Principal, _ = st.principal.Load().(string)
	return s
}
