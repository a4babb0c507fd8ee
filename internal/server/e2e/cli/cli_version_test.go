package cli_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/cli"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestCLIVersion: `occ version` prints this binary's build version and the
// server's with its pinned OpenClaw; an unreachable server is exit 1 after
// the client's line, unless --client.
func TestCLIVersion(t *testing.T) {
	t.Parallel()
	e := servertest.Boot(t, storetest.URL(t, "sqlite"), servertest.NewFakeCompute(t))
	run := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := cli.Main(args, &out, &errOut, cli.Server{Version: server.Version})
		return code, out.String() + errOut.String()
	}
	code, out := run("version", "--url", e.Base)
	want := "client: occ " + server.Version + "\nserver: occ " + server.Version + " (OpenClaw " + occ.PinnedOpenClawVersion + ") at " + e.Base + "\n"
	if code != 0 || out != want || server.Version == "" {
		t.Fatalf("occ version = %d %q, want %q", code, out, want)
	}
	code, out = run("version", "--url", "http://127.0.0.1:1")
	if code != 1 || !strings.HasPrefix(out, "client: occ ") || !strings.Contains(out, "server at http://127.0.0.1:1") {
		t.Fatalf("occ version, server unreachable = %d %q", code, out)
	}
	if code, out = run("version", "--client", "--url", "http://127.0.0.1:1"); code != 0 || out != "client: occ "+server.Version+"\n" {
		t.Fatalf("occ version --client = %d %q", code, out)
	}
}

// TestCLIMigrate: `occ migrate` names each migration it applied to a new
// database, and says the schema is current the second time.
func TestCLIMigrate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := func() (int, string) {
		var out, errOut bytes.Buffer
		code := cli.Main([]string{"migrate", "--data-dir", dir}, &out, &errOut, cli.Server{Migrate: server.Migrate})
		return code, out.String() + errOut.String()
	}
	code, out := run()
	if code != 0 || !strings.Contains(out, "occ: applied migration 00001_foundation.sql\n") || !strings.Contains(out, "occ: applied migration 00010_namespace_names.sql\n") {
		t.Fatalf("first occ migrate = %d %q", code, out)
	}
	if code, out := run(); code != 0 || out != "occ: the database schema is current; nothing to apply\n" {
		t.Fatalf("second occ migrate = %d %q", code, out)
	}
}
