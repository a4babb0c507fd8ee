// Package deptest keeps the imports of the module honest: it lists every
// package with `go list` and checks the import rules of ARCHITECTURE.md
// ("Packages and what each may import"), as tailscale's deptest does.
package deptest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path"
	"strings"
	"testing"
)

const module = "github.com/openclaw/occ"

// pkg is the part of `go list -json` output the rules need. Paths are
// relative to the module ("internal/occ") for the module's own packages and
// full import paths otherwise.
type pkg struct {
	ImportPath   string
	Name         string
	Imports      []string // from non-test files
	TestImports  []string // from _test.go files of the same package
	XTestImports []string // from _test.go files of package <name>_test
	Error        *struct{ Err string }
}

// rule is one import rule, applied to the non-test imports of every package it
// covers.
type rule struct {
	name string
	// applies reports whether the rule covers the package at rel.
	applies func(rel string) bool
	// forbids reports whether the package at rel may not import imp (imp is
	// module-relative when inside the module, a full path otherwise).
	forbids func(rel, imp string) bool
}

// under reports whether rel is prefix or below it.
func under(rel string, prefixes ...string) bool {
	for _, p := range prefixes {
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return true
		}
	}
	return false
}

// internal returns the module-relative path of an import, and whether it is
// in the module.
func internal(imp string) (string, bool) {
	if imp == module {
		return ".", true
	}
	rel, ok := strings.CutPrefix(imp, module+"/")
	return rel, ok
}

// standard reports whether imp is a standard library package: its first path
// element has no dot (and it is not cgo's "C").
func standard(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return imp != "C" && !strings.Contains(first, ".")
}

// isTestHelper reports whether a package path names a test-helper package
// (storetest, computetest, gatewaytest…).
func isTestHelper(rel string) bool {
	base := path.Base(rel)
	return strings.HasSuffix(base, "test") && base != "test"
}

// driver returns the driver name of a package under internal/compute/<name>,
// or "" when rel is not part of a driver (the compute package itself and test
// helpers such as computetest are not drivers).
func driver(rel string) string {
	rest, ok := strings.CutPrefix(rel, "internal/compute/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	if isTestHelper(name) {
		return ""
	}
	return name
}

// forbidInternal builds a forbids function for module packages under any of
// prefixes.
func forbidInternal(prefixes ...string) func(rel, imp string) bool {
	return func(_, imp string) bool {
		r, ok := internal(imp)
		return ok && under(r, prefixes...)
	}
}

// allowInternal builds a forbids function for every module package not under
// one of prefixes: a package added to the module later is forbidden until it
// is added to the list. Imports from outside the module (the standard
// library, a driver's SDK) are left to other rules.
func allowInternal(prefixes ...string) func(rel, imp string) bool {
	return func(_, imp string) bool {
		r, ok := internal(imp)
		return ok && !under(r, prefixes...)
	}
}

