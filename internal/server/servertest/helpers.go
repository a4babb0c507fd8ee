package servertest

import (
	"encoding/json"
	"testing"

	"github.com/openclaw/occ/internal/store"
)

// breakAuditWhen makes the audit inserts whose new row matches the SQL
// condition cond (on NEW, e.g. "NEW.outcome <> 'pending'") fail; "" is
// every insert. repairAudit undoes it.
func BreakAuditWhen(t *testing.T, e *Env, cond string) {
	t.Helper()
	when := ""
	if cond != "" {
		when = " WHEN (" + cond + ")"
	}
	stmts := []string{`CREATE TRIGGER audit_broken BEFORE INSERT ON audit_events FOR EACH ROW` + when + ` BEGIN SELECT RAISE(ABORT, 'audit unavailable'); END`}
	if e.M.Store().Dialect() != store.SQLite {
		stmts = []string{
			`CREATE FUNCTION audit_broken() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'audit unavailable'; END $$ LANGUAGE plpgsql`,
			`CREATE TRIGGER audit_broken BEFORE INSERT ON audit_events FOR EACH ROW` + when + ` EXECUTE FUNCTION audit_broken()`,
		}
	}
	execAll(t, e, stmts)
}

// repairAudit removes what breakAuditWhen installed.
func RepairAudit(t *testing.T, e *Env) {
	t.Helper()
	stmts := []string{`DROP TRIGGER audit_broken`}
	if e.M.Store().Dialect() != store.SQLite {
		stmts = []string{`DROP TRIGGER audit_broken ON audit_events`, `DROP FUNCTION audit_broken()`}
	}
	execAll(t, e, stmts)
}

func execAll(t *testing.T, e *Env, stmts []string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := e.M.Store().DB().Exec(s); err != nil {
			t.Fatal(err)
		}
	}
}

func ToJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
