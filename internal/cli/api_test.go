package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const (
	testKey    = "occ_sk_cli_test"
	reqID      = "req_00000000-0000-4000-8000-0000000000aa"
	defaultNS  = "ns_00000000-0000-4000-8000-000000000001"
	teamNS     = "ns_00000000-0000-4000-8000-000000000002"
	cfgID      = "cfg_00000000-0000-4000-8000-000000000001"
	secID      = "sec_00000000-0000-4000-8000-000000000001"
	agtID      = "agt_00000000-0000-4000-8000-000000000001"
	revID      = "rev_00000000-0000-4000-8000-000000000001"
	timestamp  = "2026-01-01T00:00:00.000Z"
	spnID      = "spn_00000000-0000-4000-8000-000000000001"
	newNSID    = "ns_00000000-0000-4000-8000-000000000003"
	apiKeyName = "openai"
)

// fakeOCC is an occ server stand-in for the client commands: a default and
// a team Namespace, one Configuration, Secret and Agent in the default
// Namespace, routes overridable per test, and a record of what it saw.
type fakeOCC struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	routes map[string]http.HandlerFunc
	seen   []string                  // "METHOD /path?query"
	bodies map[string]map[string]any // "METHOD /path" → the last JSON body
}

func newFakeOCC(t *testing.T) *fakeOCC {
	f := &fakeOCC{t: t, bodies: map[string]map[string]any{}}
	ns := "/namespaces/" + defaultNS
	f.routes = map[string]http.HandlerFunc{
		"GET /namespaces": func(w http.ResponseWriter, r *http.Request) {
			// Two pages, to exercise paging through the commands.
			if r.URL.Query().Get("pageToken") == "" {
				writeList(w, []any{namespaceJSON(teamNS, "team", "ready")}, "p2")
				return
			}
			writeList(w, []any{namespaceJSON(defaultNS, "default", "ready")}, "")
		},
		"GET /namespaces/{ns}": func(w http.ResponseWriter, r *http.Request) {
			writeData(w, 200, namespaceJSON(r.PathValue("ns"), "team", "ready"))
		},
		"GET " + ns + "/configurations": func(w http.ResponseWriter, r *http.Request) {
			writeList(w, []any{configurationJSON()}, "")
		},
		"GET " + ns + "/configurations/" + cfgID: func(w http.ResponseWriter, r *http.Request) {
			writeData(w, 200, configurationJSON())
		},
		"POST " + ns + "/configurations": func(w http.ResponseWriter, r *http.Request) {
			writeData(w, 201, configurationJSON())
		},
		"GET " + ns + "/secrets": func(w http.ResponseWriter, r *http.Request) {
			writeList(w, []any{secretJSON()}, "")
		},
		"POST " + ns + "/secrets": func(w http.ResponseWriter, r *http.Request) {
			writeData(w, 201, secretJSON())
		},
		"GET " + ns + "/agents": func(w http.ResponseWriter, r *http.Request) {
			writeList(w, []any{agentJSON("stopped", nil)}, "")
		},
		"POST " + ns + "/agents": func(w http.ResponseWriter, r *http.Request) {
			writeData(w, 201, agentJSON("stopped", nil))
		},
		"GET " + ns + "/agents/" + agtID: func(w http.ResponseWriter, r *http.Request) {
			writeData(w, 200, agentJSON("running", revID))
		},
		"POST " + ns + "/agents/" + agtID + "/deploy": func(w http.ResponseWriter, r *http.Request) {
			writeData(w, 202, map[string]any{"id": revID, "agentId": agtID, "namespaceId": defaultNS, "number": 3,
				"createdAt": timestamp, "createdBy": spnID})
		},
		"POST " + ns + "/agents/" + agtID + "/stop": func(w http.ResponseWriter, r *http.Request) {
			writeData(w, 202, agentJSON("stopped", revID))
		},
		"GET " + ns + "/agents/" + agtID + "/deployments/" + revID: func(w http.ResponseWriter, r *http.Request) {
			writeData(w, 200, deploymentJSON("succeeded", nil))
		},
	}
	return f
}

// start serves the routes; call it after any overrides.
func (f *fakeOCC) start() *fakeOCC {
	mux := http.NewServeMux()
	for pattern, h := range f.routes {
		mux.HandleFunc(pattern, h)
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.seen = append(f.seen, r.Method+" "+r.URL.RequestURI())
		if len(raw) > 0 {
			var b map[string]any
			_ = json.Unmarshal(raw, &b)
			f.bodies[r.Method+" "+r.URL.Path] = b
		}
		f.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+testKey {
			writeError(w, 401, "UNAUTHENTICATED", "Authentication is required.")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
		if _, pattern := mux.Handler(r); pattern == "" {
			writeError(w, 404, "NOT_FOUND", "The resource does not exist.")
			return
		}
		mux.ServeHTTP(w, r)
	}))
	f.t.Cleanup(f.srv.Close)
	return f
}

