package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/store"
)

// TestSQLiteStatementCache: with every statement kept prepared, a SQLite
// store answers as it would without: a query run again while its own rows
// are open, more distinct statements than the cache holds, a table changed
// under a cached statement, a query whose context ends mid-read, and a
// transaction rolled back all read and write what they should.
func TestSQLiteStatementCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "occ.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	db := st.DB()
	mustExec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	count := func(q string, args ...any) (n int) {
		t.Helper()
		if err := db.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	mustExec(`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`)
	const insert = `INSERT INTO t (id, v) VALUES (?, ?)`
	for i := 1; i <= 5; i++ {
		mustExec(insert, i, fmt.Sprint("v", i))
	}

	t.Run("the same query inside a loop over its own rows", func(t *testing.T) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		const byID = `SELECT id, v FROM t WHERE id >= ? ORDER BY id`
		rows, err := tx.QueryContext(ctx, byID, 4)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var id int
			var v string
			if err := rows.Scan(&id, &v); err != nil {
				t.Fatal(err)
			}
			var inner string
			if err := tx.QueryRowContext(ctx, byID, id).Scan(new(int), &inner); err != nil {
				t.Fatal(err)
			}
			got = append(got, v+"="+inner)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != "[v4=v4 v5=v5]" {
			t.Errorf("nested reads: %v", got)
		}
	})

	t.Run("more distinct statements than the cache holds", func(t *testing.T) {
		for i := range 1200 {
			if n := count(fmt.Sprintf(`SELECT count(*) + %d FROM t`, i)); n != 5+i {
				t.Fatalf("statement %d answered %d, want %d", i, n, 5+i)
			}
		}
		if n := count(`SELECT count(*) + 0 FROM t`); n != 5 {
			t.Errorf("an evicted statement prepared again answered %d, want 5", n)
		}
	})

	t.Run("a table changed under a cached statement", func(t *testing.T) {
		const all = `SELECT * FROM t ORDER BY id LIMIT 1`
		if cols := columns(t, db, all); cols != 2 {
			t.Fatalf("columns before: %d", cols)
		}
		mustExec(`ALTER TABLE t ADD COLUMN w TEXT NOT NULL DEFAULT 'x'`)
		if cols := columns(t, db, all); cols != 3 {
			t.Errorf("a cached SELECT * after a new column read %d columns, want 3", cols)
		}
	})

	t.Run("a query whose context ends while it reads", func(t *testing.T) {
		const slow = `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c`
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if err := db.QueryRowContext(cctx, slow).Scan(new(int)); err == nil {
			t.Fatal("an endless query ended without an error")
		}
		if n := count(`SELECT count(*) FROM t WHERE id <= ?`, 3); n != 3 {
			t.Errorf("after an interrupted query: %d rows, want 3", n)
		}
	})

	t.Run("a rolled back transaction writes nothing", func(t *testing.T) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, insert, 6, "v6"); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		mustExec(insert, 7, "v7")
		if n := count(`SELECT count(*) FROM t WHERE id IN (6, 7)`); n != 1 {
			t.Errorf("rows 6 and 7 after rolling 6 back: %d, want 1", n)
		}
	})
}

// columns runs q and returns how many columns its rows have.
func columns(t *testing.T, db *sql.DB, q string) int {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	return len(cols)
}
