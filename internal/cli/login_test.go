package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoginAndContexts: login checks the key and saves a context (0600 in
// a 0700 directory) that later commands use without any variable; flags
// and variables still win; contexts switch, list without keys, and
// delete.
func TestLoginAndContexts(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t).start()
	cfgPath := filepath.Join(t.TempDir(), "occ", "config.yaml")
	keyFile := writeFile(t, "key", testKey+"\n")
	// Only the config path: no OCC_URL, no OCC_KEY.
	env := func(extra ...string) func(string) string {
		m := map[string]string{"OCC_CLIENT_CONFIG": cfgPath}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return func(k string) string { return m[k] }
	}

	// A wrong key is refused and nothing is saved.
	wrong := writeFile(t, "wrong", "occ_sk_wrong\n")
	r := execute(env(), "", "login", "--url", f.srv.URL, "--key-file", wrong)
	if r.code != ExitError || !strings.Contains(r.err, "did not accept the key: UNAUTHENTICATED") {
		t.Fatalf("wrong key = %+v", r)
	}
	if _, err := os.Stat(cfgPath); !os.IsNotExist(err) {
		t.Fatalf("config written after a refused login: %v", err)
	}
	// An unknown Namespace is refused too.
	r = execute(env(), "", "login", "--url", f.srv.URL, "--key-file", keyFile, "-n", "nope")
	if r.code != ExitNotFound {
		t.Fatalf("unknown namespace = %+v", r)
	}

	r = execute(env(), "", "login", "--url", f.srv.URL+"/", "--key-file", keyFile, "--namespace", "team", "--context", "lab")
	if r.code != 0 || r.out != `logged in to `+f.srv.URL+` as context "lab" (saved in `+cfgPath+")\n" {
		t.Fatalf("login = %+v", r)
	}
	for path, mode := range map[string]os.FileMode{cfgPath: 0o600, filepath.Dir(cfgPath): 0o700 | os.ModeDir} {
		if st, err := os.Stat(path); err != nil || st.Mode() != mode {
			t.Fatalf("%s: %v %v, want %v", path, st.Mode(), err, mode)
		}
	}
	raw, _ := os.ReadFile(cfgPath)
	if !strings.Contains(string(raw), "keyFile: "+keyFile) || strings.Contains(string(raw), testKey) {
		t.Fatalf("config:\n%s", raw)
	}

	// The context's URL, key file and Namespace (team) are used: the
	// fake has no Secrets in team, so the list is asked there and 404s.
	r = execute(env(), "", "secrets", "list")
	if r.code != ExitNotFound || !contains(f.requests(), "GET /namespaces/"+teamNS+"/secrets?pageSize=200") {
		t.Fatalf("list with the context = %+v %v", r, f.requests())
	}

	// A flag beats the variable, which beats the context.
	r = execute(env("OCC_NAMESPACE", "nope"), "", "secrets", "list", "-n", defaultNS, "-o", "name")
	if r.code != 0 || r.out != secID+"\n" {
		t.Fatalf("-n over OCC_NAMESPACE = %+v", r)
	}
	r = execute(env("OCC_NAMESPACE", "nope"), "", "secrets", "list")
	if r.code != ExitNotFound || !strings.Contains(r.err, `No Namespace named "nope"`) {
		t.Fatalf("OCC_NAMESPACE over the context = %+v", r)
	}
	// Another server by variable or flag: the context (its key above all)
	// is left out.
	r = execute(env("OCC_URL", "http://127.0.0.1:1"), "", "namespaces", "list")
	if r.code != ExitError || !strings.Contains(r.err, "no service key") {
		t.Fatalf("OCC_URL of another server = %+v", r)
	}
	r = execute(env("OCC_KEY", testKey), "", "namespaces", "list", "--url", "http://127.0.0.1:1")
	if r.code != ExitError || !strings.Contains(r.err, "127.0.0.1:1") {
		t.Fatalf("--url with OCC_KEY = %+v", r)
	}
	// The same server by flag keeps the context.
	if r = execute(env(), "", "namespaces", "list", "--url", f.srv.URL+"/", "-o", "name"); r.code != 0 {
		t.Fatalf("--url of the context's server = %+v", r)
	}
	r = execute(env("OCC_KEY", "occ_sk_wrong"), "", "namespaces", "list")
	if r.code != ExitError || !strings.Contains(r.err, "UNAUTHENTICATED") {
		t.Fatalf("OCC_KEY over the context = %+v", r)
	}

	// A second context with the key itself, from standard input.
	r = execute(env(), testKey+"\n", "login", "--url", f.srv.URL, "--key-stdin", "--context", "prod")
	if r.code != 0 || strings.Contains(r.out+r.err, testKey) {
		t.Fatalf("login --key-stdin = %+v", r)
	}
	r = execute(env(), "", "context", "list")
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[2], "*") || !strings.Contains(lines[2], "(saved in the config)") ||
		!strings.Contains(lines[1], keyFile) || strings.Contains(r.out, testKey) {
		t.Fatalf("context list = %+v", r)
	}
	r = execute(env(), "", "context", "list", "-o", "json")
	var listed []map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.out), &listed) != nil || len(listed) != 2 || strings.Contains(r.out, testKey) {
		t.Fatalf("context list -o json = %+v", r)
	}
	if r = execute(env(), "", "context", "list", "-o", "name"); r.out != "lab\nprod\n" {
		t.Fatalf("context list -o name = %+v", r)
	}
	if r = execute(env(), "", "context", "current"); r.out != "prod\n" {
		t.Fatalf("current = %+v", r)
	}
	// prod has no Namespace: the default one is used, its secrets listed.
	if r = execute(env(), "", "secrets", "list", "-o", "name"); r.code != 0 || r.out != secID+"\n" {
		t.Fatalf("list with prod = %+v", r)
	}
	// --context and OCC_CONTEXT pick another one for one command.
	if r = execute(env(), "", "secrets", "list", "--context", "ghost"); r.code != ExitNotFound || !strings.Contains(r.err, `No context named "ghost"`) {
		t.Fatalf("--context ghost = %+v", r)
	}
	if r = execute(env("OCC_CONTEXT", "ghost"), "", "namespaces", "list"); r.code != ExitNotFound {
		t.Fatalf("OCC_CONTEXT ghost = %+v", r)
	}
	if r = execute(env(), "", "namespaces", "list", "--context", "lab", "-o", "name"); r.code != 0 || !strings.Contains(r.out, teamNS) {
		t.Fatalf("--context lab = %+v", r)
	}

	if r = execute(env(), "", "context", "use", "lab"); r.code != 0 || r.out != "current context: lab\n" {
		t.Fatalf("use = %+v", r)
	}
	if r = execute(env(), "", "context", "use", "ghost"); r.code != ExitNotFound {
		t.Fatalf("use ghost = %+v", r)
	}
	if r = execute(env(), "", "context", "delete", "lab"); r.code != 0 {
		t.Fatalf("delete = %+v", r)
	}
	if r = execute(env(), "", "context", "current"); r.code != ExitNotFound || !strings.Contains(r.err, "No current context") {
		t.Fatalf("current after delete = %+v", r)
	}
	if r = execute(env(), "", "context", "delete", "lab"); r.code != ExitNotFound {
		t.Fatalf("delete again = %+v", r)
	}
	// Without a context, variable or flag: the built-in default key file.
	if r = execute(env(), "", "namespaces", "list"); r.code != ExitError || !strings.Contains(r.err, "bootstrap-admin.key") {
		t.Fatalf("no context = %+v", r)
	}
}

// TestLoginRefusals: missing inputs are usage errors, before any request.
func TestLoginRefusals(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t).start()
	env := func(k string) string {
		return map[string]string{"OCC_CLIENT_CONFIG": filepath.Join(t.TempDir(), "c.yaml")}[k]
	}
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"login", "--key-file", "x"}, ExitUsage, "--url is required"},
		{[]string{"login", "--url", f.srv.URL}, ExitUsage, "give --key-file FILE or --key-stdin"},
		{[]string{"login", "--url", "ftp://x", "--key-stdin"}, ExitError, "is not an http:// or https:// URL"},
		{[]string{"login", "--url", f.srv.URL, "--key-stdin", "--key-file", "x"}, ExitError, "none of the others can be"},
		{[]string{"login", "--url", f.srv.URL, "--key-stdin"}, ExitError, "no key on standard input"},
	} {
		r := execute(env, "", c.args...)
		if r.code != c.code || !strings.Contains(r.err, c.err) {
			t.Errorf("occ %v = %+v", c.args, r)
		}
	}
	if len(f.requests()) != 0 {
		t.Fatalf("requests: %v", f.requests())
	}
}
