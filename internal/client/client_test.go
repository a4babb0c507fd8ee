package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/client"
)

const (
	testKey = "occ_sk_test"
	reqID   = "req_00000000-0000-4000-8000-000000000001"
	nsID    = "ns_00000000-0000-4000-8000-000000000001"
	agtID   = "agt_00000000-0000-4000-8000-000000000001"
	revID   = "rev_00000000-0000-4000-8000-000000000001"
	cfgID   = "cfg_00000000-0000-4000-8000-000000000001"
	secID   = "sec_00000000-0000-4000-8000-000000000001"
)

// fake is an occ server stand-in: handlers by "METHOD /path" and a log of
// the requests it saw.
type fake struct {
	t   *testing.T
	srv *httptest.Server
	mu  sync.Mutex
	log []string
}

func newFake(t *testing.T, routes map[string]http.HandlerFunc) (*fake, *client.Client) {
	t.Helper()
	f := &fake{t: t}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.log = append(f.log, r.Method+" "+r.URL.RequestURI())
		f.mu.Unlock()
		if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
			writeError(w, 401, "UNAUTHENTICATED", "Authentication is required.")
			return
		}
		h, ok := routes[r.Method+" "+r.URL.Path]
		if !ok {
			writeError(w, 404, "NOT_FOUND", "The resource does not exist.")
			return
		}
		h(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f, client.New(f.srv.URL, client.WithKey(testKey), client.WithPollInterval(time.Millisecond))
}

// requests returns the requests seen so far.
func (f *fake) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

