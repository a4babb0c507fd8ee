package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
)

const (
	cfg2ID = "cfg_00000000-0000-4000-8000-000000000002"
	saID   = "sa_00000000-0000-4000-8000-000000000001"
	csID   = "cs_00000000-0000-4000-8000-000000000001"
)

// patchFake is the fake with PATCH and the lists harness auth names need;
// it records each PATCH's If-Match.
func patchFake(t *testing.T) (*fakeOCC, func() []string) {
	f := newFakeOCC(t)
	var (
		mu      sync.Mutex
		ifMatch []string
	)
	f.routes["PATCH "+agentsPath+"/"+agtID] = func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ifMatch = append(ifMatch, r.Header.Get("If-Match"))
		mu.Unlock()
		if r.Header.Get("If-Match") != `"1"` {
			writeError(w, 412, "PRECONDITION_FAILED", "The resource changed; read it again.")
			return
		}
		a := agentJSON("stopped", nil)
		a["etag"] = `"2"`
		writeData(w, 200, a)
	}
	f.routes["GET /namespaces/"+defaultNS+"/configurations"] = func(w http.ResponseWriter, r *http.Request) {
		other := configurationJSON()
		other["id"], other["name"] = cfg2ID, "sales"
		writeList(w, []any{configurationJSON(), other}, "")
	}
	f.routes["GET /namespaces/"+defaultNS+"/credential-sources"] = func(w http.ResponseWriter, r *http.Request) {
		writeList(w, []any{map[string]any{"id": csID, "namespaceId": defaultNS, "name": "vault", "type": "vault", "config": map[string]any{},
			"secrets": map[string]any{}, "state": "ready", "createdAt": timestamp, "updatedAt": timestamp, "etag": `"1"`}}, "")
	}
	return f, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), ifMatch...)
	}
}

