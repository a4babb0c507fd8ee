package store

import (
	"context"
)

// Count is one group of a GROUP BY count: its label values, in the order
// the query names them, and how many rows it has.
type Count struct {
	Labels []string
	N      int64
}

// CountQueuedJobs counts the worker's unfinished jobs by kind and state
// (available, scheduled, running, retryable, pending).
func (q Q) CountQueuedJobs(ctx context.Context) ([]Count, error) {
	return q.counts(ctx, 2, `SELECT kind, state, COUNT(*) FROM river_job
		WHERE state IN ('available', 'scheduled', 'running', 'retryable', 'pending') GROUP BY kind, state`)
}

// CountDeployments counts deployments by status and error code ("" for
// none).
func (q Q) CountDeployments(ctx context.Context) ([]Count, error) {
	return q.counts(ctx, 2, `SELECT status, COALESCE(error_code, ''), COUNT(*) FROM deployments GROUP BY status, COALESCE(error_code, '')`)
}

// CountAgents counts Agents by desired state, status, and whether a
// revision is active ("true"/"false").
func (q Q) CountAgents(ctx context.Context) ([]Count, error) {
	return q.counts(ctx, 3, `SELECT desired_state, status,
		CASE WHEN active_revision_id IS NULL THEN 'false' ELSE 'true' END, COUNT(*)
		FROM agents GROUP BY desired_state, status, CASE WHEN active_revision_id IS NULL THEN 'false' ELSE 'true' END`)
}

// counts runs a query whose rows are n text labels and a count.
func (q Q) counts(ctx context.Context, n int, query string) ([]Count, error) {
	rows, err := q.q.QueryContext(ctx, query)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []Count
	for rows.Next() {
		c := Count{Labels: make([]string, n)}
		dest := make([]any, 0, n+1)
		for i := range c.Labels {
			dest = append(dest, &c.Labels[i])
		}
		if err := rows.Scan(append(dest, &c.N)...); err != nil {
			return nil, classify(err)
		}
		out = append(out, c)
	}
	return out, classify(rows.Err())
}