// body returns the last JSON body sent to "METHOD /path".
func (f *fakeOCC) body(key string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[key]
}

// requests returns the requests seen.
func (f *fakeOCC) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

// api returns global options aimed at the fake, with captured output.
func (f *fakeOCC) api(output string) (*apiOptions, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &apiOptions{IO: ioStreams{Out: &out, ErrOut: &errOut}, URL: f.srv.URL, Key: testKey,
		Namespace: "default", Output: output}, &out, &errOut
}

// env returns a getenv aimed at the fake.
func (f *fakeOCC) env(extra ...string) func(string) string {
	m := map[string]string{"OCC_URL": f.srv.URL, "OCC_KEY": testKey}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return func(k string) string { return m[k] }
}

// result is a command line's outcome.
type result struct {
	out, err string
	code     int
}

// execute runs a command line as Main does (errors print as "occ: …" and
// exit 1), with the client commands reading getenv and stdin.
func execute(getenv func(string) string, stdin string, args ...string) result {
	var out, errOut bytes.Buffer
	root := newRoot(ioStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}, Server{}, getenv)
	root.SetArgs(args)
	code := runRoot(root, &errOut)
	return result{out.String(), errOut.String(), code}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-Id", reqID)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeData(w http.ResponseWriter, status int, data any) {
	writeJSON(w, status, map[string]any{"data": data, "meta": map[string]any{"requestId": reqID}})
}

func writeList(w http.ResponseWriter, items []any, next string) {
	meta := map[string]any{"requestId": reqID}
	if next != "" {
		meta["nextPageToken"] = next
	}
	writeJSON(w, 200, map[string]any{"data": items, "meta": meta})
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": code, "message": msg}, "meta": map[string]any{"requestId": reqID}})
}

func namespaceJSON(id, name, status string) map[string]any {
	return map[string]any{"id": id, "name": name, "status": status, "createdAt": timestamp, "updatedAt": timestamp, "etag": `"1"`}
}

func configurationJSON() map[string]any {
	return map[string]any{"id": cfgID, "namespaceId": defaultNS, "name": "support", "kind": "agent", "generation": 2,
		"values":         map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": "openai/gpt-5"}}},
		"secretBindings": map[string]any{"SLACK_BOT_TOKEN": map[string]any{"source": map[string]any{"kind": "secret", "namespaceId": defaultNS, "id": secID}}},
		"createdAt":      timestamp, "updatedAt": timestamp, "etag": `"2"`}
}

func secretJSON() map[string]any {
	return map[string]any{"id": secID, "namespaceId": defaultNS, "name": apiKeyName, "version": 1, "createdAt": timestamp,
		"updatedAt": timestamp, "etag": `"1"`}
}

func agentJSON(desired string, active any) map[string]any {
	return map[string]any{"id": agtID, "namespaceId": defaultNS, "name": "bot", "configurationId": cfgID, "executionMode": "embedded",
		"harnessAuth":        map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "id": secID}},
		"servicePrincipalId": spnID, "status": "active", "desiredRuntimeState": desired, "activeRevisionId": active,
		"createdAt": timestamp, "updatedAt": timestamp, "etag": `"1"`}
}

func deploymentJSON(status string, extra map[string]any) map[string]any {
	d := map[string]any{"deploymentId": revID, "namespaceId": defaultNS, "agentId": agtID, "status": status,
		"error": nil, "warnings": []any{}, "progress": nil}
	for k, v := range extra {
		d[k] = v
	}
	return d
}

// wantCode is the exit code of a command that printed err: not found for
// a NOT_FOUND answer, else error.
func wantCode(err string) int {
	if strings.HasPrefix(err, "occ: NOT_FOUND: ") {
		return ExitNotFound
	}
	return ExitError
}

