package cli

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const nsPath = "/namespaces/" + defaultNS

// editorScript writes an executable shell script (the test's $EDITOR,
// called with the file as $1) and returns its path.
func editorScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "editor.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nset -e\n"+body+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSecretsGetUpdateDelete: a new value from standard input, never
// printed; get and delete by name; a deleted Secret is not found.
func TestSecretsGetUpdateDelete(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	secs := f.collection(nsPath+"/secrets", "sec_", secretJSON())
	f.start()
	if r := execute(f.env(), "", "secrets", "get", apiKeyName); r.code != 0 || outputField(t, r.out, "id") != secID {
		t.Fatalf("get = %+v", r)
	}
	r := execute(f.env(), "sk-canary-new\n", "secrets", "update", apiKeyName, "--value-file", "-")
	if r.code != 0 || outputField(t, r.out, "version") != "2" || strings.Contains(r.out+r.err, "canary") ||
		f.body("PATCH " + nsPath + "/secrets/" + secID)["value"] != "sk-canary-new" {
		t.Fatalf("update = %+v body %v", r, f.body("PATCH "+nsPath+"/secrets/"+secID))
	}
	if r = execute(f.env(), "", "secrets", "update", apiKeyName); r.code != ExitUsage || !strings.Contains(r.err, `"value-file" not set`) {
		t.Fatalf("update without a file = %+v", r)
	}
	if r = execute(f.env(), "", "secrets", "update", apiKeyName, "sk-on-argv"); r.code != ExitUsage {
		t.Fatalf("a value on the command line = %+v", r)
	}
	if r = execute(f.env(), "", "secrets", "delete", apiKeyName); r.code != 0 || r.out != "Secret "+secID+" deleted\n" || secs.get(secID) != nil {
		t.Fatalf("delete = %+v", r)
	}
	if r = execute(f.env(), "", "secrets", "get", apiKeyName); r.code != ExitNotFound {
		t.Fatalf("get after delete = %+v", r)
	}
}

// TestConfigurationsUpdateEditDelete: a merge patch from YAML; edit sends
// only what changed with the ETag it opened; a change made meanwhile is
// 412 and keeps the edit; an unchanged file sends nothing.
func TestConfigurationsUpdateEditDelete(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	cfgs := f.collection(nsPath+"/configurations", "cfg_", configurationJSON())
	var stale bool
	getCfg := f.routes["GET "+nsPath+"/configurations/{id}"]
	f.routes["GET "+nsPath+"/configurations/{id}"] = func(w http.ResponseWriter, r *http.Request) {
		if stale { // as if someone else changed it after this read
			cfgs.mu.Lock()
			cfgs.items[cfgID]["etag"] = `"0"`
			cfgs.mu.Unlock()
			getCfg(w, r)
			cfgs.mu.Lock()
			cfgs.items[cfgID]["etag"] = `"9"`
			cfgs.mu.Unlock()
			return
		}
		getCfg(w, r)
	}
	f.start()
	patchKey := "PATCH " + nsPath + "/configurations/" + cfgID

	patch := writeFile(t, "patch.yaml", "values:\n  agents:\n    defaults:\n      model: anthropic/claude-sonnet-4\n")
	r := execute(f.env(), "", "configurations", "update", "support", "-f", patch)
	if r.code != 0 || !strings.Contains(r.out, "anthropic/claude-sonnet-4") {
		t.Fatalf("update = %+v", r)
	}

	// The editor changes the model and adds a key.
	editor := editorScript(t, `sed -i 's#anthropic/claude-sonnet-4#openai/gpt-5#; s#"model"#"thinking": "low", "model"#' "$1"`)
	r = execute(f.env("EDITOR", editor), "", "configurations", "edit", "support")
	body := f.body(patchKey)
	want := map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": "openai/gpt-5", "thinking": "low"}}}
	if r.code != 0 || !jsonEqual(body["values"], want) || body["name"] != nil || body["secretBindings"] != nil {
		t.Fatalf("edit = %+v, patch %v", r, body)
	}
	// Removing a key sends it as null.
	editor = editorScript(t, `cat > "$1" <<'JSON'
{"name": "support", "values": {"agents": {"defaults": {"model": "openai/gpt-5"}}},
 "secretBindings": {"SLACK_BOT_TOKEN": {"source": {"kind": "secret", "namespaceId": "`+defaultNS+`", "id": "`+secID+`"}}}}
JSON`)
	r = execute(f.env("EDITOR", editor), "", "configurations", "edit", "support")
	if r.code != 0 || !jsonEqual(f.body(patchKey)["values"], map[string]any{"agents": map[string]any{"defaults": map[string]any{"thinking": nil}}}) {
		t.Fatalf("edit removing = %+v, patch %v", r, f.body(patchKey))
	}
	// Unchanged: nothing sent.
	n := len(f.requests())
	r = execute(f.env("EDITOR", "true"), "", "configurations", "edit", "support")
	if r.code != 0 || r.err != "no changes\n" || containsPrefix(f.requests()[n:], "PATCH ") {
		t.Fatalf("unchanged edit = %+v", r)
	}
	// Someone else changed it meanwhile: 412, the edit kept.
	stale = true
	editor = editorScript(t, `sed -i 's#openai/gpt-5#mine/model#' "$1"`)
	r = execute(f.env("EDITOR", editor), "", "configurations", "edit", "support")
	stale = false
	if r.code != ExitError || !strings.Contains(r.err, "someone else changed the Configuration") || !strings.Contains(r.err, "your edit is kept in ") {
		t.Fatalf("stale edit = %+v", r)
	}
	kept := strings.TrimSpace(r.err[strings.LastIndex(r.err, "kept in ")+len("kept in "):])
	if raw, err := os.ReadFile(kept); err != nil || !strings.Contains(string(raw), "mine/model") {
		t.Fatalf("kept edit %s: %v %s", kept, err, raw)
	}
	os.Remove(kept)
	if got := cfgs.get(cfgID)["values"]; strings.Contains(jsonString(got), "mine/model") {
		t.Fatalf("a stale edit was applied: %v", got)
	}
	// A broken file is kept, nothing sent.
	n = len(f.requests())
	r = execute(f.env("EDITOR", editorScript(t, `echo '{' > "$1"`)), "", "configurations", "edit", "support")
	if r.code != ExitError || !strings.Contains(r.err, "the edited file is not a Configuration") || containsPrefix(f.requests()[n:], "PATCH ") {
		t.Fatalf("broken edit = %+v", r)
	}
	os.Remove(strings.TrimSpace(r.err[strings.LastIndex(r.err, "kept in ")+len("kept in "):]))

	if r = execute(f.env(), "", "configurations", "delete", "support"); r.code != 0 || cfgs.get(cfgID) != nil {
		t.Fatalf("delete = %+v", r)
	}
}

