// Package storetest gives each test a fresh database on every dialect occ
// supports: a SQLite file, and a private schema in the PostgreSQL that
// OCC_TEST_POSTGRES_URL names (scripts/test starts one).
package storetest

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" driver for schema set-up

	"github.com/openclaw/occ/internal/jobs"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// Dialects are the lanes every store and API suite runs on.
var Dialects = []string{"sqlite", "postgres"}

// URL returns a database URL for a fresh, empty database of the dialect,
// removed when the test ends. The PostgreSQL lane needs
// OCC_TEST_POSTGRES_URL; without it the test fails and says so (the lane is
// never silently skipped).
func URL(t testing.TB, dialect string) string {
	t.Helper()
	switch dialect {
	case "sqlite":
		return "sqlite://" + filepath.Join(t.TempDir(), "occ.db")
	case "postgres":
		return postgresSchema(t)
	}
	t.Fatalf("unknown dialect %q", dialect)
	return ""
}

func postgresSchema(t testing.TB) string {
	base := os.Getenv("OCC_TEST_POSTGRES_URL")
	if base == "" {
		t.Fatal("OCC_TEST_POSTGRES_URL is not set: run the tests with scripts/test, which starts PostgreSQL")
	}
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	schema := "t_" + strings.ReplaceAll(occ.NewUUID(), "-", "")
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer db.Close()
		_, _ = db.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Each runs fn once per dialect as a subtest.
func Each(t *testing.T, fn func(t *testing.T, databaseURL string)) {
	for _, d := range Dialects {
		t.Run(d, func(t *testing.T) { fn(t, URL(t, d)) })
	}
}

// Open connects to the database at url and migrates it as occ serve does
// (occ's migrations, then River's); the pool is closed when the test ends.
func Open(t testing.TB, url string) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx, jobs.Migrate(st)); err != nil {
		t.Fatal(err)
	}
	return st
}
