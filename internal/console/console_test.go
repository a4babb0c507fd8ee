package console

import (
	"reflect"
	"testing"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
)

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{
		"":                             Prefix,
		"/console/namespaces?page=x":   "/console/namespaces?page=x",
		"/":                            "/",
		"//evil.example/console/":      Prefix,
		"/\\evil.example":              Prefix,
		"https://evil.example/console": Prefix,
		"/namespaces":                  Prefix, // an API path is not a page
		"/console/../namespaces":       "/console/../namespaces",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStateOf(t *testing.T) {
	running := occ.Agent{Status: occ.AgentActive, DesiredState: occ.DesiredRunning, ActiveRevisionID: "rev_x"}
	for name, c := range map[string]struct {
		g    occ.Agent
		d    *app.DeploymentStatus
		want string
	}{
		"never deployed":     {occ.Agent{Status: occ.AgentActive, DesiredState: occ.DesiredStopped}, nil, stateStopped},
		"running":            {running, &app.DeploymentStatus{Status: occ.DeploymentSucceeded}, stateRunning},
		"queued":             {running, &app.DeploymentStatus{Status: occ.DeploymentQueued}, stateDeploying},
		"starting":           {running, &app.DeploymentStatus{Status: occ.DeploymentRunning}, stateDeploying},
		"failed":             {running, &app.DeploymentStatus{Status: occ.DeploymentFailed}, stateFailed},
		"stopped after run":  {occ.Agent{Status: occ.AgentActive, DesiredState: occ.DesiredStopped, ActiveRevisionID: "rev_x"}, &app.DeploymentStatus{Status: occ.DeploymentSucceeded}, stateStopped},
		"deleting":           {occ.Agent{Status: occ.AgentDeleting, DesiredState: occ.DesiredStopped}, &app.DeploymentStatus{Status: occ.DeploymentRunning}, stateDeleting},
		"unreadable history": {running, nil, stateRunning},
	} {
		if got := stateOf(c.g, c.d); got != c.want {
			t.Errorf("%s: stateOf = %q, want %q", name, got, c.want)
		}
	}
}

func TestMergePatch(t *testing.T) {
	from := map[string]any{"keep": 1.0, "drop": "x", "obj": map[string]any{"a": 1.0, "b": 2.0}, "swap": map[string]any{"a": 1.0}}
	to := map[string]any{"keep": 1.0, "obj": map[string]any{"a": 1.0, "c": 3.0}, "swap": "now a string", "new": []any{1.0}}
	want := map[string]any{"drop": nil, "obj": map[string]any{"b": nil, "c": 3.0}, "swap": "now a string", "new": []any{1.0}}
	if got := mergePatch(from, to); !reflect.DeepEqual(got, want) {
		t.Fatalf("mergePatch = %v, want %v", got, want)
	}
	if got := mergePatch(from, from); len(got) != 0 {
		t.Fatalf("no change = %v", got)
	}
}

func TestParseDocument(t *testing.T) {
	for _, bad := range []string{"", "[]", "null", "1", `{"a":1} {"b":2}`, `{"a":`, "not json"} {
		if _, err := parseDocument(bad); err != errNotJSON {
			t.Errorf("parseDocument(%q) = %v", bad, err)
		}
	}
	if doc, err := parseDocument(" {\"a\": {\"b\": true}}\n"); err != nil || doc["a"].(map[string]any)["b"] != true {
		t.Fatalf("parseDocument = %v, %v", doc, err)
	}
}

func TestCSRFToken(t *testing.T) {
	a, b := csrfToken("occs_one"), csrfToken("occs_two")
	if a == b || a != csrfToken("occs_one") || len(a) != 43 {
		t.Fatalf("tokens %q %q", a, b)
	}
}

func TestOwns(t *testing.T) {
	for path, want := range map[string]bool{"/": true, "/console": true, "/console/": true, "/console/x": true,
		"/namespaces": false, "/consoles": false, "/api/auth/sign-in": false, "/healthz": false} {
		if Owns(path) != want {
			t.Errorf("Owns(%q) = %v", path, !want)
		}
	}
}

func TestTemplatesParse(t *testing.T) {
	pages, err := parsePages()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sign-in", "error", "namespaces", "fleet", "agent", "deployment", "file", "newagent", "configurations", "configuration", "secrets", "audit", "compare", "iam", "presets", "keys"} {
		if pages[name] == nil {
			t.Errorf("no page %s", name)
		}
	}
}

func TestDiffLines(t *testing.T) {
	got := diffLines([]string{"{", `"a": 1,`, `"b": 2`, "}"}, []string{"{", `"a": 1,`, `"b": 3`, `"c": 4`, "}"})
	var left, right, changed []string
	for _, l := range got {
		if l.HasLeft {
			left = append(left, l.Left)
		}
		if l.HasRight {
			right = append(right, l.Right)
		}
		if l.Changed {
			changed = append(changed, l.Left+l.Right)
		}
	}
	if !reflect.DeepEqual(left, []string{"{", `"a": 1,`, `"b": 2`, "}"}) || !reflect.DeepEqual(right, []string{"{", `"a": 1,`, `"b": 3`, `"c": 4`, "}"}) {
		t.Fatalf("sides lost lines: %q %q", left, right)
	}
	if !reflect.DeepEqual(changed, []string{`"b": 3`, `"c": 4`, `"b": 2`}) && !reflect.DeepEqual(changed, []string{`"b": 2`, `"b": 3`, `"c": 4`}) {
		t.Fatalf("changed = %q", changed)
	}
	if d := diffLines(nil, nil); len(d) != 0 {
		t.Fatalf("empty diff = %v", d)
	}
}

func TestFormPage(t *testing.T) {
	ns := "/console/namespaces/ns_x"
	for in, want := range map[string]string{
		ns + "/agents/agt_x/deploy":                        ns + "/agents/agt_x",
		ns + "/agents/agt_x/files/SOUL.md":                 ns + "/agents/agt_x/files/SOUL.md",
		ns + "/configurations/cfg_x":                       ns + "/configurations/cfg_x",
		ns + "/secrets/sec_x":                              ns + "/secrets",
		ns + "/secrets/sec_x/delete":                       ns + "/secrets",
		ns + "/iam/roles":                                  ns + "/iam",
		ns + "/iam/bindings/bnd_x/delete":                  ns + "/iam",
		ns + "/delete":                                     ns,
		"/console/namespaces":                              "/console/namespaces",
		ns + "/agents/agt_x/deployments/rev_x/diagnostics": ns + "/agents/agt_x/deployments/rev_x",
	} {
		if got := formPage(in); got != want {
			t.Errorf("formPage(%q) = %q, want %q", in, got, want)
		}
	}
}
