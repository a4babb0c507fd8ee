package cli

import (
	"strings"
	"testing"
)

// TestOutputFormats prints one list and one object in every -o format.
func TestOutputFormats(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t).start()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"secrets", "list", "-o", "name"}, secID + "\n"},
		{[]string{"agents", "get", "bot", "-o", "name"}, agtID + "\n"},
		{[]string{"secrets", "list", "-o", "yaml"}, "- createdAt: \"" + timestamp + "\"\n  etag: '\"1\"'\n  id: " + secID +
			"\n  name: openai\n  namespaceId: " + defaultNS + "\n  updatedAt: \"" + timestamp + "\"\n  version: 1\n"},
		{[]string{"agents", "get", "bot", "-o", "jsonpath={.name} {.harnessAuth.source.kind}"}, "bot secret\n"},
		{[]string{"secrets", "list", "-o", `jsonpath={range [*]}{.name}{"\t"}{.version}{"\n"}{end}`}, "openai\t1\n\n"},
		{[]string{"secrets", "list", "-o", "jsonpath={[*].id}"}, secID + "\n"},
		{[]string{"configurations", "get", "support", "-o", "jsonpath={.values.agents.defaults.model}"}, "openai/gpt-5\n"},
		{[]string{"configurations", "get", "support", "-o", "jsonpath={.nothing}"}, "\n"},
	} {
		r := execute(f.env(), "", c.args...)
		if r.code != 0 || r.out != c.want || r.err != "" {
			t.Errorf("occ %v = %+v\nwant %q", c.args, r, c.want)
		}
	}
	r := execute(f.env(), "", "secrets", "list", "-o", "json")
	if r.code != 0 || !strings.HasPrefix(r.out, "[\n  {\n") || !strings.Contains(r.out, `"id": "`+secID+`"`) {
		t.Fatalf("json = %+v", r)
	}
}

// TestJSONPathRefusals: a malformed template is a usage error, before any
// request.
func TestJSONPathRefusals(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t).start()
	for _, tmpl := range []string{"{.a", "{range [*]}{.a}", "{end}", "{.a[?(@.x)]}", "{a}", `{"\q"}`, "{.a..b}"} {
		r := execute(f.env(), "", "secrets", "list", "-o", "jsonpath="+tmpl)
		if r.code != ExitUsage || !strings.Contains(r.err, "jsonpath: ") {
			t.Errorf("%q = %+v", tmpl, r)
		}
	}
	if n := len(f.requests()); n != 0 {
		t.Fatalf("requests sent: %v", f.requests())
	}
}

// TestJSONPathEval covers the subset on a tree.
func TestJSONPathEval(t *testing.T) {
	t.Parallel()
	tree, err := jsonTree(map[string]any{"a": []any{map[string]any{"b": 1}, map[string]any{"b": "two"}}, "m": map[string]any{"y": 2, "x": 1}, "k-1": true})
	if err != nil {
		t.Fatal(err)
	}
	for tmpl, want := range map[string]string{
		"{.a[0].b}":  "1",
		"{.a[-1].b}": "two",
		"{.a[*].b}":  "1 two",
		"{$.a[5]}":   "",
		"{.m.*}":     "1 2",
		"{['k-1']}":  "true",
		"x={.a[0]}!": `x={"b":1}!`,
		"{@.m.x}":    "1",
	} {
		nodes, err := parseJSONPath(tmpl)
		if err != nil {
			t.Fatalf("%q: %v", tmpl, err)
		}
		var b strings.Builder
		if err := executeJSONPath(&b, nodes, tree); err != nil || b.String() != want {
			t.Errorf("%q = %q, %v; want %q", tmpl, b.String(), err, want)
		}
	}
}

// TestExitCodes: an unknown command or flag and a wrong argument count
// are usage errors with the way to help; nothing is sent.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t).start()
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"bogus"}, "occ: unknown command \"bogus\" for \"occ\"\nRun 'occ --help' for usage.\n"},
		{[]string{"secrets", "bogus"}, "occ: unknown command \"bogus\" for \"occ secrets\"\nRun 'occ secrets --help' for usage.\n"},
		{[]string{"iam", "roles", "bogus"}, "occ: unknown command \"bogus\" for \"occ iam roles\"\nRun 'occ iam roles --help' for usage.\n"},
		{[]string{"secrets", "list", "--bogus"}, "occ: unknown flag: --bogus\nRun 'occ secrets list --help' for usage.\n"},
		{[]string{"agents", "get"}, "occ: accepts 1 arg(s), received 0\nRun 'occ agents get --help' for usage.\n"},
	} {
		r := execute(f.env(), "", c.args...)
		if r.code != ExitUsage || r.err != c.err {
			t.Errorf("occ %v = %+v", c.args, r)
		}
	}
	if n := len(f.requests()); n != 0 {
		t.Fatalf("requests sent: %v", f.requests())
	}
	// A group alone prints its help and succeeds.
	if r := execute(f.env(), "", "secrets"); r.code != 0 || !strings.Contains(r.out, "list") {
		t.Fatalf("occ secrets = %+v", r)
	}
}
