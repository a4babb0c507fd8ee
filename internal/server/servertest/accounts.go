package servertest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/backends"
	"github.com/openclaw/occ/internal/server"
)

// withBackendClient replaces the client occ asks Backends with.
func WithBackendClient(c backends.Client) func(*server.Main) {
	return func(m *server.Main) { m.BackendClient = c }
}

// noCanaryAtRest checks the audit log, the logs and (on SQLite) the raw
// database files for the canary.
func NoCanaryAtRest(t *testing.T, e *Env, logs *LockedBuffer, canary string) {
	t.Helper()
	r := e.Call("GET", "/audit-events?pageSize=1000", e.Admin, nil)
	if r.Status != 200 || len(r.List()) == 0 || strings.Contains(ToJSON(r.Body), canary) {
		t.Fatalf("audit events carry the canary (or none were read): %d", r.Status)
	}
	if bytes.Contains(logs.Bytes(), []byte(canary)) {
		t.Fatalf("the logs carry the canary")
	}
	if path, ok := e.M.Config.SQLitePath(); ok {
		for _, f := range []string{path, path + "-wal"} {
			raw, err := os.ReadFile(f)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if bytes.Contains(raw, []byte(canary)) {
				t.Fatalf("%s holds the canary in the clear", filepath.Base(f))
			}
		}
	}
}