// count returns how many requests started with prefix.
func (f *fake) count(prefix string) int {
	n := 0
	for _, r := range f.requests() {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
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

func writeError(w http.ResponseWriter, status int, code, msg string, details ...map[string]any) {
	e := map[string]any{"code": code, "message": msg}
	if len(details) > 0 {
		e["details"] = details
	}
	writeJSON(w, status, map[string]any{"error": e, "meta": map[string]any{"requestId": reqID}})
}

func namespace(id, name, status string) map[string]any {
	return map[string]any{"id": id, "name": name, "status": status, "createdAt": "2026-01-01T00:00:00.000Z",
		"updatedAt": "2026-01-01T00:00:00.000Z", "etag": `"1"`}
}

func agent(state string, active any) map[string]any {
	return map[string]any{"id": agtID, "namespaceId": nsID, "name": "bot", "configurationId": cfgID,
		"servicePrincipalId": "spn_00000000-0000-4000-8000-000000000001", "status": "active", "desiredRuntimeState": state,
		"activeRevisionId": active, "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z", "etag": `"1"`}
}

func deployment(status string, extra map[string]any) map[string]any {
	d := map[string]any{"deploymentId": revID, "namespaceId": nsID, "agentId": agtID, "status": status,
		"error": nil, "warnings": []any{}, "progress": nil}
	for k, v := range extra {
		d[k] = v
	}
	return d
}

func TestEnvelopeAndHeaders(t *testing.T) {
	t.Parallel()
	var ua string
	_, c := newFake(t, map[string]http.HandlerFunc{
		"GET /namespaces/" + nsID: func(w http.ResponseWriter, r *http.Request) {
			ua = r.Header.Get("User-Agent")
			writeData(w, 200, namespace(nsID, "team", "ready"))
		},
	})
	ns, err := c.GetNamespace(context.Background(), nsID)
	if err != nil {
		t.Fatal(err)
	}
	if ns.Id != nsID || ns.Name != "team" || ns.Status != "ready" || ns.Etag != `"1"` {
		t.Fatalf("namespace = %+v", ns)
	}
	if ua != "occ-client" {
		t.Fatalf("User-Agent = %q", ua)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	_, c := newFake(t, map[string]http.HandlerFunc{
		"POST /namespaces": func(w http.ResponseWriter, r *http.Request) {
			writeError(w, 400, "INVALID_REQUEST", "The request is invalid.", map[string]any{"path": "/name", "code": "TOO_LONG"})
		},
		"GET /namespaces/" + nsID: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			_, _ = io.WriteString(w, "<html>Bad Gateway</html>\nmore")
		},
	})
	ctx := context.Background()
	_, err := c.CreateNamespace(ctx, strings.Repeat("x", 300))
	var ae *client.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %T %v", err, err)
	}
	if ae.Status != 400 || ae.Code != "INVALID_REQUEST" || ae.Message != "The request is invalid." || ae.RequestID != reqID ||
		len(ae.Details) != 1 || ae.Details[0].Path != "/name" || ae.Details[0].Code != "TOO_LONG" {
		t.Fatalf("APIError = %+v", ae)
	}
	if want := "INVALID_REQUEST: The request is invalid. [/name: TOO_LONG] (request " + reqID + ")"; ae.Error() != want {
		t.Fatalf("Error() = %q, want %q", ae.Error(), want)
	}

	// Not an error envelope: the status and the start of the body.
	_, err = c.GetNamespace(ctx, nsID)
	if !errors.As(err, &ae) || ae.Status != 502 || ae.Code != "HTTP_502" || ae.Message != "<html>Bad Gateway</html>" || ae.RequestID != "" {
		t.Fatalf("502 = %#v", err)
	}

	// Unknown routes and bad keys.
	_, err = c.GetAgent(ctx, nsID, agtID)
	if !client.IsNotFound(err) {
		t.Fatalf("missing agent = %v", err)
	}
	_, err = client.New(c.BaseURL(), client.WithKey("wrong")).GetNamespace(ctx, nsID)
	if !client.IsCode(err, client.CodeUnauthenticated) {
		t.Fatalf("bad key = %v", err)
	}

	// A server that cannot be reached is not an APIError.
	_, err = client.New("http://127.0.0.1:1").GetNamespace(ctx, nsID)
	if err == nil || errors.As(err, &ae) {
		t.Fatalf("unreachable = %v", err)
	}
}

func TestErrorFromResponse(t *testing.T) {
	t.Parallel()
	ok := &http.Response{StatusCode: 201, Header: http.Header{}}
	if err := client.ErrorFromResponse(ok, nil); err != nil {
		t.Fatal(err)
	}
	res := &http.Response{StatusCode: 409, Header: http.Header{}}
	err := client.ErrorFromResponse(res, []byte(`{"error":{"code":"RESOURCE_CONFLICT","message":"Taken."},"meta":{"requestId":"`+reqID+`"}}`))
	if !client.IsCode(err, client.CodeResourceConflict) {
		t.Fatalf("err = %v", err)
	}
}

func TestListAllNamespacesPages(t *testing.T) {
	t.Parallel()
	f, c := newFake(t, map[string]http.HandlerFunc{
		"GET /namespaces": func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("pageSize") != "200" {
				writeError(w, 400, "INVALID_REQUEST", "page size")
				return
			}
			switch r.URL.Query().Get("pageToken") {
			case "":
				writeList(w, []any{namespace(nsID, "a", "ready"), namespace(nsID, "b", "ready")}, "t1")
			case "t1":
				writeList(w, []any{namespace(nsID, "c", "ready")}, "t2")
			case "t2":
				writeList(w, []any{namespace(nsID, "default", "ready")}, "")
			}
		},
	})
	ctx := context.Background()
	all, err := c.ListAllNamespaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range all {
		names = append(names, n.Name)
	}
	if strings.Join(names, ",") != "a,b,c,default" || f.count("GET /namespaces?") != 3 {
		t.Fatalf("names = %v after %v", names, f.requests())
	}
	ns, err := c.NamespaceByName(ctx, "default")
	if err != nil || ns.Name != "default" {
		t.Fatalf("by name = %v %v", ns, err)
	}
	if _, err := c.NamespaceByName(ctx, "nope"); !client.IsNotFound(err) {
		t.Fatalf("missing name = %v", err)
	}

	// One page at a time.
	items, next, err := c.ListNamespaces(ctx, client.Page{Size: 200, Token: "t1"})
	if err != nil || len(items) != 1 || next != "t2" {
		t.Fatalf("page = %v %q %v", items, next, err)
	}
}

