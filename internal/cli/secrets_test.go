package cli

import (
	"context"
	"strings"
	"testing"
)

func TestSecretsCreate(t *testing.T) {
	t.Parallel()
	const post = "POST /namespaces/" + defaultNS + "/secrets"
	f := newFakeOCC(t).start()
	api, out, errOut := f.api("table")
	opts := &secretsCreateOptions{API: api, Name: apiKeyName, ValueFile: writeFile(t, "v", "sk-canary-value\n")}
	if err := runSecretsCreate(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if b := f.body(post); b["name"] != apiKeyName || b["value"] != "sk-canary-value" {
		t.Fatalf("body = %v", b)
	}
	if !strings.Contains(out.String(), secID) || strings.Contains(out.String()+errOut.String(), "canary") {
		t.Fatalf("out:\n%s\nerr:\n%s", out, errOut)
	}

	// Standard input, CRLF; through the command line under the existing
	// secrets noun.
	r := execute(f.env(), "sk-canary-stdin\r\n", "secrets", "create", "--name", "x", "--value-file", "-")
	if r.code != 0 || f.body(post)["value"] != "sk-canary-stdin" || strings.Contains(r.out+r.err, "canary") {
		t.Fatalf("stdin = %+v, body %v", r, f.body(post))
	}
	// Empty values and missing flags are refused before any request.
	n := len(f.requests())
	r = execute(f.env(), "\n", "secrets", "create", "--name", "x", "--value-file", "-")
	if r.code != 1 || r.err != "occ: the Secret's value is empty\n" {
		t.Fatalf("empty = %+v", r)
	}
	r = execute(f.env(), "", "secrets", "create", "--name", "x")
	if r.code != ExitUsage || !strings.Contains(r.err, `"value-file" not set`) {
		t.Fatalf("no value file = %+v", r)
	}
	if len(f.requests()) != n {
		t.Fatalf("requests sent: %v", f.requests()[n:])
	}
}

func TestSecretsList(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t).start()
	api, out, _ := f.api("table")
	if err := runSecretsList(context.Background(), &secretsListOptions{API: api}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "VERSION") || !strings.Contains(lines[1], secID) || !strings.Contains(lines[1], apiKeyName) {
		t.Fatalf("list:\n%s", out)
	}
}