// TestPresetsVerbs: create from YAML, list, get by name, update, delete.
func TestPresetsVerbs(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	f.collection(nsPath+"/presets", "pre_")
	f.start()
	r := execute(f.env(), "", "presets", "create", "-f", writeFile(t, "p.yaml", "name: standard\nexecutionMode: embedded\n"))
	id := "pre_00000000-0000-4000-8000-000000000101"
	if r.code != 0 || outputField(t, r.out, "id") != id || f.body("POST " + nsPath + "/presets")["executionMode"] != "embedded" {
		t.Fatalf("create = %+v", r)
	}
	if r = execute(f.env(), "", "presets", "list"); r.code != 0 || !strings.HasPrefix(r.out, "ID ") || !strings.Contains(r.out, "standard") {
		t.Fatalf("list = %+v", r)
	}
	r = execute(f.env(), `{"executionMode": "dedicated"}`, "presets", "update", "standard", "-f", "-")
	if r.code != 0 || outputField(t, r.out, "execution mode") != "dedicated" {
		t.Fatalf("update = %+v", r)
	}
	if r = execute(f.env(), "", "presets", "create", "-f", writeFile(t, "bad", "[1]")); r.code != ExitError || !strings.Contains(r.err, "must hold an object") {
		t.Fatalf("a list body = %+v", r)
	}
	if r = execute(f.env(), "", "presets", "delete", "standard", "-o", "name"); r.code != 0 || r.out != id+"\n" {
		t.Fatalf("delete = %+v", r)
	}
	if r = execute(f.env(), "", "presets", "get", "standard"); r.code != ExitNotFound || r.err != "occ: NOT_FOUND: No Preset named \"standard\".\n" {
		t.Fatalf("get after delete = %+v", r)
	}
}

