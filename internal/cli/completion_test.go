package cli

import (
	"strings"
	"testing"
)

// TestCompletion: resource names, Namespaces and contexts come from the
// API and the client config; an unreachable server completes nothing,
// quietly.
func TestCompletion(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t).start()
	names := func(r result) []string {
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(r.out), "\n") {
			if !strings.HasPrefix(l, ":") && l != "" {
				out = append(out, strings.SplitN(l, "\t", 2)[0])
			}
		}
		return out
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"secrets", "get", ""}, apiKeyName},
		{[]string{"secrets", "update", ""}, "--value-file " + apiKeyName}, // cobra offers a required flag too
		{[]string{"agents", "get", ""}, "bot"},
		{[]string{"agents", "deploy", ""}, "bot"},
		{[]string{"deployments", "watch", ""}, "bot"},
		{[]string{"configurations", "edit", ""}, "support"},
		{[]string{"configurations", "get", ""}, "support"},
		{[]string{"workspace", "get", "bot", ""}, "AGENTS.md SOUL.md IDENTITY.md USER.md"},
		{[]string{"secrets", "list", "-n", ""}, "team default"},
		{[]string{"agents", "list", "--namespace", ""}, "team default"},
		{[]string{"namespaces", "get", ""}, "team default"},
		{[]string{"se"}, "secrets serve service-accounts service-keys"},
	} {
		r := execute(f.env(), "", append([]string{"__complete"}, c.args...)...)
		if got := strings.Join(names(r), " "); r.code != 0 || got != c.want {
			t.Errorf("complete %v = %q (%+v), want %q", c.args, got, r, c.want)
		}
	}
	r := execute(f.env("OCC_URL", "http://127.0.0.1:1"), "", "__complete", "agents", "get", "")
	if r.code != 0 || len(names(r)) != 0 || r.err != "" && !strings.Contains(r.err, "Completion ended") {
		t.Fatalf("unreachable = %+v", r)
	}
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		if r := execute(f.env(), "", "completion", sh); r.code != 0 || !strings.Contains(r.out, "occ") || len(r.out) < 1000 {
			t.Errorf("completion %s = %d, %d bytes", sh, r.code, len(r.out))
		}
	}
	if r := execute(f.env(), "", "completion", "tcsh"); r.code != ExitUsage {
		t.Fatalf("completion tcsh = %+v", r)
	}
}