func TestListAllStopsOnARepeatedToken(t *testing.T) {
	t.Parallel()
	_, c := newFake(t, map[string]http.HandlerFunc{
		"GET /namespaces/" + nsID + "/agents": func(w http.ResponseWriter, r *http.Request) {
			writeList(w, []any{agent("stopped", nil)}, "same")
		},
	})
	if _, err := c.ListAllAgents(context.Background(), nsID); err == nil || !strings.Contains(err.Error(), "repeated") {
		t.Fatalf("err = %v", err)
	}
}

func TestWaitNamespace(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	states := []string{"provisioning", "provisioning", "ready", "deleting", "gone"}
	_, c := newFake(t, map[string]http.HandlerFunc{
		"GET /namespaces/" + nsID: func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			s := states[0]
			if len(states) > 1 {
				states = states[1:]
			}
			mu.Unlock()
			if s == "gone" {
				writeError(w, 404, "NOT_FOUND", "The resource does not exist.")
				return
			}
			writeData(w, 200, namespace(nsID, "team", s))
		},
		"GET /namespaces/ns_failed": func(w http.ResponseWriter, r *http.Request) {
			writeData(w, 200, namespace("ns_failed", "team", "failed"))
		},
	})
	ctx := context.Background()
	ns, err := c.WaitNamespace(ctx, nsID, client.NamespaceReady)
	if err != nil || ns.Status != "ready" {
		t.Fatalf("ready = %v %v", ns, err)
	}
	if ns, err := c.WaitNamespace(ctx, nsID, client.NamespaceGone); err != nil || ns != nil {
		t.Fatalf("gone = %v %v", ns, err)
	}
	if _, err := c.WaitNamespace(ctx, "ns_failed", client.NamespaceReady); err == nil || !strings.Contains(err.Error(), "failed") {
		t.Fatalf("failed = %v", err)
	}
	// Waiting for ready on a Namespace that is gone is an error.
	if _, err := c.WaitNamespace(ctx, nsID, client.NamespaceReady); !client.IsNotFound(err) {
		t.Fatalf("ready after gone = %v", err)
	}
	// The context bounds the wait.
	short, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.WaitNamespace(short, "ns_failed", client.NamespaceFailed+"x"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled = %v", err)
	}
}

