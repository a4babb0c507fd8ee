package servertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/store"
)

// unfinishedJobs lists, read straight from a server's database, the River
// jobs that are not finalized (completed, cancelled — a superseded
// deployment's job — or discarded) and the live work claims: what a test
// that waited in vain prints to say where the worker stood.
func unfinishedJobs(t testing.TB, dbURL string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out []string
	query := func(q string, row func(scan func(...any) error) (string, error)) {
		rows, err := st.DB().QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			line, err := row(rows.Scan)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, line)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	query(`SELECT id, kind, state, attempt, scheduled_at, CAST(args AS TEXT) FROM river_job
		WHERE state NOT IN ('completed', 'cancelled', 'discarded') ORDER BY id`, func(scan func(...any) error) (string, error) {
		var id int64
		var kind, state, scheduled, args string
		var attempt int
		err := scan(&id, &kind, &state, &attempt, &scheduled, &args)
		return fmt.Sprintf("job %d %s %s attempt %d scheduled at %s %s", id, kind, state, attempt, scheduled, args), err
	})
	query(`SELECT resource_id, expires_at FROM work_claims ORDER BY resource_id`, func(scan func(...any) error) (string, error) {
		var resource string
		var expires int64
		err := scan(&resource, &expires)
		return fmt.Sprintf("claim on %s until %s", resource, time.UnixMilli(expires).UTC().Format(time.RFC3339Nano)), err
	})
	return out
}
