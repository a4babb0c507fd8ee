package store_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/openclaw/occ/internal/store/storetest"
)

// TestSQLiteFilesArePrivate: the database and its WAL and shared-memory
// files are 0600, for a new database and for one an older occ left 0644.
func TestSQLiteFilesArePrivate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		prepare func(path string)
	}{
		{"new", func(string) {}},
		{"left readable by an older occ", func(path string) {
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "occ.db")
			tt.prepare(path)
			storetest.Open(t, "sqlite://"+path) // migrates: writes the WAL
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				fi, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if mode := fi.Mode().Perm(); mode != 0o600 {
					t.Errorf("%s has mode %o; want 600", filepath.Base(p), mode)
				}
			}
		})
	}
}
