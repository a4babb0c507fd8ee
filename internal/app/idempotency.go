package app

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// IdempotencyWindow is how long a first response is replayed.
const IdempotencyWindow = 24 * time.Hour

// Replay is a stored first response.
type Replay struct {
	Status int
	Body   string
}

// BeginIdempotent claims key for this request (its operation, path and
// body). It returns a replay when the same request already succeeded,
// INVALID_REQUEST when the key was used for another request, and
// RESOURCE_CONFLICT while the first is in progress. Only a keyed digest of
// the request is stored, so a body's secrets cannot be guessed from it.
func (a *App) BeginIdempotent(ctx context.Context, c occ.Caller, key, operation, path string, body []byte) (*Replay, error) {
	mac := hmac.New(sha256.New, a.idemKey)
	mac.Write([]byte(operation + "\n" + path + "\n"))
	mac.Write(body)
	digest := hex.EncodeToString(mac.Sum(nil))
	now := a.now()
	rec := store.IdempotentResponse{PrincipalID: c.PrincipalID, Key: key, Operation: operation, RequestDigest: digest, CreatedAt: occ.Millis(now)}
	err := a.st.ClaimIdempotencyKey(ctx, rec, occ.Millis(now.Add(-IdempotencyWindow)))
	if err == nil {
		return nil, nil
	}
	if !errors.Is(err, store.ErrConflict) {
		return nil, occ.Unavailable(err)
	}
	prev, err := a.st.GetIdempotentResponse(ctx, c.PrincipalID, key)
	if err != nil {
		return nil, occ.Unavailable(err)
	}
	switch {
	case prev.Operation != operation || prev.RequestDigest != digest:
		return nil, occ.Invalid("The Idempotency-Key was already used with a different request.",
			occ.Detail{Path: "/Idempotency-Key", Code: occ.DetailInvalidValue})
	case prev.Status == 0:
		return nil, occ.E(occ.CodeResourceConflict, "A request with this Idempotency-Key is still in progress, or its outcome is unknown.")
	}
	return &Replay{Status: prev.Status, Body: prev.Body}, nil
}

// FinishIdempotent stores a successful first response, or releases the key
// after a failure so the request can be retried with it.
func (a *App) FinishIdempotent(ctx context.Context, c occ.Caller, key string, status int, body string) error {
	if status >= 200 && status < 300 {
		return a.st.CompleteIdempotencyKey(ctx, c.PrincipalID, key, status, body)
	}
	return a.st.ReleaseIdempotencyKey(ctx, c.PrincipalID, key)
}