// writeFile writes a file under a test directory and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGlobalFlags(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t).start()

	// OCC_URL and OCC_KEY; the default Namespace is found by name over
	// two pages.
	r := execute(f.env(), "", "agents", "list")
	if r.code != 0 || !strings.Contains(r.out, agtID) {
		t.Fatalf("agents list = %+v", r)
	}

	// --key-file wins over OCC_KEY; a wrong key prints the server's error.
	wrong := writeFile(t, "key", "occ_sk_wrong\n")
	r = execute(f.env(), "", "agents", "list", "--key-file", wrong)
	if r.code != 1 || r.err != "occ: UNAUTHENTICATED: Authentication is required. (request "+reqID+")\n" {
		t.Fatalf("wrong key = %+v", r)
	}
	right := writeFile(t, "key", testKey+"\n")
	r = execute(f.env("OCC_KEY", "occ_sk_wrong"), "", "agents", "list", "--key-file", right)
	if r.code != 0 {
		t.Fatalf("key file = %+v", r)
	}
	// OCC_KEY_FILE when OCC_KEY is unset.
	r = execute(f.env("OCC_KEY", "", "OCC_KEY_FILE", right), "", "agents", "list")
	if r.code != 0 {
		t.Fatalf("OCC_KEY_FILE = %+v", r)
	}
	// No key at all names the default file.
	r = execute(f.env("OCC_KEY", "", "OCC_KEY_FILE", filepath.Join(t.TempDir(), "none")), "", "agents", "list")
	if r.code != 1 || !strings.Contains(r.err, "occ: no service key: set OCC_KEY or --key-file") {
		t.Fatalf("no key = %+v", r)
	}

	// -n with an ID is used as is; OCC_NAMESPACE with a name is resolved.
	r = execute(f.env(), "", "secrets", "list", "-n", defaultNS)
	if r.code != 0 || !strings.Contains(r.out, secID) {
		t.Fatalf("-n ID = %+v", r)
	}
	r = execute(f.env("OCC_NAMESPACE", "nope"), "", "secrets", "list")
	if r.code != ExitNotFound || r.err != "occ: NOT_FOUND: No Namespace named \"nope\".\n" {
		t.Fatalf("missing namespace = %+v", r)
	}
	r = execute(f.env(), "", "agents", "list", "--output", "xml")
	if r.code != ExitUsage || !strings.Contains(r.err, "--output must be table, json, yaml, name or jsonpath=TEMPLATE") ||
		!strings.Contains(r.err, "Run 'occ agents list --help' for usage.") || len(f.requests()) != 0 && r.out != "" {
		t.Fatalf("--output xml = %+v", r)
	}
	// An unreachable server.
	r = execute(f.env("OCC_URL", "http://127.0.0.1:1"), "", "namespaces", "list")
	if r.code != 1 || !strings.HasPrefix(r.err, "occ: list namespaces: ") {
		t.Fatalf("unreachable = %+v", r)
	}
}

func TestNamespaceIDSkipsTheList(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t).start()
	api, out, _ := f.api("json")
	api.Namespace = defaultNS
	if err := runSecretsList(context.Background(), &secretsListOptions{API: api}); err != nil {
		t.Fatal(err)
	}
	for _, req := range f.requests() {
		if strings.HasPrefix(req, "GET /namespaces?") {
			t.Fatalf("listed Namespaces for an ID: %v", f.requests())
		}
	}
	var items []map[string]any
	if err := json.Unmarshal(out.Bytes(), &items); err != nil || len(items) != 1 || items[0]["id"] != secID {
		t.Fatalf("json = %s (%v)", out, err)
	}
}

// TestMainRunsClientCommands runs the real entry point: the client commands are registered
// beside the server-side ones and read the OCC_* environment.
func TestMainRunsClientCommands(t *testing.T) {
	f := newFakeOCC(t).start()
	t.Setenv("OCC_URL", f.srv.URL)
	t.Setenv("OCC_KEY", testKey)
	t.Setenv("OCC_NAMESPACE", "")
	t.Setenv("OCC_CLIENT_CONFIG", filepath.Join(t.TempDir(), "none.yaml"))
	var out, errOut bytes.Buffer
	if code := Main([]string{"namespaces", "list", "-o", "json"}, &out, &errOut, Server{}); code != 0 || !strings.Contains(out.String(), defaultNS) {
		t.Fatalf("namespaces list = %d %s %s", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := Main([]string{"secrets", "--help"}, &out, &errOut, Server{}); code != 0 ||
		!strings.Contains(out.String(), "rotate-key") || !strings.Contains(out.String(), "create-keyset") {
		t.Fatalf("secrets help = %d %s", code, out.String())
	}
	errOut.Reset()
	if code := Main([]string{"agents", "get", "ghost"}, &out, &errOut, Server{}); code != ExitNotFound ||
		errOut.String() != "occ: NOT_FOUND: No Agent named \"ghost\".\n" {
		t.Fatalf("agents get ghost = %d %q", code, errOut.String())
	}
}
