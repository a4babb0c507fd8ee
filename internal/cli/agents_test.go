package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
)

const agentsPath = "/namespaces/" + defaultNS + "/agents"

func TestAgentsCreate(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t).start()
	// Configuration and Secret by name; both resolved in the Namespace.
	api, out, _ := f.api("table")
	opts := &agentsCreateOptions{API: api, Name: "bot", Configuration: "support", ExecutionMode: "embedded", SecretAPIKey: apiKeyName}
	if err := runAgentsCreate(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(f.body("POST " + agentsPath))
	want := `{"configurationId":"` + cfgID + `","executionMode":"embedded","harnessAuth":{"method":"api_key","source":{"id":"` + secID + `","kind":"secret"}},"name":"bot"}`
	if string(got) != want {
		t.Fatalf("body = %s, want %s", got, want)
	}
	if !strings.Contains(out.String(), "harness auth:") || !strings.Contains(out.String(), "api_key secret "+secID) {
		t.Fatalf("out:\n%s", out)
	}

	// IDs are sent as they are; no harness binding without --secret-api-key.
	r := execute(f.env(), "", "agents", "create", "--name", "b2", "--configuration", cfgID, "-o", "json")
	got, _ = json.Marshal(f.body("POST " + agentsPath))
	if r.code != 0 || string(got) != `{"configurationId":"`+cfgID+`","name":"b2"}` {
		t.Fatalf("create = %+v, body %s", r, got)
	}
	var a map[string]any
	if json.Unmarshal([]byte(r.out), &a) != nil || a["id"] != agtID {
		t.Fatalf("json = %s", r.out)
	}

	r = execute(f.env(), "", "agents", "create", "--name", "b3", "--configuration", cfgID, "--execution-mode", "fast")
	if r.code != 1 || !strings.Contains(r.err, "--execution-mode must be embedded or dedicated") {
		t.Fatalf("bad mode = %+v", r)
	}
	r = execute(f.env(), "", "agents", "create", "--name", "b3", "--configuration", cfgID, "--secret-api-key", "nope")
	if r.code != ExitNotFound || r.err != "occ: NOT_FOUND: No Secret named \"nope\".\n" {
		t.Fatalf("missing secret = %+v", r)
	}
}

func TestAgentsListGetStop(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t).start()
	api, out, _ := f.api("table")
	if err := runAgentsList(context.Background(), &agentsListOptions{API: api}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "ACTIVE REVISION") || !strings.Contains(lines[1], "bot") || !strings.Contains(lines[1], "stopped") {
		t.Fatalf("list:\n%s", out)
	}

	r := execute(f.env(), "", "agents", "get", "bot")
	if r.code != 0 || !strings.Contains(r.out, "active revision:") || !strings.Contains(r.out, revID) || !strings.Contains(r.out, "running") {
		t.Fatalf("get = %+v", r)
	}
	r = execute(f.env(), "", "agents", "stop", agtID, "-o", "json")
	var a map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.out), &a) != nil || a["desiredRuntimeState"] != "stopped" {
		t.Fatalf("stop = %+v", r)
	}
	if !contains(f.requests(), "POST "+agentsPath+"/"+agtID+"/stop") {
		t.Fatalf("requests = %v", f.requests())
	}
	r = execute(f.env(), "", "agents", "get", "ghost")
	if r.code != ExitNotFound || r.err != "occ: NOT_FOUND: No Agent named \"ghost\".\n" {
		t.Fatalf("missing = %+v", r)
	}
}

func TestAgentsDeleteWait(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	var mu sync.Mutex
	gets := 0
	f.routes["DELETE "+agentsPath+"/"+agtID] = func(w http.ResponseWriter, r *http.Request) {
		a := agentJSON("stopped", nil)
		a["status"] = "deleting"
		writeData(w, 202, a)
	}
	f.routes["GET "+agentsPath+"/"+agtID] = func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gets++
		n := gets
		mu.Unlock()
		if n < 3 {
			writeData(w, 200, agentJSON("stopped", nil))
			return
		}
		writeError(w, 404, "NOT_FOUND", "The resource does not exist.")
	}
	f.start()
	api, out, errOut := f.api("table")
	if err := runAgentsDelete(context.Background(), &agentsDeleteOptions{API: api, Agent: "bot", Wait: true}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "agent "+agtID+" deleted\n" || errOut.String() != "agent "+agtID+": deleting\n" {
		t.Fatalf("out %q err %q", out, errOut)
	}
	// Without --wait: the Agent, deleting.
	r := execute(f.env(), "", "agents", "delete", agtID)
	if r.code != 0 || !strings.Contains(r.out, "deleting") {
		t.Fatalf("delete = %+v", r)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
