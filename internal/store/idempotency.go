package store

import (
	"context"

	"github.com/openclaw/occ/internal/occ"
)

// IdempotentResponse is a stored first response to an Idempotency-Key.
type IdempotentResponse struct {
	PrincipalID   string
	Key           string
	Operation     string
	RequestDigest string
	Status        int
	Body          string
	CreatedAt     int64
}

// GetIdempotentResponse finds a stored response for a caller's key.
func (q Q) GetIdempotentResponse(ctx context.Context, principalID, key string) (IdempotentResponse, error) {
	r := IdempotentResponse{PrincipalID: principalID, Key: key}
	err := q.q.QueryRowContext(ctx, `SELECT operation, request_digest, status, body, created_at FROM idempotency_keys
		WHERE principal_id = $1 AND idem_key = $2`, principalID, key).Scan(&r.Operation, &r.RequestDigest, &r.Status, &r.Body, &r.CreatedAt)
	return r, classify(err)
}

// PutIdempotentResponse stores the first response; a second store for the
// same key is ErrConflict.
func (q Q) PutIdempotentResponse(ctx context.Context, r IdempotentResponse) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO idempotency_keys (principal_id, idem_key, operation, request_digest, status, body, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, r.PrincipalID, r.Key, r.Operation, r.RequestDigest, r.Status, r.Body, r.CreatedAt)
	return classify(err)
}

// PurgeIdempotentResponses deletes responses older than the cutoff.
func (q Q) PurgeIdempotentResponses(ctx context.Context, before int64) error {
	_, err := q.q.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, before)
	return classify(err)
}

var _ = occ.Millis
