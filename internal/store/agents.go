package store

import (
	"context"
	"database/sql"

	"github.com/openclaw/occ/internal/occ"
)

// AgentRow is an Agent as stored; settings stay encoded so one that cannot
// be decoded is reported without hiding the rest.
type AgentRow struct {
	ID                 string
	NamespaceID        string
	Name               string
	Status             string
	DesiredState       string
	ConfigurationID    string
	ServicePrincipalID string
	ActiveRevisionID   string
	ExecutionMode      string
	BackendID          string
	HarnessAuth        string // JSON: null or an object
	Plugins            string // JSON object
	Version            int64
	CreatedBy          string
	CreatedAt          int64
	UpdatedAt          int64
}

const agentCols = `id, namespace_id, name, status, desired_state, configuration_id, service_principal_id, active_revision_id,
	execution_mode, backend_id, harness_auth, plugins, version, created_by, created_at, updated_at`

func scanAgent(r rowScanner) (AgentRow, error) {
	var a AgentRow
	var active, backend sql.NullString
	err := r.Scan(&a.ID, &a.NamespaceID, &a.Name, &a.Status, &a.DesiredState, &a.ConfigurationID, &a.ServicePrincipalID, &active,
		&a.ExecutionMode, &backend, &a.HarnessAuth, &a.Plugins, &a.Version, &a.CreatedBy, &a.CreatedAt, &a.UpdatedAt)
	a.ActiveRevisionID, a.BackendID = str(active), str(backend)
	return a, classify(err)
}

// InsertAgent stores a new Agent with its service principal sp, if the
// Agent's Namespace is live (not deleted, deleting or failed): ErrNotFound
// when it is not, and then nothing is written; a taken name is ErrConflict.
// On PostgreSQL the check and both inserts are one statement, one round
// trip where they were three; SQLite, without data-modifying CTEs, guards
// the principal's insert and then inserts the Agent.
func (q Q) InsertAgent(ctx context.Context, a AgentRow, sp occ.Principal) error {
	agentArgs := []any{a.ID, a.NamespaceID, a.Name, a.Status, a.DesiredState, a.ConfigurationID, a.ServicePrincipalID, nullStr(a.ActiveRevisionID),
		a.ExecutionMode, nullStr(a.BackendID), a.HarnessAuth, a.Plugins, a.Version, a.CreatedBy, a.CreatedAt, a.UpdatedAt}
	spArgs := []any{sp.ID, sp.Kind, sp.Name, nullStr(sp.Email), nullStr(sp.PasswordHash), nullStr(sp.NamespaceID), nullStr(sp.AgentID),
		boolInt(sp.Disabled), occ.Millis(sp.CreatedAt), occ.Millis(sp.UpdatedAt), sp.Version}
	if q.ch.dialect == Postgres {
		return affected(q.q.ExecContext(ctx, insertLiveAgentPostgres, append(agentArgs, spArgs...)...))
	}
	if err := affected(q.q.ExecContext(ctx, insertLivePrincipalSQLite, append(spArgs, a.NamespaceID)...)); err != nil {
		return err
	}
	_, err := q.q.ExecContext(ctx, `INSERT INTO agents (`+agentCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`, agentArgs...)
	return classify(err)
}

// liveNamespace selects a row when the Namespace $n is live.
func liveNamespace(n string) string {
	return `SELECT 1 FROM namespaces WHERE id = ` + n + ` AND deleted_at IS NULL AND status NOT IN ('deleting', 'failed')`
}

// The Agent's columns $1..$16 and its principal's $17..$27, typed: the
// values of an INSERT … SELECT take no type from the columns they fill.
var insertLiveAgentPostgres = `WITH live AS (` + liveNamespace("$2::text") + `),
	sp AS (INSERT INTO principals (` + principalCols + `)
		SELECT $17::text, $18::text, $19::text, $20::text, $21::text, $22::text, $23::text, $24::integer, $25::bigint, $26::bigint, $27::bigint FROM live
		RETURNING 1)
	INSERT INTO agents (` + agentCols + `)
		SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text, $9::text, $10::text, $11::text, $12::text,
			$13::bigint, $14::text, $15::bigint, $16::bigint FROM sp`

var insertLivePrincipalSQLite = `INSERT INTO principals (` + principalCols + `)
	SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 WHERE EXISTS (` + liveNamespace("$12") + `)`

// GetAgent returns one Agent of a Namespace.
func (q Q) GetAgent(ctx context.Context, namespaceID, id string) (AgentRow, error) {
	return scanAgent(q.q.QueryRowContext(ctx, `SELECT `+agentCols+` FROM agents WHERE namespace_id = $1 AND id = $2`, namespaceID, id))
}

// LockAgent is GetAgent in a transaction that will write the Agent: on
// PostgreSQL the row stays locked until tx ends, so writers of one Agent
// in any process take turns, each reading what the one before committed
// (a SQLite write transaction already excludes every other).
func (t *Tx) LockAgent(ctx context.Context, namespaceID, id string) (AgentRow, error) {
	query := `SELECT ` + agentCols + ` FROM agents WHERE namespace_id = $1 AND id = $2`
	if t.dialect == Postgres {
		query += ` FOR UPDATE`
	}
	return scanAgent(t.tx.QueryRowContext(ctx, query, namespaceID, id))
}

// ListAgents returns a Namespace's Agents after the cursor.
func (q Q) ListAgents(ctx context.Context, namespaceID string, after Cursor, limit int) ([]AgentRow, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT `+agentCols+` FROM agents
		WHERE namespace_id = $1 AND (created_at > $2 OR (created_at = $2 AND id > $3))
		ORDER BY created_at, id LIMIT $4`, namespaceID, after.CreatedAt, after.ID, limit)
	return collect(rs, err, scanAgent)
}