// TestServiceAccountsAndCredentialSources covers both nouns' verbs.
func TestServiceAccountsAndCredentialSources(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	accounts := f.collection(nsPath+"/service-accounts", "sa_")
	f.routes["POST "+nsPath+"/service-accounts/{id}/credentials"] = func(w http.ResponseWriter, r *http.Request) {
		it := accounts.get(r.PathValue("id"))
		it["credential"] = map[string]any{"kind": "chatgpt_access_token", "issuedAt": timestamp}
		writeData(w, 201, it)
	}
	sources := f.collection(nsPath+"/credential-sources", "cs_")
	f.start()
	r := execute(f.env(), "", "service-accounts", "create", "--name", "codex-bot", "--backend", "chatgpt-main")
	if r.code != 0 || outputField(t, r.out, "backend") != "chatgpt-main" {
		t.Fatalf("create = %+v", r)
	}
	if r = execute(f.env(), "", "sa", "issue-credential", "codex-bot"); r.code != 0 || !strings.Contains(outputField(t, r.out, "credential"), "chatgpt_access_token issued") {
		t.Fatalf("issue = %+v", r)
	}
	if r = execute(f.env(), "", "service-accounts", "list", "-o", "jsonpath={[0].name}"); r.out != "codex-bot\n" {
		t.Fatalf("list = %+v", r)
	}
	if r = execute(f.env(), "", "service-accounts", "delete", "codex-bot"); r.code != 0 || len(accounts.items) != 0 {
		t.Fatalf("delete = %+v", r)
	}

	r = execute(f.env(), `{"name": "openai-team", "type": "openai", "config": {"organization": "acme"}}`, "credential-sources", "create", "-f", "-")
	csNew := "cs_00000000-0000-4000-8000-000000000101"
	if r.code != 0 || outputField(t, r.out, "id") != csNew {
		t.Fatalf("create source = %+v", r)
	}
	r = execute(f.env(), "secrets:\n  apiKey: {kind: secret, namespaceId: "+defaultNS+", id: "+secID+"}\n", "credential-sources", "update", "openai-team", "-f", "-")
	if r.code != 0 || outputField(t, r.out, "secrets") != "apiKey="+secID {
		t.Fatalf("update source = %+v", r)
	}
	if r = execute(f.env(), "", "credential-sources", "get", csNew, "-o", "yaml"); r.code != 0 || !strings.Contains(r.out, "organization: acme") {
		t.Fatalf("get source = %+v", r)
	}
	if r = execute(f.env(), "", "credential-sources", "delete", "openai-team"); r.code != 0 || sources.get(csNew) != nil {
		t.Fatalf("delete source = %+v", r)
	}
}

// TestServiceKeys: the new key goes to a 0600 file and nowhere else.
func TestServiceKeys(t *testing.T) {
	t.Parallel()
	const newKey = "occ_sk_canary_new_key"
	f := newFakeOCC(t)
	keys := f.collection("/api/auth/service-keys", "key_")
	f.routes["POST /api/auth/service-keys"] = func(w http.ResponseWriter, r *http.Request) {
		keys.mu.Lock()
		it := keys.add(map[string]any{"name": "ci", "servicePrincipalId": spnID, "namespaceId": nil, "revoked": false, "expiresAt": "2999-01-01T00:00:00.000Z"})
		keys.mu.Unlock()
		out := map[string]any{"key": newKey}
		for k, v := range it {
			out[k] = v
		}
		writeData(w, 201, out)
	}
	f.start()
	dir := t.TempDir()
	keyOut := filepath.Join(dir, "ci.key")
	for _, o := range []string{"table", "json"} {
		os.Remove(keyOut)
		r := execute(f.env(), "", "service-keys", "create", "--name", "ci", "--principal", spnID, "--key-out", keyOut, "--expires-in", "24h", "-o", o)
		if r.code != 0 || strings.Contains(r.out+r.err, "canary") || !strings.Contains(r.out, "key_") {
			t.Fatalf("create -o %s = %+v", o, r)
		}
		if st, err := os.Stat(keyOut); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("key file: %v %v", st, err)
		}
		if raw, _ := os.ReadFile(keyOut); string(raw) != newKey+"\n" {
			t.Fatalf("key file holds %q", raw)
		}
	}
	if b := f.body("POST /api/auth/service-keys"); b["expiresIn"] != float64(86400) || b["servicePrincipalId"] != spnID {
		t.Fatalf("body %v", b)
	}
	n := len(f.requests())
	if r := execute(f.env(), "", "service-keys", "create", "--name", "ci", "--principal", spnID, "--key-out", keyOut); r.code != ExitError || !strings.Contains(r.err, "exists") || len(f.requests()) != n {
		t.Fatalf("an existing key file = %+v", r)
	}
	r := execute(f.env(), "", "service-keys", "list")
	if lines := strings.Split(strings.TrimSpace(r.out), "\n"); r.code != 0 || len(lines) != 3 || !strings.Contains(lines[1], "active") {
		t.Fatalf("list = %+v", r)
	}
	if r = execute(f.env(), "", "service-keys", "revoke", "key_00000000-0000-4000-8000-000000000101"); r.code != 0 || !strings.Contains(r.err, "revoked") {
		t.Fatalf("revoke = %+v", r)
	}
	if r = execute(f.env(), "", "service-keys", "get", "key_00000000-0000-4000-8000-000000000101"); r.code != ExitNotFound {
		t.Fatalf("get revoked = %+v", r)
	}
}

