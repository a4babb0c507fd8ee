package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestIAMBindingsCreate(t *testing.T) {
	t.Parallel()
	const readersID = "role_00000000-0000-4000-8000-0000000000a1"
	f := newFakeOCC(t)
	iam := f.withIAM()
	iam.addRole(nsIAM, readersID, "readers", "secret:operate")
	f.start()

	// agent:NAME is the Agent's service principal; the role by name.
	api, out, _ := f.api("table")
	opts := &iamBindingsCreateOptions{API: api, Principal: "agent:bot", Role: "readers"}
	if err := runIAMBindingsCreate(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(f.body("POST " + nsIAM + "/bindings"))
	if string(got) != `{"principalId":"`+spnID+`","roleId":"`+readersID+`"}` {
		t.Fatalf("body = %s", got)
	}
	if !contains(f.requests(), "GET /namespaces/"+defaultNS+"/agents/"+agtID) ||
		!strings.Contains(out.String(), "principal:   "+spnID) || !strings.Contains(out.String(), "target:      -") {
		t.Fatalf("requests %v, out:\n%s", f.requests(), out)
	}
	bnd := iam.list(iam.bindings, nsIAM)[0].(map[string]any)["id"].(string)

	// The same grant again is refused without a request to create it.
	posts := countOf(f.requests(), "POST "+nsIAM+"/bindings")
	r := execute(f.env(), "", "iam", "bindings", "create", "--principal", "agent:"+agtID, "--role", readersID)
	if r.code != 1 || r.err != "occ: RESOURCE_CONFLICT: Binding "+bnd+" already grants role "+readersID+" to "+spnID+".\n" ||
		countOf(f.requests(), "POST "+nsIAM+"/bindings") != posts {
		t.Fatalf("duplicate = %+v", r)
	}

	// A built-in role of the installation by name, on one Secret by name:
	// a different grant.
	r = execute(f.env(), "", "iam", "bindings", "create", "--principal", prnID, "--role", "editor", "--target", "secret/"+apiKeyName, "-o", "json")
	got, _ = json.Marshal(f.body("POST " + nsIAM + "/bindings"))
	if r.code != 0 || string(got) != `{"principalId":"`+prnID+`","roleId":"`+editorID+`","target":{"id":"`+secID+`","kind":"secret"}}` {
		t.Fatalf("targeted = %+v, body %s", r, got)
	}
	var b map[string]any
	if json.Unmarshal([]byte(r.out), &b) != nil || b["roleId"] != editorID || b["target"].(map[string]any)["id"] != secID {
		t.Fatalf("json = %s", r.out)
	}
	// An ID target of a kind the CLI cannot name is sent as is.
	r = execute(f.env(), "", "iam", "bindings", "create", "--principal", prnID, "--role", "readers", "--target", "preset/pre_x")
	if r.code != 0 || f.body("POST " + nsIAM + "/bindings")["target"].(map[string]any)["id"] != "pre_x" {
		t.Fatalf("preset target = %+v", r)
	}

	// What cannot be resolved fails before any create.
	posts = countOf(f.requests(), "POST "+nsIAM+"/bindings")
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"--principal", prnID, "--role", "ghost"}, "occ: NOT_FOUND: No role named \"ghost\".\n"},
		{[]string{"--principal", "agent:ghost", "--role", "readers"}, "occ: NOT_FOUND: No Agent named \"ghost\".\n"},
		{[]string{"--principal", "bob", "--role", "readers"}, "occ: --principal must be a principal ID (prn_… or spn_…) or agent:AGENT, not \"bob\"\n"},
		{[]string{"--principal", prnID, "--role", "readers", "--target", "secret/nope"}, "occ: NOT_FOUND: No Secret named \"nope\".\n"},
		{[]string{"--principal", prnID, "--role", "readers", "--target", "planet/x"}, "occ: --target must be KIND/ID with KIND one of namespace, configuration, preset, service_account, secret, agent, agent_revision, credential_source; not \"planet/x\"\n"},
		{[]string{"--principal", prnID, "--role", "editor", "--installation", "--target", "secret/x"}, "occ: --target needs a Namespace: installation bindings hold for the whole installation\n"},
		{[]string{"--principal", "agent:bot", "--role", "editor", "--installation"}, "occ: an Agent's service principal is granted in its Namespace, not at installation scope\n"},
	} {
		r := execute(f.env(), "", append([]string{"iam", "bindings", "create"}, c.args...)...)
		if r.code != wantCode(c.err) || r.err != c.err {
			t.Errorf("%v = %+v", c.args, r)
		}
	}
	if countOf(f.requests(), "POST "+nsIAM+"/bindings") != posts {
		t.Fatalf("created anyway: %v", f.requests())
	}
}

func TestIAMBindingsListDelete(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	iam := f.withIAM()
	f.start()
	for _, p := range []string{"agent:bot", prnID} {
		if r := execute(f.env(), "", "iam", "bindings", "create", "--principal", p, "--role", "editor"); r.code != 0 {
			t.Fatalf("create = %+v", r)
		}
	}
	r := execute(f.env(), "", "iam", "bindings", "create", "--installation", "--principal", prnID, "--role", editorID)
	if r.code != 0 || iam.count(iam.bindings, "/iam") != 1 || !strings.Contains(r.out, "scope:       installation") {
		t.Fatalf("installation create = %+v", r)
	}

	api, out, _ := f.api("table")
	if err := runIAMBindingsList(context.Background(), &iamBindingsListOptions{API: api}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "PRINCIPAL") || !strings.Contains(lines[1], spnID) || !strings.Contains(lines[2], prnID) {
		t.Fatalf("list:\n%s", out)
	}
	r = execute(f.env(), "", "iam", "bindings", "list", "--principal", "agent:bot", "-o", "json")
	var items []map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.out), &items) != nil || len(items) != 1 || items[0]["principalId"] != spnID {
		t.Fatalf("filtered = %+v", r)
	}
	r = execute(f.env(), "", "iam", "bindings", "list", "--installation", "-o", "json")
	if r.code != 0 || json.Unmarshal([]byte(r.out), &items) != nil || len(items) != 1 || items[0]["namespaceId"] != nil {
		t.Fatalf("installation list = %+v", r)
	}
	r = execute(f.env(), "", "iam", "bindings", "list", "--principal", "agent:ghost")
	if r.code != ExitNotFound || r.err != "occ: NOT_FOUND: No Agent named \"ghost\".\n" {
		t.Fatalf("unknown agent = %+v", r)
	}

	id := items[0]["id"].(string)
	r = execute(f.env(), "", "iam", "bindings", "delete", id, "--installation")
	if r.code != 0 || r.out != "binding "+id+" deleted\n" || iam.count(iam.bindings, "/iam") != 0 {
		t.Fatalf("delete = %+v", r)
	}
	r = execute(f.env(), "", "iam", "bindings", "delete", id, "-o", "json")
	if r.code != ExitNotFound || r.err != "occ: NOT_FOUND: The resource does not exist. (request "+reqID+")\n" || iam.count(iam.bindings, nsIAM) != 2 {
		t.Fatalf("delete in the wrong scope = %+v", r)
	}
}