// UpdateAgent writes every mutable column at the expected version and bumps it.
func (q Q) UpdateAgent(ctx context.Context, a AgentRow) error {
	err := affected(q.q.ExecContext(ctx, `UPDATE agents SET name = $1, status = $2, desired_state = $3, configuration_id = $4,
		active_revision_id = $5, execution_mode = $6, backend_id = $7, harness_auth = $8, plugins = $9, version = version + 1, updated_at = $10
		WHERE namespace_id = $11 AND id = $12 AND version = $13`,
		a.Name, a.Status, a.DesiredState, a.ConfigurationID, nullStr(a.ActiveRevisionID), a.ExecutionMode, nullStr(a.BackendID),
		a.HarnessAuth, a.Plugins, a.UpdatedAt, a.NamespaceID, a.ID, a.Version))
	if err == ErrNotFound {
		if _, gerr := q.GetAgent(ctx, a.NamespaceID, a.ID); gerr == nil {
			return ErrStale
		}
	}
	return err
}

// AgentsUsingConfiguration lists Agents whose draft references a Configuration.
func (q Q) AgentsUsingConfiguration(ctx context.Context, namespaceID, configurationID string) ([]Owned, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT 'agent', id FROM agents WHERE namespace_id = $1 AND configuration_id = $2 ORDER BY id LIMIT 100`,
		namespaceID, configurationID)
	return collect(rs, err, func(r rowScanner) (Owned, error) { var o Owned; return o, r.Scan(&o.Kind, &o.ID) })
}

// StageWorkspaceFiles keeps an Agent's initial workspace files privately.
func (q Q) StageWorkspaceFiles(ctx context.Context, agentID, defaultsID, files string, at int64) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO agent_staged_files (agent_id, defaults_id, files, created_at) VALUES ($1, $2, $3, $4)`,
		agentID, nullStr(defaultsID), files, at)
	return classify(err)
}

