package store

import (
	"context"
	"database/sql"
)

// DeploymentRow is the persisted status of one admitted revision.
type DeploymentRow struct {
	RevisionID      string
	AgentID         string
	NamespaceID     string
	ActorID         string
	Status          string // queued | running | succeeded | failed
	ErrorCode       string
	ErrorData       string // JSON object or ""
	Warnings        string // JSON array
	LastAttemptAt   int64
	LastAttemptCode string
	LastAttemptData string // JSON object or "": progress.lastAttempt.data
	RuntimeFailure  string // JSON object or "": the latest evidence held for the deadline
	NextAttemptAt   int64
	Attempts        int
	AdmittedAt      int64
	FinishedAt      int64
	UpdatedAt       int64
}

const deploymentCols = `revision_id, agent_id, namespace_id, actor_id, status, error_code, error_data, warnings, last_attempt_at,
	last_attempt_code, runtime_failure, next_attempt_at, attempts, admitted_at, finished_at, updated_at, last_attempt_data`

func scanDeployment(r rowScanner) (DeploymentRow, error) {
	var d DeploymentRow
	var code, data, lastCode, rf, lastData sql.NullString
	var lastAt, next, finished sql.NullInt64
	err := r.Scan(&d.RevisionID, &d.AgentID, &d.NamespaceID, &d.ActorID, &d.Status, &code, &data, &d.Warnings, &lastAt,
		&lastCode, &rf, &next, &d.Attempts, &d.AdmittedAt, &finished, &d.UpdatedAt, &lastData)
	d.ErrorCode, d.ErrorData, d.LastAttemptCode, d.RuntimeFailure = str(code), str(data), str(lastCode), str(rf)
	d.LastAttemptData = str(lastData)
	d.LastAttemptAt, d.NextAttemptAt, d.FinishedAt = lastAt.Int64, next.Int64, finished.Int64
	return d, classify(err)
}

func nullInt(v int64) any {
	if v == 0 {
		return nil
	}
	return v
}

// InsertDeployment records an admitted revision's deployment (queued).
func (q Q) InsertDeployment(ctx context.Context, d DeploymentRow) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO deployments (`+deploymentCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
		d.RevisionID, d.AgentID, d.NamespaceID, d.ActorID, d.Status, nullStr(d.ErrorCode), nullStr(d.ErrorData), d.Warnings,
		nullInt(d.LastAttemptAt), nullStr(d.LastAttemptCode), nullStr(d.RuntimeFailure), nullInt(d.NextAttemptAt), d.Attempts,
		d.AdmittedAt, nullInt(d.FinishedAt), d.UpdatedAt, nullStr(d.LastAttemptData))
	if err != nil {
		return classify(err)
	}
	return q.announce(ctx, AgentTopic(d.AgentID))
}

// GetDeployment returns one deployment of an Agent.
func (q Q) GetDeployment(ctx context.Context, namespaceID, agentID, revisionID string) (DeploymentRow, error) {
	return scanDeployment(q.q.QueryRowContext(ctx, `SELECT `+deploymentCols+` FROM deployments
		WHERE namespace_id = $1 AND agent_id = $2 AND revision_id = $3`, namespaceID, agentID, revisionID))
}

// UpdateDeployment rewrites a deployment that is not terminal yet; a
// terminal row is never rewritten (ErrStale).
func (q Q) UpdateDeployment(ctx context.Context, d DeploymentRow) error {
	err := affected(q.q.ExecContext(ctx, `UPDATE deployments SET status = $1, error_code = $2, error_data = $3, warnings = $4,
		last_attempt_at = $5, last_attempt_code = $6, runtime_failure = $7, next_attempt_at = $8, attempts = $9, finished_at = $10, updated_at = $11,
		last_attempt_data = $13
		WHERE revision_id = $12 AND status IN ('queued', 'running')`,
		d.Status, nullStr(d.ErrorCode), nullStr(d.ErrorData), d.Warnings, nullInt(d.LastAttemptAt), nullStr(d.LastAttemptCode),
		nullStr(d.RuntimeFailure), nullInt(d.NextAttemptAt), d.Attempts, nullInt(d.FinishedAt), d.UpdatedAt, d.RevisionID, nullStr(d.LastAttemptData)))
	if err == ErrNotFound {
		return ErrStale
	}
	if err != nil {
		return err
	}
	return q.announce(ctx, AgentTopic(d.AgentID))
}

// PendingDeployments lists an Agent's deployments that are not terminal.
func (q Q) PendingDeployments(ctx context.Context, agentID string) ([]DeploymentRow, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT `+deploymentCols+` FROM deployments WHERE agent_id = $1 AND status IN ('queued', 'running')
		ORDER BY admitted_at`, agentID)
	return collect(rs, err, scanDeployment)
}

// NextRevisionNumber returns one more than the Agent's highest revision number.
func (q Q) NextRevisionNumber(ctx context.Context, agentID string) (int64, error) {
	var n sql.NullInt64
	err := q.q.QueryRowContext(ctx, `SELECT MAX(number) FROM agent_revisions WHERE agent_id = $1`, agentID).Scan(&n)
	return n.Int64 + 1, err
}

// NewerRevisionExists reports whether the Agent has a revision numbered above n.
func (q Q) NewerRevisionExists(ctx context.Context, agentID string, n int64) (bool, error) {
	var c int
	err := q.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM agent_revisions WHERE agent_id = $1 AND number > $2`, agentID, n).Scan(&c)
	return c > 0, err
}

// DeleteAgentRecords removes an Agent with its revisions, deployments,
// staged files and its service principal (keys, bindings and restrictions
// of the principal go by cascade), plus grants aimed at the Agent or its
// revisions. It returns the removed grant IDs.
func (q Q) DeleteAgentRecords(ctx context.Context, namespaceID, agentID, principalID string) ([]string, error) {
	removed, err := q.DeleteTargetPolicy(ctx, "agent", agentID)
	if err != nil {
		return nil, err
	}
	revs, err := q.q.QueryContext(ctx, `SELECT id FROM agent_revisions WHERE agent_id = $1`, agentID)
	ids, err := collect(revs, err, func(r rowScanner) (string, error) { var s string; return s, r.Scan(&s) })
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		more, err := q.DeleteTargetPolicy(ctx, "agent_revision", id)
		if err != nil {
			return nil, err
		}
		removed = append(removed, more...)
	}
	for _, st := range []string{
		`DELETE FROM deployments WHERE agent_id = $1`,
		`DELETE FROM agent_revisions WHERE agent_id = $1`,
		`DELETE FROM agent_staged_files WHERE agent_id = $1`,
		`DELETE FROM work_claims WHERE resource_id = $1`,
	} {
		if _, err := q.q.ExecContext(ctx, st, agentID); err != nil {
			return nil, classify(err)
		}
	}
	if _, err := q.q.ExecContext(ctx, `DELETE FROM agents WHERE namespace_id = $1 AND id = $2`, namespaceID, agentID); err != nil {
		return nil, classify(err)
	}
	if _, err := q.q.ExecContext(ctx, `DELETE FROM principals WHERE id = $1 AND agent_id = $2`, principalID, agentID); err != nil {
		return nil, classify(err)
	}
	return removed, q.announce(ctx, AgentTopic(agentID))
}
