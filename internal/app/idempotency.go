package app

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync/atomic"
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

var (
	errIdempotencyReused = occ.Invalid(occ.MsgIdempotencyKeyReused,
		occ.Detail{Path: "/Idempotency-Key", Code: occ.DetailInvalidValue})
	errIdempotencyUnfinished = occ.E(occ.CodeResourceConflict, occ.MsgIdempotencyUnfinished)
)

// IdempotencyClaim is one request's hold on its Idempotency-Key.
//
// The key's record is written inside the first transaction the request's
// use case commits (App.tx), together with the change: a request that
// dies before committing leaves no record, so its retry runs afresh; one
// that committed leaves a record that answers 409 until Finish stores the
// response, and its change is never made twice. Two requests with one key
// at once: the second is refused before it starts when both reach one
// process, and otherwise at its transaction, where the record's primary
// key admits one.
type IdempotencyClaim struct {
	a        *App
	rec      store.IdempotentResponse
	mark     string      // the in-process mark: principal ID and key
	recorded atomic.Bool // a committed transaction wrote the record
}

// BeginIdempotent looks up key for this request (its operation, path and
// body). It returns a replay when the same request already succeeded,
// INVALID_REQUEST when the key was used for another request, and
// RESOURCE_CONFLICT while a request with the key is in progress or its
// committed outcome has no stored response; otherwise a claim to run the
// request under (Context, then Finish). Only a keyed digest of the request
// is stored, so a body's secrets cannot be guessed from it.
func (a *App) BeginIdempotent(ctx context.Context, c occ.Caller, key, operation, path string, body []byte) (*IdempotencyClaim, *Replay, error) {
	mac := hmac.New(sha256.New, a.idemKey)
	mac.Write([]byte(operation + "\n" + path + "\n"))
	mac.Write(body)
	now := a.now()
	rec := store.IdempotentResponse{PrincipalID: c.PrincipalID, Key: key, Operation: operation,
		RequestDigest: hex.EncodeToString(mac.Sum(nil)), CreatedAt: occ.Millis(now)}
	prev, err := a.st.GetIdempotentResponse(ctx, c.PrincipalID, key)
	switch {
	case errors.Is(err, store.ErrNotFound), err == nil && prev.CreatedAt < expiredBefore(rec):
	case err != nil:
		return nil, nil, occ.Unavailable(err)
	case prev.Operation != operation || prev.RequestDigest != rec.RequestDigest:
		return nil, nil, errIdempotencyReused
	case prev.Status == 0:
		return nil, nil, errIdempotencyUnfinished
	default:
		return nil, &Replay{Status: prev.Status, Body: prev.Body}, nil
	}
	cl := &IdempotencyClaim{a: a, rec: rec, mark: c.PrincipalID + "\x00" + key}
	if _, busy := a.idemInFlight.LoadOrStore(cl.mark, true); busy {
		return nil, nil, errIdempotencyUnfinished
	}
	return cl, nil, nil
}

// expiredBefore is the creation time before which a record of the key is
// forgotten.
func expiredBefore(rec store.IdempotentResponse) int64 {
	return rec.CreatedAt - IdempotencyWindow.Milliseconds()
}

type claimKey struct{}

// Context returns ctx carrying the claim, for the use case to run under.
func (cl *IdempotencyClaim) Context(ctx context.Context) context.Context {
	return context.WithValue(ctx, claimKey{}, cl)
}

// claimIn returns the claim ctx carries that no committed transaction has
// recorded yet, or nil.
func claimIn(ctx context.Context) *IdempotencyClaim {
	cl, _ := ctx.Value(claimKey{}).(*IdempotencyClaim)
	if cl == nil || cl.recorded.Load() {
		return nil
	}
	return cl
}

// record writes the claim's record in tx; a record another request wrote
// first refuses this one.
func (cl *IdempotencyClaim) record(ctx context.Context, tx *store.Tx) error {
	err := tx.ClaimIdempotencyKey(ctx, cl.rec, expiredBefore(cl.rec))
	if errors.Is(err, store.ErrConflict) {
		return errIdempotencyUnfinished
	}
	return err
}

// committed reports whether the claim's record is in the database after a
// commit whose outcome was unknown: the record commits exactly with the
// change, so it tells whether the change did.
func (cl *IdempotencyClaim) committed(ctx context.Context) bool {
	got, err := cl.a.st.GetIdempotentResponse(ctx, cl.rec.PrincipalID, cl.rec.Key)
	return err == nil && got.RequestDigest == cl.rec.RequestDigest && got.CreatedAt == cl.rec.CreatedAt
}

// Finish stores a successful first response, or forgets the record after
// a failure so the request can be retried with the key. When no
// transaction committed under the claim there is nothing to store: a retry
// runs afresh.
func (cl *IdempotencyClaim) Finish(ctx context.Context, status int, body string) error {
	defer cl.Release()
	switch {
	case !cl.recorded.Load():
		return nil
	case status >= 200 && status < 300:
		return cl.a.st.CompleteIdempotencyKey(ctx, cl.rec.PrincipalID, cl.rec.Key, status, body)
	}
	return cl.a.st.ReleaseIdempotencyKey(ctx, cl.rec.PrincipalID, cl.rec.Key)
}

// Release drops the claim's in-process mark (Finish does; a deferred
// Release covers a request that never reached Finish). It may be called
// more than once.
func (cl *IdempotencyClaim) Release() { cl.a.idemInFlight.Delete(cl.mark) }