func TestAgentsPatch(t *testing.T) {
	t.Parallel()
	f, ifMatch := patchFake(t)
	f.start()
	patch := "PATCH " + agentsPath + "/" + agtID

	// Without --configuration the current one is sent, read first, with
	// the Agent's ETag; none clears the backend.
	api, out, _ := f.api("table")
	opts := &agentsPatchOptions{API: api, Agent: "bot", Backend: "none", ExecutionMode: "dedicated"}
	if err := runAgentsPatch(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(f.body(patch))
	if string(got) != `{"backendId":null,"configurationId":"`+cfgID+`","executionMode":"dedicated"}` || ifMatch()[0] != `"1"` {
		t.Fatalf("body = %s, If-Match %v", got, ifMatch())
	}
	if !contains(f.requests(), "GET "+agentsPath+"/"+agtID) || !strings.Contains(out.String(), "id:") {
		t.Fatalf("requests %v, out:\n%s", f.requests(), out)
	}

	for _, c := range []struct {
		args []string
		body string
	}{
		{[]string{"--configuration", "sales", "--backend", "chatgpt-main"},
			`{"backendId":"chatgpt-main","configurationId":"` + cfg2ID + `"}`},
		{[]string{"--secret-api-key", apiKeyName, "--plugin", "slack@curated=write_actions", "--plugin", "drive@curated"},
			`{"configurationId":"` + cfgID + `","harnessAuth":{"method":"api_key","source":{"id":"` + secID + `","kind":"secret"}},` +
				`"plugins":{"drive@curated":{},"slack@curated":{"approvalPolicy":"write_actions"}}}`},
		{[]string{"--harness-auth", "none", "--plugin", "none"},
			`{"configurationId":"` + cfgID + `","harnessAuth":null,"plugins":{}}`},
		{[]string{"--harness-auth", "runtime"}, `{"configurationId":"` + cfgID + `","harnessAuth":{"method":"runtime"}}`},
		{[]string{"--harness-auth", "codex_pat:" + apiKeyName},
			`{"configurationId":"` + cfgID + `","harnessAuth":{"method":"codex_pat","source":{"id":"` + secID + `","kind":"secret"}}}`},
		{[]string{"--harness-auth", "chatgpt_service_account:" + saID},
			`{"configurationId":"` + cfgID + `","harnessAuth":{"method":"chatgpt_service_account","serviceAccountId":"` + saID + `"}}`},
		{[]string{"--harness-auth", "credential_source:vault"},
			`{"configurationId":"` + cfgID + `","harnessAuth":{"method":"credential_source","sourceId":"` + csID + `"}}`},
	} {
		r := execute(f.env(), "", append([]string{"agents", "patch", "bot", "-o", "json"}, c.args...)...)
		got, _ := json.Marshal(f.body(patch))
		var a map[string]any
		if r.code != 0 || string(got) != c.body || json.Unmarshal([]byte(r.out), &a) != nil || a["etag"] != `"2"` {
			t.Errorf("%v = %+v\nbody %s\nwant %s", c.args, r, got, c.body)
		}
	}
}

func TestAgentsPatchRefusals(t *testing.T) {
	t.Parallel()
	f, ifMatch := patchFake(t)
	f.routes["GET "+agentsPath+"/"+agtID] = func(w http.ResponseWriter, r *http.Request) {
		a := agentJSON("stopped", nil)
		a["etag"] = `"7"` // changed since: the PATCH's If-Match fails
		writeData(w, 200, a)
	}
	f.start()
	r := execute(f.env(), "", "agents", "patch", "bot", "--backend", "none")
	if r.code != 1 || r.err != "occ: PRECONDITION_FAILED: The resource changed; read it again. (request "+reqID+")\n" || ifMatch()[0] != `"7"` {
		t.Fatalf("stale = %+v, If-Match %v", r, ifMatch())
	}

	// Refused before any PATCH.
	n := len(ifMatch())
	for _, c := range []struct {
		args []string
		err  string
	}{
		{nil, "occ: nothing to change: give --configuration, --execution-mode, --backend, --harness-auth, --secret-api-key or --plugin\n"},
		{[]string{"--execution-mode", "fast"}, "occ: --execution-mode must be embedded or dedicated, not \"fast\"\n"},
		{[]string{"--harness-auth", "api_key"}, "occ: --harness-auth must be none, runtime, api_key:SECRET, codex_pat:SECRET, chatgpt_service_account:SERVICE_ACCOUNT or credential_source:SOURCE, not \"api_key\"\n"},
		{[]string{"--harness-auth", "runtime:x"}, "occ: --harness-auth must be none, runtime, api_key:SECRET, codex_pat:SECRET, chatgpt_service_account:SERVICE_ACCOUNT or credential_source:SOURCE, not \"runtime:x\"\n"},
		{[]string{"--harness-auth", "api_key:nope"}, "occ: NOT_FOUND: No Secret named \"nope\".\n"},
		{[]string{"--harness-auth", "credential_source:nope"}, "occ: NOT_FOUND: No Credential Source named \"nope\".\n"},
		{[]string{"--configuration", "nope"}, "occ: NOT_FOUND: No Configuration named \"nope\".\n"},
		{[]string{"--plugin", "slack"}, "occ: --plugin must be NAME@CATALOG[=POLICY] or none, not \"slack\"\n"},
		{[]string{"--plugin", "slack@c=sometimes"}, "occ: --plugin slack@c: the policy must be provider_default, all_actions, write_actions or none, not \"sometimes\"\n"},
		{[]string{"--plugin", "slack@c", "--plugin", "slack@c=none"}, "occ: --plugin slack@c is given twice\n"},
		{[]string{"--harness-auth", "runtime", "--secret-api-key", "x"}, "occ: if any flags in the group [harness-auth secret-api-key] are set none of the others can be; [harness-auth secret-api-key] were all set\n"},
	} {
		r := execute(f.env(), "", append([]string{"agents", "patch", "bot"}, c.args...)...)
		if r.code != wantCode(c.err) || r.err != c.err {
			t.Errorf("%v = %+v", c.args, r)
		}
	}
	r = execute(f.env(), "", "agents", "patch", "ghost", "--backend", "none")
	if r.code != ExitNotFound || r.err != "occ: NOT_FOUND: No Agent named \"ghost\".\n" {
		t.Fatalf("unknown agent = %+v", r)
	}
	if len(ifMatch()) != n {
		t.Fatalf("patched anyway: %v", ifMatch())
	}
}