func TestAgentsAndResources(t *testing.T) {
	t.Parallel()
	var (
		mu     sync.Mutex
		bodies = map[string]map[string]any{}
		ifm    string
	)
	record := func(key string, r *http.Request) {
		var b map[string]any
		_ = json.NewDecoder(r.Body).Decode(&b)
		mu.Lock()
		bodies[key] = b
		mu.Unlock()
	}
	base := "/namespaces/" + nsID
	_, c := newFake(t, map[string]http.HandlerFunc{
		"POST " + base + "/agents": func(w http.ResponseWriter, r *http.Request) {
			record("agent", r)
			writeData(w, 201, agent("stopped", nil))
		},
		"PATCH " + base + "/agents/" + agtID: func(w http.ResponseWriter, r *http.Request) {
			record("patch", r)
			ifm = r.Header.Get("If-Match")
			writeData(w, 200, agent("stopped", nil))
		},
		"POST " + base + "/agents/" + agtID + "/deploy": func(w http.ResponseWriter, r *http.Request) {
			writeData(w, 202, map[string]any{"id": revID, "agentId": agtID, "namespaceId": nsID, "number": 1,
				"createdAt": "2026-01-01T00:00:00.000Z", "createdBy": "spn_x"})
		},
		"POST " + base + "/agents/" + agtID + "/stop": func(w http.ResponseWriter, r *http.Request) {
			writeData(w, 202, agent("stopped", revID))
		},
		"DELETE " + base + "/agents/" + agtID: func(w http.ResponseWriter, r *http.Request) {
			a := agent("stopped", nil)
			a["status"] = "deleting"
			writeData(w, 202, a)
		},
		"POST " + base + "/configurations": func(w http.ResponseWriter, r *http.Request) {
			record("cfg", r)
			writeData(w, 201, map[string]any{"id": cfgID, "namespaceId": nsID, "name": "c", "kind": "agent", "generation": 1,
				"createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z", "etag": `"1"`})
		},
		"DELETE " + base + "/configurations/" + cfgID: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) },
		"POST " + base + "/secrets": func(w http.ResponseWriter, r *http.Request) {
			record("secret", r)
			writeError(w, 409, "RESOURCE_CONFLICT", "A Secret with this name exists.")
		},
		"DELETE " + base + "/secrets/" + secID: func(w http.ResponseWriter, r *http.Request) {
			writeError(w, 409, "RESOURCE_CONFLICT", "The Secret is bound.")
		},
	})
	ctx := context.Background()
	mode := client.AgentCreate{Name: "bot", ConfigurationId: cfgID}
	if a, err := c.CreateAgent(ctx, nsID, mode); err != nil || a.Id != agtID || a.ActiveRevisionId.IsSpecified() && !a.ActiveRevisionId.IsNull() {
		t.Fatalf("create = %+v %v", a, err)
	}
	if _, err := c.PatchAgent(ctx, nsID, agtID, client.AgentPatch{ConfigurationId: cfgID}, `"1"`); err != nil || ifm != `"1"` {
		t.Fatalf("patch = %v, If-Match %q", err, ifm)
	}
	if rev, err := c.DeployAgent(ctx, nsID, agtID); err != nil || rev.Id != revID || rev.Number != 1 {
		t.Fatalf("deploy = %+v %v", rev, err)
	}
	if a, err := c.StopAgent(ctx, nsID, agtID); err != nil || a.ActiveRevisionId.MustGet() != revID {
		t.Fatalf("stop = %+v %v", a, err)
	}
	if a, err := c.DeleteAgent(ctx, nsID, agtID); err != nil || a.Status != "deleting" {
		t.Fatalf("delete = %+v %v", a, err)
	}
	if cfg, err := c.CreateConfiguration(ctx, nsID, client.ConfigurationCreate{Name: "c"}); err != nil || cfg.Id != cfgID {
		t.Fatalf("configuration = %+v %v", cfg, err)
	}
	if err := c.DeleteConfiguration(ctx, nsID, cfgID, ""); err != nil {
		t.Fatal(err)
	}
	_, err := c.CreateSecret(ctx, nsID, "openai", "sk-canary-value")
	if !client.IsCode(err, client.CodeResourceConflict) || strings.Contains(err.Error(), "canary") {
		t.Fatalf("secret = %v", err)
	}
	if err := c.DeleteSecret(ctx, nsID, secID, ""); !client.IsCode(err, client.CodeResourceConflict) {
		t.Fatalf("delete secret = %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if bodies["agent"]["name"] != "bot" || bodies["agent"]["configurationId"] != cfgID || len(bodies["agent"]) != 2 {
		t.Fatalf("agent body = %v", bodies["agent"])
	}
	if bodies["cfg"]["kind"] != "agent" || bodies["cfg"]["values"] == nil {
		t.Fatalf("configuration body = %v", bodies["cfg"])
	}
	if bodies["secret"]["name"] != "openai" || bodies["secret"]["value"] != "sk-canary-value" {
		t.Fatalf("secret body = %v", bodies["secret"])
	}
}

