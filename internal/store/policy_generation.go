package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pressly/goose/v3"
)

// The policy generation is one number that every change to what
// LoadPolicy reads moves forward, in the transaction of the change. The
// statement that authenticates a request reads it with the credential
// (Holder.PolicyGeneration), so a process may reuse policy rows it read
// at that generation and still answer every request with the policy as
// of its authentication: a revoked grant stops working with the next
// request, on every replica.
//
// Triggers move it, so no write path can forget to: any row of bindings,
// restrictions or role_permissions written or deleted, any principal
// updated, and any principal deleted but an Agent's. (An Agent's service
// principal never authenticates a request, so no request reuses its rows;
// Agents come and go in bulk, and their deletions must not contend on
// this one row.)

// policyGenerationVersion is the schema version of the migration below.
const policyGenerationVersion = 12

// policyGenerationMigration creates the generation and its triggers in
// each dialect's own trigger syntax.
func policyGenerationMigration(d Dialect) *goose.Migration {
	up := sqlitePolicyGenerationUp
	if d == Postgres {
		up = postgresPolicyGenerationUp
	}
	m := goose.NewGoMigration(policyGenerationVersion,
		&goose.GoFunc{RunTx: execAll(up)}, &goose.GoFunc{RunTx: execAll(policyGenerationDown(d))})
	m.Source = "00012_policy_generation.go"
	return m
}

func execAll(stmts []string) func(context.Context, *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		for _, s := range stmts {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("policy generation: %w", err)
			}
		}
		return nil
	}
}

// policyTriggers are the tables whose rows LoadPolicy reads, with the
// events that change them and the condition on a deleted row (SQL over OLD,
// "" for every row).
var policyTriggers = []struct{ table, event, when string }{
	{"bindings", "INSERT", ""}, {"bindings", "UPDATE", ""}, {"bindings", "DELETE", ""},
	{"restrictions", "INSERT", ""}, {"restrictions", "UPDATE", ""}, {"restrictions", "DELETE", ""},
	{"role_permissions", "INSERT", ""}, {"role_permissions", "UPDATE", ""}, {"role_permissions", "DELETE", ""},
	{"principals", "UPDATE", ""}, {"principals", "DELETE", "OLD.agent_id IS NULL"},
}

func triggerName(table, event string) string { return "policy_generation_" + table + "_" + event }

const createPolicyGeneration = `CREATE TABLE policy_generation (generation BIGINT NOT NULL)`
const seedPolicyGeneration = `INSERT INTO policy_generation (generation) VALUES (1)`
const bumpPolicyGeneration = `UPDATE policy_generation SET generation = generation + 1`

var sqlitePolicyGenerationUp = func() []string {
	out := []string{createPolicyGeneration, seedPolicyGeneration}
	for _, t := range policyTriggers {
		when := ""
		if t.when != "" {
			when = " WHEN " + t.when
		}
		out = append(out, fmt.Sprintf("CREATE TRIGGER %s AFTER %s ON %s FOR EACH ROW%s BEGIN %s; END",
			triggerName(t.table, t.event), t.event, t.table, when, bumpPolicyGeneration))
	}
	return out
}()

var postgresPolicyGenerationUp = func() []string {
	out := []string{createPolicyGeneration, seedPolicyGeneration,
		`CREATE FUNCTION occ_policy_changed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ` + bumpPolicyGeneration + `; RETURN NULL; END $$`}
	for _, t := range policyTriggers {
		when := ""
		if t.when != "" {
			when = " WHEN (" + t.when + ")"
		}
		out = append(out, fmt.Sprintf("CREATE TRIGGER %s AFTER %s ON %s FOR EACH ROW%s EXECUTE FUNCTION occ_policy_changed()",
			triggerName(t.table, t.event), t.event, t.table, when))
	}
	return out
}()

func policyGenerationDown(d Dialect) []string {
	var out []string
	for _, t := range policyTriggers {
		drop := "DROP TRIGGER " + triggerName(t.table, t.event)
		if d == Postgres {
			drop += " ON " + t.table
		}
		out = append(out, drop)
	}
	if d == Postgres {
		out = append(out, `DROP FUNCTION occ_policy_changed()`)
	}
	return append(out, `DROP TABLE policy_generation`)
}

// policyGenerationCol reads the generation in a statement that
// authenticates, so both come from one snapshot.
const policyGenerationCol = `(SELECT generation FROM policy_generation)`
