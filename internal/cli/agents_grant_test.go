package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestAgentsGrantSecrets(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	iam := f.withIAM()
	f.start()

	// First run: the role is made, then the binding.
	api, out, _ := f.api("table")
	if err := runAgentsGrantSecrets(context.Background(), &agentsGrantSecretsOptions{API: api, Agent: "bot"}); err != nil {
		t.Fatal(err)
	}
	roles, bindings := iam.list(iam.roles, nsIAM), iam.list(iam.bindings, nsIAM)
	if len(roles) != 1 || len(bindings) != 1 {
		t.Fatalf("roles %v, bindings %v", roles, bindings)
	}
	role, bnd := roles[0].(map[string]any), bindings[0].(map[string]any)
	got, _ := json.Marshal(f.body("POST " + nsIAM + "/roles"))
	if string(got) != `{"name":"agent-secret-operate","permissions":["secret:operate"]}` {
		t.Fatalf("role body = %s", got)
	}
	got, _ = json.Marshal(f.body("POST " + nsIAM + "/bindings"))
	if string(got) != `{"principalId":"`+spnID+`","roleId":"`+role["id"].(string)+`"}` {
		t.Fatalf("binding body = %s", got)
	}
	want := "created role agent-secret-operate (" + role["id"].(string) + ") with secret:operate\n" +
		"bound agent bot (service principal " + spnID + ") to role agent-secret-operate in namespace " + defaultNS + ": binding " + bnd["id"].(string) + "\n"
	if out.String() != want {
		t.Fatalf("out:\n%s\nwant:\n%s", out, want)
	}

	// Again: nothing changes, and it says so.
	n := len(f.requests())
	r := execute(f.env(), "", "agents", "grant-secrets", agtID)
	want = "reusing role agent-secret-operate (" + role["id"].(string) + ")\n" +
		"agent bot (service principal " + spnID + ") already holds role agent-secret-operate in namespace " + defaultNS +
		" (binding " + bnd["id"].(string) + "); nothing to do\n"
	if r.code != 0 || r.out != want || iam.count(iam.roles, nsIAM) != 1 || iam.count(iam.bindings, nsIAM) != 1 {
		t.Fatalf("again = %+v", r)
	}
	for _, req := range f.requests()[n:] {
		if strings.HasPrefix(req, "POST ") {
			t.Fatalf("wrote on the second run: %v", f.requests()[n:])
		}
	}
	r = execute(f.env(), "", "agents", "grant-secrets", "bot", "-o", "json")
	var res map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.out), &res) != nil || res["roleCreated"] != false || res["bindingCreated"] != false ||
		res["servicePrincipalId"] != spnID || res["binding"].(map[string]any)["id"] != bnd["id"] {
		t.Fatalf("json = %+v", r)
	}

	// An Agent that does not exist, by name and by ID.
	r = execute(f.env(), "", "agents", "grant-secrets", "ghost")
	if r.code != ExitNotFound || r.err != "occ: NOT_FOUND: No Agent named \"ghost\".\n" {
		t.Fatalf("unknown name = %+v", r)
	}
	r = execute(f.env(), "", "agents", "grant-secrets", "agt_00000000-0000-4000-8000-000000000099")
	if r.code != ExitNotFound || r.err != "occ: NOT_FOUND: The resource does not exist. (request "+reqID+")\n" {
		t.Fatalf("unknown ID = %+v", r)
	}
}

func TestAgentsGrantSecretsReusesTheRole(t *testing.T) {
	t.Parallel()
	const existing = "role_00000000-0000-4000-8000-0000000000a1"
	f := newFakeOCC(t)
	iam := f.withIAM()
	iam.addRole(nsIAM, existing, secretOperateRole, "secret:read", "secret:operate")
	f.start()
	r := execute(f.env(), "", "agents", "grant-secrets", "bot", "-o", "json")
	var res map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.out), &res) != nil || res["roleCreated"] != false || res["bindingCreated"] != true ||
		res["role"].(map[string]any)["id"] != existing || f.body("POST " + nsIAM + "/bindings")["roleId"] != existing {
		t.Fatalf("grant = %+v", r)
	}
	if contains(f.requests(), "POST "+nsIAM+"/roles") {
		t.Fatalf("made a second role: %v", f.requests())
	}
}

func TestAgentsGrantSecretsRoleRace(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	iam := f.withIAM()
	iam.raceRole = true // the create answers 409: someone made it meanwhile
	f.start()
	r := execute(f.env(), "", "agents", "grant-secrets", "bot")
	if r.code != 0 || !strings.HasPrefix(r.out, "reusing role agent-secret-operate") || !strings.Contains(r.out, "bound agent bot") ||
		iam.count(iam.roles, nsIAM) != 1 || iam.count(iam.bindings, nsIAM) != 1 {
		t.Fatalf("race = %+v", r)
	}
}

func TestAgentsGrantSecretsRefusals(t *testing.T) {
	t.Parallel()
	const wrong = "role_00000000-0000-4000-8000-0000000000a2"
	f := newFakeOCC(t)
	iam := f.withIAM()
	iam.addRole(nsIAM, wrong, secretOperateRole, "secret:read")
	f.routes["POST "+nsIAM+"/roles"] = func(w http.ResponseWriter, r *http.Request) {
		writeError(w, 403, "FORBIDDEN", "You may not grant these permissions.")
	}
	f.start()
	// A role of that name without secret:operate is not silently used.
	r := execute(f.env(), "", "agents", "grant-secrets", "bot")
	if r.code != 1 || r.err != "occ: role agent-secret-operate ("+wrong+") exists without secret:operate; delete it or grant a role yourself (occ iam bindings create)\n" ||
		iam.count(iam.bindings, nsIAM) != 0 {
		t.Fatalf("wrong role = %+v", r)
	}
	// The server's refusal to make the role ends the command.
	iam.find(iam.roles, nsIAM, wrong, true)
	r = execute(f.env(), "", "agents", "grant-secrets", "bot")
	if r.code != 1 || r.err != "occ: FORBIDDEN: You may not grant these permissions. (request "+reqID+")\n" || iam.count(iam.bindings, nsIAM) != 0 {
		t.Fatalf("forbidden = %+v", r)
	}
}