func TestWaitAgentGone(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	gets := 0
	_, c := newFake(t, map[string]http.HandlerFunc{
		"GET /namespaces/" + nsID + "/agents/" + agtID: func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			gets++
			n := gets
			mu.Unlock()
			if n < 3 {
				writeData(w, 200, agent("stopped", nil))
				return
			}
			writeError(w, 404, "NOT_FOUND", "The resource does not exist.")
		},
	})
	if err := c.WaitAgentGone(context.Background(), nsID, agtID); err != nil {
		t.Fatal(err)
	}
}

// sse writes Server-Sent Events, flushing each.
func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	for _, e := range events {
		_, _ = io.WriteString(w, e)
		w.(http.Flusher).Flush()
	}
}

func statusEvent(status string, extra map[string]any) string {
	b, _ := json.Marshal(deployment(status, extra))
	return "event: status\ndata: " + string(b) + "\n\n"
}

var eventsPath = "/namespaces/" + nsID + "/agents/" + agtID + "/deployments/" + revID + "/events"
var deploymentPath = "/namespaces/" + nsID + "/agents/" + agtID + "/deployments/" + revID

func TestWaitDeploymentStream(t *testing.T) {
	t.Parallel()
	attempt := map[string]any{"progress": map[string]any{"lastAttempt": map[string]any{"at": "2026-01-01T00:00:01.000Z",
		"code": "REVISION_INCOMPLETE", "message": "Not ready yet."}, "nextAttemptAt": "2026-01-01T00:00:02.000Z"}}
	f, c := newFake(t, map[string]http.HandlerFunc{
		"GET " + eventsPath: func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Accept") != "text/event-stream" {
				writeError(w, 400, "INVALID_REQUEST", "accept")
				return
			}
			sse(w, statusEvent("queued", nil), ": keep-alive\n\n", statusEvent("running", attempt),
				statusEvent("succeeded", map[string]any{"warnings": []any{map[string]any{"code": "PLUGIN_AUTH_REQUIRED", "pluginId": "cal@x"}}}))
		},
	})
	var seen []client.DeploymentSummary
	st, err := c.WatchDeployment(context.Background(), nsID, agtID, revID, func(s *client.DeploymentStatus) {
		seen = append(seen, client.Summarize(s))
	})
	if err != nil || st.Status != "succeeded" {
		t.Fatalf("wait = %+v %v", st, err)
	}
	if len(seen) != 3 || seen[0].Status != "queued" || seen[1].AttemptCode != "REVISION_INCOMPLETE" ||
		seen[1].AttemptMessage != "Not ready yet." || seen[1].NextAttemptAt != "2026-01-01T00:00:02.000Z" ||
		seen[2].Status != "succeeded" || len(seen[2].Warnings) != 1 || seen[2].Warnings[0] != "PLUGIN_AUTH_REQUIRED cal@x" {
		t.Fatalf("seen = %+v", seen)
	}
	if f.count("GET "+deploymentPath) != 1 { // the events route only: no polling
		t.Fatalf("requests = %v", f.requests())
	}
}

func TestWaitDeploymentFailed(t *testing.T) {
	t.Parallel()
	_, c := newFake(t, map[string]http.HandlerFunc{
		"GET " + eventsPath: func(w http.ResponseWriter, r *http.Request) {
			sse(w, statusEvent("failed", map[string]any{"error": map[string]any{"code": "RUNTIME_AUTHENTICATION_FAILED",
				"message": "The runtime rejected the model credential."}}))
		},
	})
	st, err := c.WaitDeployment(context.Background(), nsID, agtID, revID)
	var de *client.DeploymentError
	if !errors.As(err, &de) || de.Code != "RUNTIME_AUTHENTICATION_FAILED" || de.DeploymentID != revID || st == nil || st.Status != "failed" {
		t.Fatalf("wait = %+v %v", st, err)
	}
	if want := "RUNTIME_AUTHENTICATION_FAILED: The runtime rejected the model credential. (deployment " + revID + ")"; err.Error() != want {
		t.Fatalf("Error() = %q", err.Error())
	}
}

