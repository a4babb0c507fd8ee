package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestIAMRoles(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	iam := f.withIAM()
	f.start()

	// Create in the Namespace (-n default, resolved by name).
	api, out, _ := f.api("table")
	opts := &iamRolesCreateOptions{API: api, Name: "readers", Permissions: []string{"secret:operate", "agent:deploy"}}
	if err := runIAMRolesCreate(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(f.body("POST " + nsIAM + "/roles"))
	if string(got) != `{"name":"readers","permissions":["secret:operate","agent:deploy"]}` {
		t.Fatalf("body = %s", got)
	}
	if !strings.Contains(out.String(), "permissions:  secret:operate,agent:deploy") || !strings.Contains(out.String(), "scope:        "+defaultNS) {
		t.Fatalf("out:\n%s", out)
	}
	id := iam.list(iam.roles, nsIAM)[0].(map[string]any)["id"].(string)

	// The same name again: the server's conflict, as it said it.
	r := execute(f.env(), "", "iam", "roles", "create", "--name", "readers", "--permission", "secret:read")
	if r.code != 1 || r.err != "occ: RESOURCE_CONFLICT: A role with this name exists in this scope. (request "+reqID+")\n" {
		t.Fatalf("duplicate = %+v", r)
	}
	r = execute(f.env(), "", "iam", "roles", "create", "--name", "x")
	if r.code != ExitUsage || !strings.Contains(r.err, `"permission" not set`) {
		t.Fatalf("no permission = %+v", r)
	}

	// List: the Namespace's roles; --installation: the installation's,
	// the built-in one's long list shortened.
	r = execute(f.env(), "", "iam", "roles", "list")
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if r.code != 0 || len(lines) != 2 || !strings.Contains(lines[0], "PERMISSIONS") || !strings.Contains(lines[1], id) ||
		!strings.Contains(lines[1], "readers") || !strings.Contains(lines[1], "no") {
		t.Fatalf("list = %+v", r)
	}
	r = execute(f.env(), "", "iam", "roles", "list", "--installation")
	if r.code != 0 || !strings.Contains(r.out, editorID) || !strings.Contains(r.out, "yes") ||
		!strings.Contains(r.out, "agent:deploy,agent:read,secret:operate,… (2 more)") || strings.Contains(r.out, "readers") {
		t.Fatalf("installation list = %+v", r)
	}
	r = execute(f.env(), "", "iam", "roles", "list", "-o", "json")
	var items []map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.out), &items) != nil || len(items) != 1 || items[0]["name"] != "readers" {
		t.Fatalf("json list = %+v", r)
	}

	// Get by name; an unknown name; an installation role is not a
	// Namespace's.
	r = execute(f.env(), "", "iam", "roles", "get", "readers")
	if r.code != 0 || !strings.Contains(r.out, "id:           "+id) || !strings.Contains(r.out, "builtin:      false") {
		t.Fatalf("get = %+v", r)
	}
	r = execute(f.env(), "", "iam", "roles", "get", "ghost")
	if r.code != ExitNotFound || r.err != "occ: NOT_FOUND: No role named \"ghost\".\n" {
		t.Fatalf("unknown role = %+v", r)
	}
	r = execute(f.env(), "", "iam", "roles", "get", "editor")
	if r.code != ExitNotFound || r.err != "occ: NOT_FOUND: No role named \"editor\".\n" {
		t.Fatalf("editor in the Namespace = %+v", r)
	}
	r = execute(f.env(), "", "iam", "roles", "get", "editor", "--installation", "-o", "json")
	var role map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.out), &role) != nil || role["id"] != editorID || len(role["permissions"].([]any)) != 5 {
		t.Fatalf("installation get = %+v", r)
	}

	// Installation scope creates under /iam; it cannot be combined with -n.
	r = execute(f.env(), "", "iam", "roles", "create", "--installation", "--name", "auditors", "--permission", "namespace:read")
	if r.code != 0 || f.body("POST /iam/roles")["name"] != "auditors" || !strings.Contains(r.out, "scope:        installation") {
		t.Fatalf("installation create = %+v", r)
	}
	n := len(f.requests())
	r = execute(f.env(), "", "iam", "roles", "list", "--installation", "-n", "default")
	if r.code != 1 || r.err != "occ: --installation and --namespace are exclusive\n" || len(f.requests()) != n {
		t.Fatalf("both scopes = %+v", r)
	}

	// Delete by name.
	r = execute(f.env(), "", "iam", "roles", "delete", "readers")
	if r.code != 0 || r.out != "role "+id+" deleted\n" || !contains(f.requests(), "DELETE "+nsIAM+"/roles/"+id) ||
		iam.count(iam.roles, nsIAM) != 0 {
		t.Fatalf("delete = %+v", r)
	}
	r = execute(f.env(), "", "iam", "roles", "delete", id)
	if r.code != ExitNotFound || r.err != "occ: NOT_FOUND: The resource does not exist. (request "+reqID+")\n" {
		t.Fatalf("delete again = %+v", r)
	}
}
