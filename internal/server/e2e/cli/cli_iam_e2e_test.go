package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestCLIGrantSecretsDeploy walks the README's deploy walkthrough with the
// real occ command line against a booted server (SQLite, the in-memory
// compute driver): a Secret, a Configuration and an Agent bound to the
// Secret; the deploy refused until `occ agents grant-secrets` binds the
// Agent's service principal, which a second run leaves as it is; `occ
// agents patch` keeping the Configuration; then `occ agents deploy --wait`
// succeeds with the Secret's value in the gateway's environment and never
// on the command line's output.
func TestCLIGrantSecretsDeploy(t *testing.T) {
	fake := servertest.NewFakeCompute(t)
	e := servertest.Boot(t, storetest.URL(t, "sqlite"), fake)
	t.Setenv("OCC_URL", e.Base)
	t.Setenv("OCC_KEY", e.Admin)
	t.Setenv("OCC_NAMESPACE", "default")
	const canary = "sk-cli-e2e-canary"
	occ, must := servertest.CliRunner(t, canary)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	must("secrets", "create", "--name", "openai", "--value-file", write("openai.key", canary+"\n"))
	must("configurations", "create", "--name", "support", "--file", write("openclaw.json", `{"agents":{"defaults":{"model":"openai/gpt-5"}}}`))
	must("agents", "create", "--name", "bot", "--configuration", "support", "--secret-api-key", "openai")
	agent := servertest.OutputField(t, must("agents", "get", "bot"), "id")
	principal := servertest.OutputField(t, must("agents", "get", "bot"), "service principal")

	// Before the grant the deploy names the Agent's principal and the
	// command that grants it.
	_, errOut, code := occ("agents", "deploy", "bot")
	if code != 1 || !strings.HasPrefix(errOut, "occ: FORBIDDEN: ") || !strings.Contains(errOut, principal) ||
		!strings.Contains(errOut, "occ agents grant-secrets bot -n ns_") {
		t.Fatalf("deploy before the grant = %d %q", code, errOut)
	}

	out := must("agents", "grant-secrets", "bot")
	if !strings.Contains(out, "created role agent-secret-operate") || !strings.Contains(out, "bound agent bot (service principal "+principal+")") {
		t.Fatalf("grant-secrets:\n%s", out)
	}
	out = must("agents", "grant-secrets", agent)
	if !strings.Contains(out, "reusing role agent-secret-operate") || !strings.Contains(out, "nothing to do") {
		t.Fatalf("grant-secrets again:\n%s", out)
	}
	out = must("iam", "bindings", "list", "--principal", "agent:bot")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || !strings.Contains(lines[1], principal) {
		t.Fatalf("bindings of the Agent:\n%s", out)
	}
	_, errOut, code = occ("iam", "bindings", "create", "--principal", "agent:bot", "--role", "agent-secret-operate")
	if code != 1 || !strings.HasPrefix(errOut, "occ: RESOURCE_CONFLICT: Binding bnd_") {
		t.Fatalf("the same binding again = %d %q", code, errOut)
	}

	// A patch without --configuration keeps the Agent's.
	out = must("agents", "patch", "bot", "--execution-mode", "embedded")
	if servertest.OutputField(t, out, "configuration") != servertest.OutputField(t, must("configurations", "get", "support"), "id") {
		t.Fatalf("patched agent:\n%s", out)
	}

	out, errOut, code = occ("agents", "deploy", "bot", "--wait", "--timeout", "2m")
	if code != 0 || servertest.OutputField(t, out, "status") != "succeeded" || !strings.Contains(errOut, "admitted (revision 1 of agent "+agent+")") {
		t.Fatalf("deploy --wait = %d\n%s%s", code, out, errOut)
	}
	fake.Get(func(f *servertest.FakeCompute) {
		if f.Active[agent] == "" || f.EnvSeen[agent]["OPENAI_API_KEY"] != canary {
			t.Fatalf("driver: active %v, env keys %d", f.Active, len(f.EnvSeen[agent]))
		}
	})
}
