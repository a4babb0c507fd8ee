package api_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/cachetest"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// tsClientTools generate and compile a TypeScript client of the API, with
// a second generator independent of ours (openapi-typescript's types and
// openapi-fetch's client), pinned.
var tsClientTools = []string{"openapi-typescript@7.13.0", "openapi-fetch@0.17.0", "typescript@5.9.3", "@types/node@20.19.25"}

// TestTypeScriptClient: a TypeScript client generated from api/openapi.yaml
// by openapi-typescript compiles with tsc (strict) against api/tsclient's
// program, which then creates, gets, lists and deletes a Configuration on
// a running occ and reads the typed error envelope of a 404.
func TestTypeScriptClient(t *testing.T) {
	t.Parallel()
	tools := cachetest.NPM(t, tsClientTools...)
	e := servertest.Boot(t, storetest.Migrated(t, "sqlite"), servertest.NewFakeCompute(t))
	dir := t.TempDir()
	for _, f := range []string{"roundtrip.ts", "tsconfig.json"} {
		b, err := os.ReadFile(filepath.Join(servertest.RepoRoot(t), "api", "tsclient", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private": true, "type": "module"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(tools, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(servertest.RepoRoot(t), "api", "openapi.yaml")
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	bin := filepath.Join(dir, "node_modules", ".bin")
	run(filepath.Join(bin, "openapi-typescript"), spec, "-o", "schema.d.ts")
	run(filepath.Join(bin, "tsc"), "-p", "tsconfig.json")
	if out := run("node", filepath.Join("out", "roundtrip.js"), e.Base, e.Admin); !strings.HasPrefix(out, "OK cfg_") {
		t.Fatalf("the TypeScript client said %q", out)
	}
}