// TestRestrictions: create with a resolved principal and target, list at
// both scopes, get, delete.
func TestRestrictions(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	f.collection(nsPath+"/iam/restrictions", "rst_")
	inst := f.collection("/iam/restrictions", "rst_", map[string]any{"id": "rst_00000000-0000-4000-8000-000000000009", "principalId": spnID,
		"permission": "agent:deploy", "namespaceId": nil, "target": nil, "createdBy": spnID})
	f.start()
	r := execute(f.env(), "", "iam", "restrictions", "create", "--principal", "agent:bot", "--permission", "secret:read", "--target", "secret/"+apiKeyName)
	b := f.body("POST " + nsPath + "/iam/restrictions")
	if r.code != 0 || b["principalId"] != spnID || b["permission"] != "secret:read" || !jsonEqual(b["target"], map[string]any{"kind": "secret", "id": secID}) {
		t.Fatalf("create = %+v body %v", r, b)
	}
	id := "rst_00000000-0000-4000-8000-000000000101"
	if r = execute(f.env(), "", "iam", "restrictions", "list", "-o", "name"); r.out != id+"\n" {
		t.Fatalf("list = %+v", r)
	}
	if r = execute(f.env(), "", "iam", "restrictions", "list", "--installation"); !strings.Contains(r.out, "agent:deploy") {
		t.Fatalf("list --installation = %+v", r)
	}
	if r = execute(f.env(), "", "iam", "restrictions", "get", id); r.code != 0 || outputField(t, r.out, "target") != "secret/"+secID {
		t.Fatalf("get = %+v", r)
	}
	if r = execute(f.env(), "", "iam", "restrictions", "delete", "rst_00000000-0000-4000-8000-000000000009", "--installation"); r.code != 0 || len(inst.items) != 0 {
		t.Fatalf("delete = %+v", r)
	}
	if r = execute(f.env(), "", "iam", "restrictions", "list", "--installation", "-n", "team"); r.code != ExitError || !strings.Contains(r.err, "exclusive") {
		t.Fatalf("both scopes = %+v", r)
	}
}

// TestNamespacesUpdate renames by name.
func TestNamespacesUpdate(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	f.routes["PATCH /namespaces/{ns}"] = func(w http.ResponseWriter, r *http.Request) {
		writeData(w, 200, namespaceJSON(r.PathValue("ns"), "support-team", "ready"))
	}
	f.start()
	r := execute(f.env(), "", "namespaces", "update", "team", "--name", "support-team")
	if r.code != 0 || outputField(t, r.out, "name") != "support-team" || f.body("PATCH /namespaces/" + teamNS)["name"] != "support-team" {
		t.Fatalf("update = %+v", r)
	}
}

// TestDeploymentsListWatch: the revisions with their status; watch
// follows the newest and exits 4 when it failed.
func TestDeploymentsListWatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status string
		code   int
	}{{"succeeded", 0}, {"failed", ExitDeploymentFailed}} {
		f := newFakeOCC(t)
		f.routes["GET "+nsPath+"/agents/"+agtID+"/revisions"] = func(w http.ResponseWriter, r *http.Request) {
			writeList(w, []any{map[string]any{"id": revID, "agentId": agtID, "namespaceId": defaultNS, "number": 1, "createdAt": timestamp, "createdBy": spnID}}, "")
		}
		extra := map[string]any{}
		if c.status == "failed" {
			extra["error"] = map[string]any{"code": "RUNTIME_START_FAILED", "message": "The gateway did not start."}
		}
		f.routes["GET "+eventsPath] = sse(deploymentJSON("running", nil), deploymentJSON(c.status, extra))
		f.start()
		r := execute(f.env(), "", "deployments", "watch", "bot")
		if r.code != c.code || outputField(t, r.out, "status") != c.status || !strings.Contains(r.err, "deployment "+revID+": running") {
			t.Fatalf("watch %s = %+v", c.status, r)
		}
		r = execute(f.env(), "", "deployments", "list", "bot")
		if lines := strings.Split(strings.TrimSpace(r.out), "\n"); r.code != 0 || len(lines) != 2 || !strings.Contains(lines[1], revID) || !strings.Contains(lines[1], "succeeded") {
			t.Fatalf("list = %+v", r)
		}
		if r = execute(f.env(), "", "deployments", "list", "bot", "-o", "jsonpath={[0].id} {[0].deployment.status}"); r.out != revID+" succeeded\n" {
			t.Fatalf("list jsonpath = %+v", r)
		}
		// A revision number names the deployment too.
		if r = execute(f.env(), "", "deployments", "get", "bot", "1", "-o", "name"); r.code != 0 || r.out != revID+"\n" {
			t.Fatalf("get by number = %+v", r)
		}
		if r = execute(f.env(), "", "deployments", "watch", "bot", "7"); r.code != ExitNotFound || !strings.Contains(r.err, "no revision 7") {
			t.Fatalf("watch a missing number = %+v", r)
		}
	}
}