// rules are the import rules of ARCHITECTURE.md, the compute and cli/client
// ones written as allow-lists so that a new package starts out forbidden to
// them (see docs/DEVELOPMENT.md). Each applies to the non-test imports of the
// packages it covers; test-helper imports are checked separately
// (checkTestHelpers).
var rules = []rule{
	{
		name:    "internal/occ imports only the standard library",
		applies: func(rel string) bool { return under(rel, "internal/occ") },
		forbids: func(_, imp string) bool { return !standard(imp) },
	},
	{
		name: "store, iam, audit and secrets never import app, worker, httpapi or compute",
		applies: func(rel string) bool {
			return under(rel, "internal/store", "internal/iam", "internal/audit", "internal/secrets")
		},
		forbids: forbidInternal("internal/app", "internal/worker", "internal/httpapi", "internal/compute"),
	},
	{
		name:    "app never imports httpapi, compute or a compute driver (it enqueues; the worker does effects)",
		applies: func(rel string) bool { return under(rel, "internal/app") },
		forbids: forbidInternal("internal/httpapi", "internal/compute"),
	},
	{
		name:    "httpapi never imports store or worker (it calls app and iam)",
		applies: func(rel string) bool { return under(rel, "internal/httpapi") },
		forbids: forbidInternal("internal/store", "internal/worker"),
	},
	{
		name:    "compute, its drivers and computetest import, inside the module, only compute, occ, gateway and agentruntime (never store, app, worker, config…)",
		applies: func(rel string) bool { return under(rel, "internal/compute") },
		forbids: allowInternal("internal/compute", "internal/occ", "internal/gateway", "internal/agentruntime"),
	},
	{
		name:    "compute drivers never import each other",
		applies: func(rel string) bool { return driver(rel) != "" },
		forbids: func(rel, imp string) bool {
			r, ok := internal(imp)
			return ok && driver(r) != "" && driver(r) != driver(rel)
		},
	},
	{
		name:    "worker never imports app, httpapi, server, cli or client (app enqueues, the worker does effects)",
		applies: func(rel string) bool { return under(rel, "internal/worker") },
		forbids: forbidInternal("internal/app", "internal/httpapi", "internal/server", "internal/cli", "internal/client"),
	},
	{
		// The console calls the same use cases as the API (app), the
		// session and cookie rules of httpapi and its status mapping
		// (contract); it never reaches the database or the worker itself.
		name:    "console imports, inside the module, only app, iam, occ, config and httpapi's session, contract and client-address helpers (never store or worker)",
		applies: func(rel string) bool { return under(rel, "internal/console") },
		forbids: func(rel, imp string) bool {
			r, ok := internal(imp)
			if !ok {
				return false
			}
			switch r {
			case "internal/httpapi", "internal/httpapi/contract", "internal/httpapi/limit":
				return false
			}
			return !under(r, "internal/console", "internal/app", "internal/iam", "internal/occ", "internal/config")
		},
	},
	{
		// occ serve and the other server commands reach internal/server
		// through the cli.Server functions cmd/occ passes to cli.Main, never
		// through an import.
		name:    "cli and client import, inside the module, only occ, config, client and cli (server commands get internal/server injected by cmd/occ)",
		applies: func(rel string) bool { return under(rel, "internal/cli", "internal/client") },
		forbids: allowInternal("internal/occ", "internal/config", "internal/client", "internal/cli"),
	},
}

// violation is one broken rule.
type violation struct{ pkg, imp, rule string }

func (v violation) String() string {
	return fmt.Sprintf("%s imports %s, breaking the rule %q", v.pkg, v.imp, v.rule)
}

// check applies every rule to pkgs.
func check(pkgs []pkg) []violation {
	var out []violation
	for _, p := range pkgs {
		rel, ok := internal(p.ImportPath)
		if !ok {
			continue
		}
		for _, r := range rules {
			if !r.applies(rel) {
				continue
			}
			for _, imp := range p.Imports {
				if r.forbids(rel, imp) {
					out = append(out, violation{rel, imp, r.name})
				}
			}
		}
		out = append(out, checkTestHelpers(rel, p)...)
	}
	return out
}

// testHelperRule is the rule checkTestHelpers enforces.
const testHelperRule = "test helpers (*test packages) are imported only from _test.go files"

// checkTestHelpers reports a test-helper package imported from a non-test
// file. Test helpers may build on each other (computetest may use
// gatewaytest): the whole group is reachable only from tests.
func checkTestHelpers(rel string, p pkg) []violation {
	if isTestHelper(rel) {
		return nil
	}
	var out []violation
	for _, imp := range p.Imports {
		if r, ok := internal(imp); ok && isTestHelper(r) {
			out = append(out, violation{rel, imp, testHelperRule})
		}
	}
	return out
}

