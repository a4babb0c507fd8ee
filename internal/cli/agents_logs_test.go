package cli

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestAgentsLogs: the newest revision's output by default, --revision and
// --tail passed on, the lines printed as they are (redaction is the
// server's), -o json the whole answer, a revision without kept output said
// on stderr, a bad --tail refused before any request.
func TestAgentsLogs(t *testing.T) {
	t.Parallel()
	const older = "rev_00000000-0000-4000-8000-000000000009"
	f := newFakeOCC(t)
	f.routes["GET "+nsPath+"/agents/"+agtID+"/revisions"] = func(w http.ResponseWriter, r *http.Request) {
		rev := func(id string, n int) map[string]any {
			return map[string]any{"id": id, "agentId": agtID, "namespaceId": defaultNS, "number": n, "createdAt": timestamp, "createdBy": spnID}
		}
		writeList(w, []any{rev(older, 2), rev(revID, 3)}, "")
	}
	for _, id := range []string{revID, older} {
		f.routes["GET "+nsPath+"/agents/"+agtID+"/deployments/"+id+"/runtime/logs"] = func(w http.ResponseWriter, r *http.Request) {
			data := map[string]any{"revisionId": id, "found": false, "lines": []any{}, "truncated": false}
			if id == revID {
				data = map[string]any{"revisionId": id, "found": true, "truncated": true,
					"lines": []any{"[gateway] environment OPENAI_API_KEY=[REDACTED]", "[gateway] gateway ready"}}
			}
			writeData(w, 200, data)
		}
	}
	f.start()

	r := execute(f.env(), "", "agents", "logs", "bot", "--tail", "2")
	if r.code != 0 || r.out != "[gateway] environment OPENAI_API_KEY=[REDACTED]\n[gateway] gateway ready\n" || r.err != "" {
		t.Fatalf("logs = %+v", r)
	}
	if !contains(f.requests(), "GET "+nsPath+"/agents/"+agtID+"/deployments/"+revID+"/runtime/logs?tailLines=2") {
		t.Fatalf("requests = %v", f.requests())
	}
	r = execute(f.env(), "", "agents", "logs", "bot", "-o", "json")
	var got map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.out), &got) != nil || got["found"] != true || got["truncated"] != true {
		t.Fatalf("logs -o json = %+v", r)
	}
	r = execute(f.env(), "", "agents", "logs", "bot", "--revision", "2")
	if r.code != 0 || r.out != "" || !strings.Contains(r.err, "no gateway output of revision "+older+" is kept") {
		t.Fatalf("logs of a revision without output = %+v", r)
	}
	before := len(f.requests())
	for _, tail := range []string{"0", "1001"} {
		r = execute(f.env(), "", "agents", "logs", "bot", "--tail", tail)
		if r.code != ExitError || !strings.Contains(r.err, "--tail must be 1 to 1000") || len(f.requests()) != before {
			t.Fatalf("logs --tail %s = %+v (requests %v)", tail, r, f.requests()[before:])
		}
	}
	if !contains(f.requests(), "GET "+nsPath+"/agents/"+agtID+"/deployments/"+revID+"/runtime/logs?tailLines=200") {
		t.Fatalf("the default tail is not 200: requests = %v", f.requests())
	}
}
