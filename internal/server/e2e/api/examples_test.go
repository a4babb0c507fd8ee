package api_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/cli"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestExampleConfigurations: every document under examples/ is accepted
// as a Configuration by `occ configurations create`, and an Agent on it
// deploys with its model key in the environment variable the document
// (or the default model) expects, as examples/README.md says.
func TestExampleConfigurations(t *testing.T) {
	fake := servertest.NewFakeCompute(t)
	e := servertest.Boot(t, storetest.Migrated(t, "sqlite"), fake)
	t.Setenv("OCC_URL", e.Base)
	t.Setenv("OCC_KEY", e.Admin)
	t.Setenv("OCC_NAMESPACE", "default")
	must := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := cli.Main(args, &out, &errOut, cli.Server{}); code != 0 {
			t.Fatalf("occ %v = %d\n%s%s", args, code, out.String(), errOut.String())
		}
		return out.String()
	}
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("sk-example-canary\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	must("secrets", "create", "--name", "model-key", "--value-file", keyFile)

	files, err := filepath.Glob(filepath.Join(servertest.RepoRoot(t), "examples", "*.json"))
	if err != nil || len(files) < 3 {
		t.Fatalf("examples: %v %v", files, err)
	}
	want := map[string][]string{ // example → the variable its key reaches, and extra flags
		"openai":            {"OPENAI_API_KEY"},
		"anthropic":         {"ANTHROPIC_API_KEY"},
		"openai-compatible": {"MYLLM_API_KEY", "--secret-env", "MYLLM_API_KEY=model-key"},
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		w, ok := want[name]
		if !ok {
			t.Fatalf("example %s is not described by this test (and examples/README.md)", file)
		}
		must(append([]string{"configurations", "create", "--name", name, "--file", file}, w[1:]...)...)
		must("agents", "create", "--name", name, "--configuration", name, "--secret-api-key", "model-key")
		must("agents", "grant-secrets", name)
		must("agents", "deploy", name, "--wait")
		agent := servertest.OutputField(t, must("agents", "get", name), "id")
		fake.Get(func(f *servertest.FakeCompute) {
			if got := f.EnvSeen[agent][w[0]]; got != "sk-example-canary" {
				t.Errorf("%s: the gateway's %s = %q, want the Secret's value", name, w[0], got)
			}
		})
	}
}