// TestWorkspace: get prints the content as is; put from standard input;
// edit writes back what the editor saved.
func TestWorkspace(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	content := "You are helpful.\n"
	filePath := nsPath + "/agents/" + agtID + "/workspace/files/{name}"
	f.routes["GET "+filePath] = func(w http.ResponseWriter, r *http.Request) {
		writeData(w, 200, map[string]any{"name": r.PathValue("name"), "content": content})
	}
	f.routes["PUT "+filePath] = func(w http.ResponseWriter, r *http.Request) {
		var b map[string]string
		_ = jsonDecode(r, &b)
		content = b["content"]
		writeData(w, 200, map[string]any{"name": r.PathValue("name"), "size": len(content)})
	}
	f.start()
	if r := execute(f.env(), "", "workspace", "get", "bot", "SOUL.md"); r.code != 0 || r.out != content {
		t.Fatalf("get = %+v", r)
	}
	if r := execute(f.env(), "Be brief.\n", "workspace", "put", "bot", "SOUL.md", "--from", "-"); r.code != 0 || content != "Be brief.\n" || outputField(t, r.out, "size") != "10" {
		t.Fatalf("put = %+v (%q)", r, content)
	}
	if r := execute(f.env("EDITOR", editorScript(t, `echo 'Be kind.' >> "$1"`)), "", "workspace", "edit", "bot", "SOUL.md"); r.code != 0 || content != "Be brief.\nBe kind.\n" {
		t.Fatalf("edit = %+v (%q)", r, content)
	}
}

// TestAuditList passes the filters as the API's query and stops at
// --limit.
func TestAuditList(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	event := func(id string) map[string]any {
		return map[string]any{"id": id, "occurredAt": timestamp, "kind": "mutation", "action": "secret.create", "outcome": "success",
			"actorId": spnID, "details": map[string]any{}, "resource": map[string]any{"kind": "secret", "id": secID}}
	}
	f.routes["GET /audit-events"] = func(w http.ResponseWriter, r *http.Request) {
		writeList(w, []any{event("aud_1"), event("aud_2")}, "next")
	}
	f.routes["GET "+nsPath+"/audit-events"] = func(w http.ResponseWriter, r *http.Request) {
		writeList(w, []any{event("aud_3")}, "")
	}
	f.start()
	r := execute(f.env(), "", "audit", "list", "--limit", "2", "--action", "secret.create", "--outcome", "success", "--kind", "mutation",
		"--actor", spnID, "--since", "2026-01-01T00:00:00Z", "--for-namespace", "team")
	want := "GET /audit-events?pageSize=2&action=secret.create&kind=mutation&outcome=success&actorId=" + spnID + "&namespaceId=" + teamNS + "&since=2026-01-01T00%3A00%3A00.000Z"
	if lines := strings.Split(strings.TrimSpace(r.out), "\n"); r.code != 0 || len(lines) != 3 || !contains(f.requests(), want) {
		t.Fatalf("list = %+v\n%v", r, f.requests())
	}
	if r = execute(f.env(), "", "audit", "list", "--in-namespace", "-o", "name"); r.code != 0 || r.out != "aud_3\n" {
		t.Fatalf("--in-namespace = %+v", r)
	}
	if r = execute(f.env(), "", "audit", "list", "--since", "yesterday"); r.code != ExitError || !strings.Contains(r.err, "not an RFC 3339 time") {
		t.Fatalf("bad time = %+v", r)
	}
}
