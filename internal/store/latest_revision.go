package store

import "context"

// LatestRevisionID returns the ID of the Agent's highest-numbered revision
// (ErrNotFound when it has none).
func (q Q) LatestRevisionID(ctx context.Context, namespaceID, agentID string) (string, error) {
	var id string
	err := q.q.QueryRowContext(ctx, `SELECT id FROM agent_revisions WHERE namespace_id = $1 AND agent_id = $2
		ORDER BY number DESC LIMIT 1`, namespaceID, agentID).Scan(&id)
	return id, classify(err)
}
