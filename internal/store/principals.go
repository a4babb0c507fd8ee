package store

import (
	"context"
	"database/sql"

	"github.com/openclaw/occ/internal/occ"
)

const principalCols = `id, kind, name, email, password_hash, namespace_id, agent_id, disabled, created_at, updated_at, version`

func scanPrincipal(r rowScanner) (occ.Principal, error) {
	var p occ.Principal
	var email, hash, ns, agent sql.NullString
	var disabled int
	var created, updated int64
	err := r.Scan(&p.ID, &p.Kind, &p.Name, &email, &hash, &ns, &agent, &disabled, &created, &updated, &p.Version)
	p.Email, p.PasswordHash, p.NamespaceID, p.AgentID = str(email), str(hash), str(ns), str(agent)
	p.Disabled = disabled != 0
	p.CreatedAt, p.UpdatedAt = occ.FromMillis(created), occ.FromMillis(updated)
	return p, classify(err)
}

// InsertPrincipal adds a human or service principal; a taken email is ErrConflict.
func (q Q) InsertPrincipal(ctx context.Context, p occ.Principal) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO principals (`+principalCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		p.ID, p.Kind, p.Name, nullStr(p.Email), nullStr(p.PasswordHash), nullStr(p.NamespaceID), nullStr(p.AgentID),
		boolInt(p.Disabled), occ.Millis(p.CreatedAt), occ.Millis(p.UpdatedAt), p.Version)
	return classify(err)
}

// GetPrincipal returns one principal.
func (q Q) GetPrincipal(ctx context.Context, id string) (occ.Principal, error) {
	return scanPrincipal(q.q.QueryRowContext(ctx, `SELECT `+principalCols+` FROM principals WHERE id = $1`, id))
}

// GetPrincipalByEmail returns the human with that email.
func (q Q) GetPrincipalByEmail(ctx context.Context, email string) (occ.Principal, error) {
	return scanPrincipal(q.q.QueryRowContext(ctx,
		`SELECT `+principalCols+` FROM principals WHERE kind = 'human' AND email = $1`, email))
}

// ListPrincipals returns principals of one kind after the cursor.
func (q Q) ListPrincipals(ctx context.Context, kind occ.PrincipalKind, after Cursor, limit int) ([]occ.Principal, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT `+principalCols+` FROM principals
		WHERE kind = $1 AND (created_at > $2 OR (created_at = $2 AND id > $3))
		ORDER BY created_at, id LIMIT $4`, kind, after.CreatedAt, after.ID, limit)
	return collect(rs, err, scanPrincipal)
}

// SetPrincipalDisabled enables or disables a principal.
func (q Q) SetPrincipalDisabled(ctx context.Context, id string, disabled bool, at int64) error {
	return affected(q.q.ExecContext(ctx,
		`UPDATE principals SET disabled = $1, updated_at = $2, version = version + 1 WHERE id = $3`, boolInt(disabled), at, id))
}

// DeletePrincipal removes a principal with its keys, sessions, bindings and
// restrictions (by foreign-key cascade).
func (q Q) DeletePrincipal(ctx context.Context, id string) error {
	return affected(q.q.ExecContext(ctx, `DELETE FROM principals WHERE id = $1`, id))
}

// DeleteNamespacePrincipals removes every service principal scoped to a
// Namespace, returning their IDs.
func (q Q) DeleteNamespacePrincipals(ctx context.Context, namespaceID string) ([]string, error) {
	rs, err := q.q.QueryContext(ctx, `SELECT id FROM principals WHERE namespace_id = $1`, namespaceID)
	ids, err := collect(rs, err, func(r rowScanner) (string, error) { var s string; return s, r.Scan(&s) })
	if err != nil {
		return nil, err
	}
	_, err = q.q.ExecContext(ctx, `DELETE FROM principals WHERE namespace_id = $1`, namespaceID)
	return ids, classify(err)
}

// ScopePrincipalForTest moves a principal into a Namespace's scope; tests use
// it until the service-principal API exists.
func (q Q) ScopePrincipalForTest(ctx context.Context, id, namespaceID string) error {
	return affected(q.q.ExecContext(ctx, `UPDATE principals SET namespace_id = $1 WHERE id = $2`, namespaceID, id))
}

// Holder is what authentication needs of the principal that holds a
// credential (a service key or a session), read with the credential.
type Holder struct {
	Kind     occ.PrincipalKind
	Disabled bool
	AgentID  string // set: an Agent's service principal
	// PolicyGeneration is the policy's generation as the credential was
	// read (see policy_generation.go).
	PolicyGeneration int64
}

// holderCols are a Holder's columns of principals aliased p.
const holderCols = `p.kind, p.disabled, p.agent_id, ` + policyGenerationCol

// holderRow receives holderCols as scanned.
type holderRow struct {
	kind     occ.PrincipalKind
	disabled int
	agent    sql.NullString
	gen      int64
}

func (r *holderRow) dests() []any { return []any{&r.kind, &r.disabled, &r.agent, &r.gen} }

func (r *holderRow) holder() Holder {
	return Holder{Kind: r.kind, Disabled: r.disabled != 0, AgentID: str(r.agent), PolicyGeneration: r.gen}
}