// TestWaitDeploymentFallback: the stream breaks (or cannot be opened) and
// WaitDeployment polls GET until terminal, reporting each status once.
func TestWaitDeploymentFallback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		stream http.HandlerFunc
	}{
		{"stream ends early", func(w http.ResponseWriter, r *http.Request) { sse(w, statusEvent("queued", nil)) }},
		{"stream cut mid-event", func(w http.ResponseWriter, r *http.Request) {
			sse(w, statusEvent("queued", nil), "event: status\ndata: {\"status\":")
		}},
		{"stream refused", func(w http.ResponseWriter, r *http.Request) {
			writeError(w, 503, "DEPENDENCY_UNAVAILABLE", "Try again.")
		}},
		{"not a stream", func(w http.ResponseWriter, r *http.Request) { writeData(w, 200, deployment("queued", nil)) }},
		{"bad event", func(w http.ResponseWriter, r *http.Request) { sse(w, "event: status\ndata: not json\n\n") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			polls := []string{"queued", "transient", "running", "running", "succeeded"}
			f, c := newFake(t, map[string]http.HandlerFunc{
				"GET " + eventsPath: tc.stream,
				"GET " + deploymentPath: func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					s := polls[0]
					if len(polls) > 1 {
						polls = polls[1:]
					}
					mu.Unlock()
					if s == "transient" {
						writeError(w, 503, "DEPENDENCY_UNAVAILABLE", "Try again.")
						return
					}
					writeData(w, 200, deployment(s, nil))
				},
			})
			var seen []string
			st, err := c.WatchDeployment(context.Background(), nsID, agtID, revID, func(s *client.DeploymentStatus) {
				seen = append(seen, string(s.Status))
			})
			if err != nil || st.Status != "succeeded" {
				t.Fatalf("wait = %+v %v", st, err)
			}
			if got := strings.Join(seen, ","); got != "queued,running,succeeded" {
				t.Fatalf("seen %s; requests %v", got, f.requests())
			}
		})
	}
}

func TestWaitDeploymentGivesUp(t *testing.T) {
	t.Parallel()
	_, c := newFake(t, map[string]http.HandlerFunc{
		"GET " + deploymentPath: func(w http.ResponseWriter, r *http.Request) {
			writeError(w, 503, "DEPENDENCY_UNAVAILABLE", "Try again.")
		},
	})
	// No events route (404), then GET only ever fails: polling gives up.
	if _, err := c.WaitDeployment(context.Background(), nsID, agtID, revID); !client.IsCode(err, "DEPENDENCY_UNAVAILABLE") {
		t.Fatalf("err = %v", err)
	}
	// A deployment that does not exist ends the wait at once.
	if _, err := c.WaitDeployment(context.Background(), nsID, agtID, "rev_missing"); !client.IsNotFound(err) {
		t.Fatalf("missing = %v", err)
	}
}

func TestWaitDeploymentCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	_, c := newFake(t, map[string]http.HandlerFunc{
		"GET " + eventsPath: func(w http.ResponseWriter, r *http.Request) {
			sse(w, statusEvent("queued", nil))
			cancel()
			<-r.Context().Done()
		},
	})
	if _, err := c.WaitDeployment(ctx, nsID, agtID, revID); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestReadEvents(t *testing.T) {
	t.Parallel()
	in := ": comment\r\nevent: status\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n" + // CRLF, two data lines
		"data:plain\n\n" + // unnamed, no space after the colon
		"event: ignored\n\n" + // no data: not dispatched
		"id: 7\nretry: 10\nevent: x\ndata: y\n\n" +
		"event: last\ndata: unfinished" // dropped at EOF
	var got []string
	err := client.ReadEvents(strings.NewReader(in), func(event string, data []byte) error {
		got = append(got, event+"="+string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"status={\"a\":\n1}", "message=plain", "x=y"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events = %q, want %q", got, want)
	}
}
