package store

import (
	"context"
)

// IdempotentResponse is the first response to a caller's Idempotency-Key;
// Status 0 marks a request whose change committed (or is committing) and
// whose response is not stored yet.
type IdempotentResponse struct {
	PrincipalID   string
	Key           string
	Operation     string
	RequestDigest string
	Status        int
	Body          string
	CreatedAt     int64
}

// ClaimIdempotencyKey writes the record of a request's key, without its
// response, in the transaction that makes the request's change, after
// dropping an expired record of the same key. A key already recorded is
// ErrConflict (on PostgreSQL the transaction can then only roll back).
func (q Q) ClaimIdempotencyKey(ctx context.Context, r IdempotentResponse, expiredBefore int64) error {
	if _, err := q.q.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE principal_id = $1 AND idem_key = $2 AND created_at < $3`,
		r.PrincipalID, r.Key, expiredBefore); err != nil {
		return classify(err)
	}
	_, err := q.q.ExecContext(ctx, `INSERT INTO idempotency_keys (principal_id, idem_key, operation, request_digest, status, body, created_at)
		VALUES ($1, $2, $3, $4, 0, '', $5)`, r.PrincipalID, r.Key, r.Operation, r.RequestDigest, r.CreatedAt)
	return classify(err)
}

// GetIdempotentResponse finds the record of a caller's key.
func (q Q) GetIdempotentResponse(ctx context.Context, principalID, key string) (IdempotentResponse, error) {
	r := IdempotentResponse{PrincipalID: principalID, Key: key}
	err := q.q.QueryRowContext(ctx, `SELECT operation, request_digest, status, body, created_at FROM idempotency_keys
		WHERE principal_id = $1 AND idem_key = $2`, principalID, key).Scan(&r.Operation, &r.RequestDigest, &r.Status, &r.Body, &r.CreatedAt)
	return r, classify(err)
}

// CompleteIdempotencyKey stores the first response of a claimed key.
func (q Q) CompleteIdempotencyKey(ctx context.Context, principalID, key string, status int, body string) error {
	return affected(q.q.ExecContext(ctx, `UPDATE idempotency_keys SET status = $1, body = $2 WHERE principal_id = $3 AND idem_key = $4`,
		status, body, principalID, key))
}

// ReleaseIdempotencyKey forgets the record of a key whose request failed
// after a transaction committed, so the same key may be tried again.
func (q Q) ReleaseIdempotencyKey(ctx context.Context, principalID, key string) error {
	_, err := q.q.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE principal_id = $1 AND idem_key = $2 AND status = 0`, principalID, key)
	return classify(err)
}
