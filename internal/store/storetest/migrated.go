package storetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/openclaw/occ/internal/jobs"
	"github.com/openclaw/occ/internal/store"
)

// Migrated returns, like URL, a database of the test's own, already
// migrated as occ serve migrates it (occ's migrations, then River's). A
// SQLite one is a copy of a file this test binary migrated once: under the
// race detector SQLite's migrations cost more CPU than most tests. Tests of
// the migrations themselves take URL.
func Migrated(t testing.TB, dialect string) string {
	t.Helper()
	if dialect != "sqlite" {
		url := URL(t, dialect)
		Open(t, url)
		return url
	}
	path := filepath.Join(t.TempDir(), "occ.db")
	MigratedFile(t, path)
	return "sqlite://" + path
}

// MigratedFile writes a migrated SQLite database (Migrated's copy) at path.
func MigratedFile(t testing.TB, path string) {
	t.Helper()
	b, err := migratedTemplate()
	if err != nil {
		t.Fatalf("migrate the SQLite template: %v", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// migratedTemplate migrates one SQLite file, once per test binary, and
// returns its bytes: the write-ahead log checkpointed into the file and
// the connections closed, so the file alone is the whole database.
var migratedTemplate = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "occ-migrated-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "occ.db")
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+path)
	if err != nil {
		return nil, err
	}
	err = st.Migrate(ctx, jobs.Migrate(st))
	if err == nil {
		_, err = st.DB().ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	}
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return nil, fmt.Errorf("%s-wal holds %d bytes after the checkpoint: a copy of the file alone would lose them", path, fi.Size())
	}
	return os.ReadFile(path)
})

// EachMigrated runs fn once per dialect as a subtest, on a Migrated
// database.
func EachMigrated(t *testing.T, fn func(t *testing.T, databaseURL string)) {
	for _, d := range Dialects {
		t.Run(d, func(t *testing.T) { fn(t, Migrated(t, d)) })
	}
}
