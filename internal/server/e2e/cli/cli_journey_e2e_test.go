package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/cli"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestCLIJourney walks a new user's CLI session against a booted server
// (SQLite, the in-memory compute driver) with no OCC_* variable set: occ
// login saves a context that every later command uses; the same verbs
// for Secrets, Configurations (edit in $EDITOR) and Presets; -o json,
// yaml, name and jsonpath; audit list with filters; and the exit codes:
// 3 for not found, 4 for a failed deployment (deploy --wait and
// deployments watch), 2 for an unknown command.
func TestCLIJourney(t *testing.T) {
	fake := servertest.NewFakeCompute(t)
	e := servertest.Boot(t, storetest.URL(t, "sqlite"), fake)
	dir := t.TempDir()
	for _, k := range []string{"OCC_URL", "OCC_KEY", "OCC_KEY_FILE", "OCC_NAMESPACE", "OCC_CONTEXT"} {
		t.Setenv(k, "")
	}
	t.Setenv("OCC_CLIENT_CONFIG", filepath.Join(dir, "occ", "config.yaml"))
	const canary = "sk-journey-canary"
	occ, must := servertest.CliRunner(t, canary, e.Admin)
	expect := func(want int, args ...string) string {
		t.Helper()
		out, errOut, code := occ(args...)
		if code != want {
			t.Fatalf("occ %v = %d, want %d\n%s%s", args, code, want, out, errOut)
		}
		return errOut
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// Login, then no variable: the context carries URL, key and Namespace.
	keyFile := write("admin.key", e.Admin+"\n")
	must("login", "--url", e.Base, "--key-file", keyFile, "--namespace", "default", "--context", "lab")
	if out := must("context", "current"); out != "lab\n" {
		t.Fatalf("context current = %q", out)
	}
	if out := must("namespaces", "list", "-o", "jsonpath={[*].name}"); !strings.Contains(out, "default") {
		t.Fatalf("namespaces = %q", out)
	}
	expect(1, "namespaces", "list", "--url", "http://127.0.0.1:1") // the flag wins over the context

	// Secrets: create, update from a file, get; the value never shows.
	must("secrets", "create", "--name", "openai", "--value-file", write("v1", canary+"-1\n"))
	must("secrets", "update", "openai", "--value-file", write("v2", canary+"-2\n"))
	if out := must("secrets", "get", "openai", "-o", "jsonpath={.version}"); out != "2\n" {
		t.Fatalf("version = %q", out)
	}
	secID := strings.TrimSpace(must("secrets", "get", "openai", "-o", "name"))

	// Configurations: create, edit in $EDITOR, read back.
	must("configurations", "create", "--name", "support", "--file", write("doc.json", `{"agents":{"defaults":{"model":"openai/gpt-5"}}}`))
	editor := write("editor.sh", "#!/bin/sh\nsed -i 's#openai/gpt-5#openai/gpt-5-mini#' \"$1\"\n")
	if err := os.Chmod(editor, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("EDITOR", editor)
	must("configurations", "edit", "support")
	if out := must("configurations", "get", "support", "-o", "jsonpath={.generation} {.values.agents.defaults.model}"); out != "2 openai/gpt-5-mini\n" {
		t.Fatalf("after edit = %q", out)
	}
	t.Setenv("EDITOR", "true")
	if errOut := expect(0, "configurations", "edit", "support"); errOut != "no changes\n" {
		t.Fatalf("unchanged edit = %q", errOut)
	}

	// Presets: create from YAML, get as YAML, delete; then not found.
	must("presets", "create", "-f", write("preset.yaml", "name: standard\nexecutionMode: embedded\n"))
	if out := must("presets", "get", "standard", "-o", "yaml"); !strings.Contains(out, "executionMode: embedded") {
		t.Fatalf("preset yaml:\n%s", out)
	}
	must("presets", "delete", "standard")
	expect(cli.ExitNotFound, "presets", "get", "standard")
	expect(cli.ExitNotFound, "secrets", "get", "sec_00000000-0000-4000-8000-000000000999")
	if errOut := expect(cli.ExitUsage, "secrets", "frobnicate"); !strings.Contains(errOut, "Run 'occ secrets --help' for usage.") {
		t.Fatalf("unknown command: %q", errOut)
	}

	// A deployment the runtime fails: exit 4 from deploy --wait and from
	// watch; deployments list shows it.
	must("agents", "create", "--name", "bot", "--configuration", "support", "--secret-api-key", "openai")
	must("agents", "grant-secrets", "bot")
	agent := strings.TrimSpace(must("agents", "get", "bot", "-o", "name"))
	fake.Set(func(f *servertest.FakeCompute) {
		f.Held[agent] = &compute.RuntimeFailure{Component: "gateway", Check: "model-probe", Code: compute.HeldAuthenticationFailed}
	})
	expect(cli.ExitDeploymentFailed, "agents", "deploy", "bot", "--wait", "--timeout", "2m")
	expect(cli.ExitDeploymentFailed, "deployments", "watch", "bot", "--timeout", "2m")
	if out := must("deployments", "list", "bot"); !strings.Contains(out, "failed") || !strings.Contains(out, "RUNTIME_") {
		t.Fatalf("deployments list:\n%s", out)
	}

	// The audit log, filtered by resource, then by that resource's action.
	var events []map[string]any
	if err := json.Unmarshal([]byte(must("audit", "list", "--resource", secID, "-o", "json")), &events); err != nil || len(events) < 2 {
		t.Fatalf("audit of the Secret: %v %v", events, err)
	}
	action := events[0]["action"].(string)
	for _, line := range strings.Split(strings.TrimSpace(must("audit", "list", "--resource", secID, "--action", action, "-o", "jsonpath={range [*]}{.action}{\"\\n\"}{end}")), "\n") {
		if line != action {
			t.Fatalf("audit --action %s listed %q", action, line)
		}
	}
}