// listPackages runs `go list -e -json ./...` from the module root. -e keeps
// going past packages that do not compile, so one broken package elsewhere
// does not hide the rules.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := path.Dir(strings.TrimSpace(string(gomod)))
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Name,Imports,TestImports,XTestImports,Error", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v\n%s", root, err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		if p.Error != nil {
			t.Logf("note: %s: %s (its imports may be incomplete)", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func TestImportRules(t *testing.T) {
	t.Parallel()
	pkgs := listPackages(t)

	// Self-check: the test must see the module, not pass on an empty list.
	seen := map[string]bool{}
	for _, p := range pkgs {
		seen[p.ImportPath] = true
	}
	for _, want := range []string{"internal/occ", "internal/config"} {
		if !seen[module+"/"+want] {
			t.Fatalf("go list did not report %s/%s (saw %d packages); the rules would pass vacuously", module, want, len(pkgs))
		}
	}

	for _, v := range check(pkgs) {
		t.Error(v)
	}
}

// TestRulesCatchViolations feeds synthetic packages to the rules, so that a
// rule that stops matching anything is noticed.
func TestRulesCatchViolations(t *testing.T) {
	t.Parallel()
	m := func(rel string) string { return module + "/" + rel }
	tests := []struct {
		name string
		pkg  pkg
		bad  []string // the imports that must be reported, in order
	}{
		{"occ imports a module package", pkg{ImportPath: m("internal/occ"), Imports: []string{"fmt", m("internal/store")}}, []string{m("internal/store")}},
		{"occ imports a third-party package", pkg{ImportPath: m("internal/occ"), Imports: []string{"github.com/google/uuid", "C"}}, []string{"github.com/google/uuid", "C"}},
		{"occ tests may import anything", pkg{ImportPath: m("internal/occ"), Imports: []string{"strings"}, XTestImports: []string{m("internal/store")}}, nil},
		{"store imports app", pkg{ImportPath: m("internal/store/postgres"), Imports: []string{m("internal/app"), m("internal/occ")}}, []string{m("internal/app")}},
		{"iam imports compute", pkg{ImportPath: m("internal/iam"), Imports: []string{m("internal/compute")}}, []string{m("internal/compute")}},
		{"audit imports worker", pkg{ImportPath: m("internal/audit"), Imports: []string{m("internal/worker")}}, []string{m("internal/worker")}},
		{"secrets imports httpapi", pkg{ImportPath: m("internal/secrets"), Imports: []string{m("internal/httpapi/contract")}}, []string{m("internal/httpapi/contract")}},
		{"store may import occ", pkg{ImportPath: m("internal/store"), Imports: []string{m("internal/occ"), "database/sql"}}, nil},
		{"app imports a driver", pkg{ImportPath: m("internal/app"), Imports: []string{m("internal/compute/docker"), m("internal/store"), m("internal/httpapi")}}, []string{m("internal/compute/docker"), m("internal/httpapi")}},
		{"httpapi imports store", pkg{ImportPath: m("internal/httpapi/adminproxy"), Imports: []string{m("internal/store"), m("internal/worker"), m("internal/app"), m("internal/iam")}}, []string{m("internal/store"), m("internal/worker")}},
		{"driver imports another driver", pkg{ImportPath: m("internal/compute/ssh"), Imports: []string{m("internal/compute"), m("internal/compute/local"), m("internal/compute/ssh/unit")}}, []string{m("internal/compute/local")}},
		{"driver imports store", pkg{ImportPath: m("internal/compute/local"), Imports: []string{m("internal/store"), m("internal/compute"), m("internal/occ"), m("internal/gateway"), m("internal/agentruntime"), m("internal/compute/local/ports"), "os/exec"}}, []string{m("internal/store")}},
		{"driver imports config", pkg{ImportPath: m("internal/compute/ssh/unit"), Imports: []string{m("internal/config"), m("internal/compute/ssh"), "golang.org/x/crypto/ssh"}}, []string{m("internal/config")}},
		{"computetest imports app", pkg{ImportPath: m("internal/compute/computetest"), Imports: []string{m("internal/app"), m("internal/compute"), m("internal/gateway/gatewaytest"), m("internal/occ")}}, []string{m("internal/app")}},
		{"new driver imports jobs", pkg{ImportPath: m("internal/compute/kubernetes"), Imports: []string{m("internal/jobs"), m("internal/compute"), m("internal/gateway"), "k8s.io/client-go/kubernetes"}}, []string{m("internal/jobs")}},
		{"compute imports secrets", pkg{ImportPath: m("internal/compute"), Imports: []string{m("internal/secrets"), m("internal/occ")}}, []string{m("internal/secrets")}},
		{"worker imports app", pkg{ImportPath: m("internal/worker"), Imports: []string{m("internal/app"), m("internal/store"), m("internal/audit"), m("internal/iam"), m("internal/jobs"), m("internal/compute"), m("internal/occ")}}, []string{m("internal/app")}},
		{"worker imports the API side", pkg{ImportPath: m("internal/worker/reconcile"), Imports: []string{m("internal/httpapi/contract"), m("internal/server"), m("internal/cli"), m("internal/client/gen")}}, []string{m("internal/httpapi/contract"), m("internal/server"), m("internal/cli"), m("internal/client/gen")}},
		{"client imports httpapi", pkg{ImportPath: m("internal/client"), Imports: []string{m("internal/httpapi"), m("internal/occ"), m("internal/client/gen")}}, []string{m("internal/httpapi")}},
		{"client imports a new package", pkg{ImportPath: m("internal/client/gen"), Imports: []string{m("internal/newthing"), m("internal/client"), "net/http"}}, []string{m("internal/newthing")}},
		{"cli imports server", pkg{ImportPath: m("internal/cli/agents"), Imports: []string{m("internal/server"), m("internal/client"), m("internal/config")}}, []string{m("internal/server")}},
		{"cli imports server-side packages off the list", pkg{ImportPath: m("internal/cli"), Imports: []string{
			m("internal/jobs"), m("internal/agentruntime"), m("internal/backends"), m("internal/credgateway"),
			m("internal/occ"), m("internal/config"), m("internal/client"), m("internal/client/gen"), m("internal/cli/output"), "github.com/spf13/cobra",
		}}, []string{m("internal/jobs"), m("internal/agentruntime"), m("internal/backends"), m("internal/credgateway")}},
		{"cli imports the module root", pkg{ImportPath: m("internal/cli"), Imports: []string{module}}, []string{module}},
		{"console imports store, worker and the API's handlers", pkg{ImportPath: m("internal/console"), Imports: []string{
			m("internal/store"), m("internal/worker"), m("internal/httpapi/gen"), m("internal/compute"), m("internal/gateway"),
			m("internal/app"), m("internal/iam"), m("internal/occ"), m("internal/httpapi"), m("internal/httpapi/contract"), m("internal/httpapi/limit"), "html/template",
		}}, []string{m("internal/store"), m("internal/worker"), m("internal/httpapi/gen"), m("internal/compute"), m("internal/gateway")}},
		{"test helper from production code", pkg{ImportPath: m("internal/worker"), Imports: []string{m("internal/gateway/gatewaytest")}}, []string{m("internal/gateway/gatewaytest")}},
		{"test helper from tests", pkg{ImportPath: m("internal/worker"), TestImports: []string{m("internal/store/storetest")}, XTestImports: []string{m("internal/compute/computetest")}}, nil},
		{"test helper from test helper", pkg{ImportPath: m("internal/compute/computetest"), Imports: []string{m("internal/gateway/gatewaytest"), m("internal/compute")}}, nil},
	}
	// Every rule must report in some case, so that removing it fails that
	// case (the cases compare the whole list of reported imports).
	reported := map[string]bool{}
	for _, tt := range tests {
		for _, v := range check([]pkg{tt.pkg}) {
			reported[v.rule] = true
		}
	}
	names := []string{testHelperRule}
	for _, r := range rules {
		names = append(names, r.name)
	}
	for _, name := range names {
		if !reported[name] {
			t.Errorf("no case breaks the rule %q", name)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, v := range check([]pkg{tt.pkg}) {
				got = append(got, v.imp)
				if v.rule == "" || !strings.Contains(v.String(), "breaking the rule") {
					t.Errorf("violation without its rule: %v", v)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.bad, ",") {
				t.Errorf("reported %v, want %v", got, tt.bad)
			}
		})
	}
}
