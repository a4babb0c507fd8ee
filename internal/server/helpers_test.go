package server_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

type storeTx = store.Tx

func scopePrincipal(tx *store.Tx, principalID, namespaceID string) error {
	return tx.ScopePrincipalForTest(context.Background(), principalID, namespaceID)
}

// breakAudit makes every audit insert fail, as a full disk or revoked
// grant would.
func breakAudit(t *testing.T, e *env) { breakAuditWhen(t, e, "") }

// breakAuditWhen makes the audit inserts whose new row matches the SQL
// condition cond (on NEW, e.g. "NEW.outcome <> 'pending'") fail; "" is
// every insert. repairAudit undoes it.
func breakAuditWhen(t *testing.T, e *env, cond string) {
	t.Helper()
	when := ""
	if cond != "" {
		when = " WHEN (" + cond + ")"
	}
	stmts := []string{`CREATE TRIGGER audit_broken BEFORE INSERT ON audit_events FOR EACH ROW` + when + ` BEGIN SELECT RAISE(ABORT, 'audit unavailable'); END`}
	if e.m.Store().Dialect() != store.SQLite {
		stmts = []string{
			`CREATE FUNCTION audit_broken() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'audit unavailable'; END $$ LANGUAGE plpgsql`,
			`CREATE TRIGGER audit_broken BEFORE INSERT ON audit_events FOR EACH ROW` + when + ` EXECUTE FUNCTION audit_broken()`,
		}
	}
	execAll(t, e, stmts)
}

// repairAudit removes what breakAuditWhen installed.
func repairAudit(t *testing.T, e *env) {
	t.Helper()
	stmts := []string{`DROP TRIGGER audit_broken`}
	if e.m.Store().Dialect() != store.SQLite {
		stmts = []string{`DROP TRIGGER audit_broken ON audit_events`, `DROP FUNCTION audit_broken()`}
	}
	execAll(t, e, stmts)
}

func execAll(t *testing.T, e *env, stmts []string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := e.m.Store().DB().Exec(s); err != nil {
			t.Fatal(err)
		}
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

var nsCreate = []occ.Permission{occ.P(occ.KindNamespace, occ.ActionCreate)}

// insertRevision stores a revision and a settled deployment of it straight
// in the database, for read routes that need one without a worker run.
func insertRevision(e *env, nsID, agentID, configurationID string) string {
	e.t.Helper()
	rev := occ.Revision{ID: occ.NewID(occ.PrefixRevision), AgentID: agentID, NamespaceID: nsID, Number: time.Now().UnixNano() % 1_000_000_000,
		CreatedBy: "test", CreatedAt: time.Now(), Snapshot: &occ.RevisionSnapshot{
			Configuration: occ.ConfigurationSnapshot{ID: configurationID, Kind: "agent", Generation: 1, Document: map[string]any{}},
			ExecutionMode: "embedded", Plugins: map[string]occ.PluginSelection{}, ComputeDriver: "local", ServicePrincipalID: "spn_x"}}
	row, err := store.EncodeRevision(rev)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.m.Store().InsertRevision(context.Background(), row); err != nil {
		e.t.Fatal(err)
	}
	now := occ.Millis(time.Now())
	if err := e.m.Store().InsertDeployment(context.Background(), store.DeploymentRow{RevisionID: rev.ID, AgentID: agentID, NamespaceID: nsID,
		ActorID: "test", Status: "failed", ErrorCode: "REVISION_SUPERSEDED", Warnings: "[]", AdmittedAt: now, FinishedAt: now, UpdatedAt: now}); err != nil {
		e.t.Fatal(err)
	}
	return rev.ID
}
