package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/cli"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestCLIAdminNouns drives the installation administrator's nouns with
// the real command line against a booted server: a Namespace created,
// renamed and deleted; a service key issued into a 0600 file (never
// printed), usable for `occ login`, then revoked and refused; a
// restriction that takes a permission back, then its removal.
func TestCLIAdminNouns(t *testing.T) {
	e := servertest.Boot(t, storetest.URL(t, "sqlite"), servertest.NewFakeCompute(t))
	dir := t.TempDir()
	t.Setenv("OCC_CLIENT_CONFIG", filepath.Join(dir, "config.yaml"))
	t.Setenv("OCC_URL", e.Base)
	t.Setenv("OCC_KEY", e.Admin)
	t.Setenv("OCC_NAMESPACE", "default")
	t.Setenv("OCC_KEY_FILE", "")
	t.Setenv("OCC_CONTEXT", "")
	occ, must := servertest.CliRunner(t, e.Admin)

	// Namespaces: create, rename, delete.
	must("namespaces", "create", "blue", "--wait", "--timeout", "1m")
	if out := must("namespaces", "update", "blue", "--name", "green", "-o", "jsonpath={.name}"); out != "green\n" {
		t.Fatalf("rename = %q", out)
	}
	if _, _, code := occ("namespaces", "get", "blue"); code != cli.ExitNotFound {
		t.Fatalf("the old name = %d", code)
	}
	must("namespaces", "delete", "green", "--wait", "--timeout", "1m")

	// A service principal (no CLI noun: the API) with a key from the CLI.
	sp := e.Call("POST", "/iam/service-principals", e.Admin, map[string]any{"name": "ci"})
	spn, _ := sp.Data()["id"].(string)
	if sp.Status != 201 || spn == "" {
		t.Fatalf("service principal = %d %v", sp.Status, sp.Body)
	}
	keyFile := filepath.Join(dir, "ci.key")
	must("service-keys", "create", "--name", "ci", "--principal", spn, "--key-out", keyFile, "--expires-in", "48h")
	raw, err := os.ReadFile(keyFile)
	st, _ := os.Stat(keyFile)
	key := strings.TrimSpace(string(raw))
	if err != nil || !strings.HasPrefix(key, "occ_") || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file %q: %v %v", key, err, st.Mode())
	}
	occKey, mustKey := servertest.CliRunner(t, e.Admin, key)
	if out := mustKey("service-keys", "list"); !strings.Contains(out, "ci") || !strings.Contains(out, "active") {
		t.Fatalf("service keys:\n%s", out)
	}
	// The new key logs in (no grant yet: the list is empty, but accepted).
	t.Setenv("OCC_URL", "")
	t.Setenv("OCC_KEY", "")
	t.Setenv("OCC_NAMESPACE", "")
	mustKey("login", "--url", e.Base, "--key-file", keyFile, "--context", "ci")
	mustKey("namespaces", "list")
	t.Setenv("OCC_URL", e.Base)
	t.Setenv("OCC_KEY", e.Admin)
	t.Setenv("OCC_NAMESPACE", "default")
	mustKey("service-keys", "delete", "ci")
	if out := mustKey("service-keys", "get", "ci", "-o", "jsonpath={.revoked}"); out != "true\n" {
		t.Fatalf("revoked = %q", out)
	}
	if _, errOut, code := occKey("namespaces", "list", "--context", "ci", "--url", e.Base, "--key-file", keyFile); code != cli.ExitError || !strings.Contains(errOut, "UNAUTHENTICATED") {
		t.Fatalf("a revoked key = %d %q", code, errOut)
	}

	// A restriction takes back what a binding grants, until it is removed.
	must("iam", "bindings", "create", "--principal", spn, "--role", "viewer")
	secretFile := filepath.Join(dir, "v")
	if err := os.WriteFile(secretFile, []byte("sk-admin-canary\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sec := strings.TrimSpace(must("secrets", "create", "--name", "openai", "--value-file", secretFile, "-o", "name"))
	key2 := filepath.Join(dir, "ci2.key")
	must("service-keys", "create", "--name", "ci2", "--principal", spn, "--key-out", key2)
	raw, _ = os.ReadFile(key2)
	asCI, _ := servertest.CliRunner(t, e.Admin, strings.TrimSpace(string(raw)), "sk-admin-canary")
	if out, errOut, code := asCI("secrets", "get", sec, "--key-file", key2); code != 0 {
		t.Fatalf("the viewer reads the Secret = %d %s%s", code, out, errOut)
	}
	id := strings.TrimSpace(must("iam", "restrictions", "create", "--principal", spn, "--permission", "secret:read", "--target", "secret/openai", "-o", "name"))
	if out := must("iam", "restrictions", "get", id, "-o", "jsonpath={.permission} {.target.id}"); out != "secret:read "+sec+"\n" {
		t.Fatalf("restriction = %q", out)
	}
	if _, errOut, code := asCI("secrets", "get", sec, "--key-file", key2); code == 0 || !strings.Contains(errOut, "occ: FORBIDDEN") && !strings.Contains(errOut, "occ: NOT_FOUND") {
		t.Fatalf("restricted get = %d %q", code, errOut)
	}
	must("iam", "restrictions", "delete", id)
	if _, _, code := asCI("secrets", "get", sec, "--key-file", key2); code != 0 {
		t.Fatalf("get after the restriction's removal = %d", code)
	}
	if out := must("iam", "restrictions", "list", "-o", "name"); out != "" {
		t.Fatalf("restrictions after delete = %q", out)
	}
}