// StagedWorkspaceFiles returns an Agent's staged files (JSON) and defaults identity.
func (q Q) StagedWorkspaceFiles(ctx context.Context, agentID string) (files, defaultsID string, err error) {
	var d sql.NullString
	err = q.q.QueryRowContext(ctx, `SELECT files, defaults_id FROM agent_staged_files WHERE agent_id = $1`, agentID).Scan(&files, &d)
	return files, str(d), classify(err)
}

// DropStagedWorkspaceFiles forgets staged files (after activation or deletion).
func (q Q) DropStagedWorkspaceFiles(ctx context.Context, agentID string) error {
	_, err := q.q.ExecContext(ctx, `DELETE FROM agent_staged_files WHERE agent_id = $1`, agentID)
	return classify(err)
}

// RevisionRow is an immutable AgentRevision as stored.
type RevisionRow struct {
	ID            string
	AgentID       string
	NamespaceID   string
	Number        int64
	SchemaVersion int
	Snapshot      string
	CreatedBy     string
	CreatedAt     int64
}

const revisionCols = `id, agent_id, namespace_id, number, schema_version, snapshot, created_by, created_at`

func scanRevision(r rowScanner) (RevisionRow, error) {
	var v RevisionRow
	err := r.Scan(&v.ID, &v.AgentID, &v.NamespaceID, &v.Number, &v.SchemaVersion, &v.Snapshot, &v.CreatedBy, &v.CreatedAt)
	return v, classify(err)
}

// InsertRevision stores a new revision; revisions are never updated.
func (q Q) InsertRevision(ctx context.Context, v RevisionRow) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO agent_revisions (`+revisionCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		v.ID, v.AgentID, v.NamespaceID, v.Number, v.SchemaVersion, v.Snapshot, v.CreatedBy, v.CreatedAt)
	return classify(err)
}

// GetRevision returns one revision of an Agent.
func (q Q) GetRevision(ctx context.Context, namespaceID, agentID, id string) (RevisionRow, error) {
	return scanRevision(q.q.QueryRowContext(ctx, `SELECT `+revisionCols+` FROM agent_revisions
		WHERE namespace_id = $1 AND agent_id = $2 AND id = $3`, namespaceID, agentID, id))
}

// ListRevisions returns an Agent's revisions after the cursor, oldest first.
func (q Q) ListRevisions(ctx context.Context, namespaceID, agentID string, after Cursor, limit int) ([]RevisionRow, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT `+revisionCols+` FROM agent_revisions
		WHERE namespace_id = $1 AND agent_id = $2 AND (created_at > $3 OR (created_at = $3 AND id > $4))
		ORDER BY created_at, id LIMIT $5`, namespaceID, agentID, after.CreatedAt, after.ID, limit)
	return collect(rs, err, scanRevision)
}

// RevisionExists reports ErrNotFound unless the Namespace has the revision.
func (q Q) RevisionExists(ctx context.Context, namespaceID, id string) error {
	var one int
	return classify(q.q.QueryRowContext(ctx, `SELECT 1 FROM agent_revisions WHERE namespace_id = $1 AND id = $2`, namespaceID, id).Scan(&one))
}

// AgentsReferencing lists Agents whose harness binding names a resource
// (a Secret, service account or credential source). IDs are unique, so a
// match in the stored JSON text is exact.
func (q Q) AgentsReferencing(ctx context.Context, namespaceID, id string) ([]Owned, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT 'agent', id FROM agents WHERE namespace_id = $1 AND harness_auth LIKE $2 ESCAPE '\'
		ORDER BY id LIMIT 100`, namespaceID, `%"`+likeEscape(id)+`"%`)
	return collect(rs, err, func(r rowScanner) (Owned, error) { var o Owned; return o, r.Scan(&o.Kind, &o.ID) })
}

// RunningAgents lists Agents desired running with an active revision.
func (q Q) RunningAgents(ctx context.Context) ([]AgentRow, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT `+agentCols+` FROM agents
		WHERE status = 'active' AND desired_state = 'running' AND active_revision_id IS NOT NULL ORDER BY id`)
	return collect(rs, err, scanAgent)
}
