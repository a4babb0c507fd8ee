package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
)

func TestNamespacesList(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t).start()
	api, out, _ := f.api("table")
	if err := runNamespacesList(context.Background(), &namespacesListOptions{API: api}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID ") || !strings.Contains(lines[0], "STATUS") ||
		!strings.Contains(lines[1], teamNS) || !strings.Contains(lines[2], defaultNS) || !strings.Contains(lines[2], "default") {
		t.Fatalf("table:\n%s", out)
	}

	api, out, _ = f.api("json")
	if err := runNamespacesList(context.Background(), &namespacesListOptions{API: api}); err != nil {
		t.Fatal(err)
	}
	var items []map[string]any
	if err := json.Unmarshal(out.Bytes(), &items); err != nil || len(items) != 2 || items[1]["name"] != "default" {
		t.Fatalf("json = %s (%v)", out, err)
	}
}

func TestNamespacesCreateWait(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	var mu sync.Mutex
	polls := 0
	f.routes["POST /namespaces"] = func(w http.ResponseWriter, r *http.Request) {
		writeData(w, 201, namespaceJSON(newNSID, "blue", "provisioning"))
	}
	f.routes["GET /namespaces/"+newNSID] = func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		polls++
		n := polls
		mu.Unlock()
		status := "provisioning"
		if n >= 2 {
			status = "ready"
		}
		writeData(w, 200, namespaceJSON(newNSID, "blue", status))
	}
	f.start()
	api, out, errOut := f.api("table")
	opts := &namespacesCreateOptions{API: api, Name: "blue", Wait: true}
	if err := runNamespacesCreate(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if f.body("POST /namespaces")["name"] != "blue" {
		t.Fatalf("body = %v", f.body("POST /namespaces"))
	}
	if !strings.Contains(out.String(), "status:") || !strings.Contains(out.String(), "ready") ||
		errOut.String() != "namespace "+newNSID+": provisioning\n" {
		t.Fatalf("out:\n%s\nerr:\n%s", out, errOut)
	}

	// Without --wait, through the command line, in JSON.
	r := execute(f.env(), "", "namespaces", "create", "blue", "-o", "json")
	var ns map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.out), &ns) != nil || ns["status"] != "provisioning" {
		t.Fatalf("create = %+v", r)
	}
}

func TestNamespacesCreateError(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	f.routes["POST /namespaces"] = func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 400, map[string]any{"error": map[string]any{"code": "INVALID_REQUEST", "message": "The request is invalid.",
			"details": []any{map[string]any{"path": "/name", "code": "TOO_LONG"}}}, "meta": map[string]any{"requestId": reqID}})
	}
	f.start()
	r := execute(f.env(), "", "namespaces", "create", strings.Repeat("x", 300))
	if want := "occ: INVALID_REQUEST: The request is invalid. [/name: TOO_LONG] (request " + reqID + ")\n"; r.code != 1 || r.err != want || r.out != "" {
		t.Fatalf("got %+v, want stderr %q", r, want)
	}
}

func TestNamespacesGetAndDelete(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	var mu sync.Mutex
	deleted := false
	f.routes["GET /namespaces/"+teamNS] = func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		d := deleted
		mu.Unlock()
		if d {
			writeError(w, 404, "NOT_FOUND", "The resource does not exist.")
			return
		}
		writeData(w, 200, namespaceJSON(teamNS, "team", "ready"))
	}
	f.routes["DELETE /namespaces/"+teamNS] = func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		deleted = true
		mu.Unlock()
		writeData(w, 202, namespaceJSON(teamNS, "team", "deleting"))
	}
	f.start()
	// By name.
	api, out, _ := f.api("table")
	if err := runNamespacesGet(context.Background(), &namespacesGetOptions{API: api, Namespace: "team"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "id:") || !strings.Contains(out.String(), teamNS) {
		t.Fatalf("get:\n%s", out)
	}
	r := execute(f.env(), "", "namespaces", "delete", "team", "--wait")
	if r.code != 0 || r.out != "namespace "+teamNS+" deleted\n" || r.err != "namespace "+teamNS+": deleting\n" {
		t.Fatalf("delete = %+v", r)
	}
	r = execute(f.env(), "", "namespaces", "get", teamNS)
	if r.code != ExitNotFound || r.err != "occ: NOT_FOUND: The resource does not exist. (request "+reqID+")\n" {
		t.Fatalf("get after delete = %+v", r)
	}
}
