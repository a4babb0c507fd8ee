package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/backends"
	"github.com/openclaw/occ/internal/backends/backendstest"
	"github.com/openclaw/occ/internal/credgateway/credgatewaytest"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// manageWorld is an occ with a Backend and a Credential Gateway, one
// Namespace with a hostile name, a Secret and an Agent.
type manageWorld struct {
	*servertest.DeployWorld
	agent   string
	canary  string // the Secret's value
	backend *backendstest.Server
}

func bootManaged(t *testing.T) *manageWorld {
	fake := backendstest.New(t)
	gw := credgatewaytest.New(t)
	e := servertest.Boot(t, storetest.URL(t, "sqlite"), nil, servertest.WithBackend(fake.Backend("chatgpt-main")), servertest.WithGateway(gw.URL),
		servertest.WithBackendClient(&backends.HTTP{Timeout: time.Second}))
	d := &servertest.DeployWorld{AgentWorld: &servertest.AgentWorld{E: e, Ns: e.CreateNamespace(hostile)}}
	w := &manageWorld{DeployWorld: d, canary: "sk-manage-canary", backend: fake}
	d.Secret = e.CreateSecret(d.Ns, hostile, w.canary)
	d.Cfg = e.Call("POST", d.Path("/configurations"), e.Admin, map[string]any{"name": hostile, "kind": "agent", "values": map[string]any{}}).Data()["id"].(string)
	r := e.Call("POST", d.Path("/agents"), e.Admin, map[string]any{"name": hostile, "configurationId": d.Cfg})
	if r.Status != 201 {
		t.Fatalf("create agent = %d %v", r.Status, r.Body)
	}
	w.agent = r.Data()["id"].(string)
	return w
}

// created posts a console form that must create something and returns
// the path it redirects to (without its notice).
func (b *browser) created(path string, form url.Values) string {
	b.t.Helper()
	p := b.post(path, form)
	if p.status != http.StatusSeeOther {
		b.t.Fatalf("POST %s = %d %s", path, p.status, p.text())
	}
	return strings.SplitN(p.header.Get("Location"), "?", 2)[0]
}

// formAction is the action of the page's first form whose action holds
// part.
func formAction(t *testing.T, p page, part string) string {
	t.Helper()
	for _, f := range p.all("form") {
		if a := attr(f, "action"); strings.Contains(a, part) {
			return a
		}
	}
	t.Fatalf("no form posting to …%s… on the page:\n%s", part, p.text())
	return ""
}

// hiddenValue is the value of the page's first input of this name.
func hiddenValue(p page, name string) string {
	for _, in := range p.all("input") {
		if attr(in, "name") == name {
			return attr(in, "value")
		}
	}
	return ""
}

// TestConsoleManagedResources: an administrator manages service accounts
// (issuing a credential it never sees), Credential Sources, Presets, an
// Agent's settings, restrictions and the installation's Access page
// through the console, each with hostile names rendered as text and no
// Secret value or credential on any page; refused forms show the refusal
// at its path.
func TestConsoleManagedResources(t *testing.T) {
	t.Parallel()
	w := bootManaged(t)
	e, d := w.E, w.DeployWorld
	b := newBrowser(t, e)
	b.signIn("admin@occ.local", servertest.AdminPassword)
	ns := "/console/namespaces/" + d.Ns
	token := b.get(ns + "/service-accounts").csrf(t)

	// Service accounts: create, issue the credential, shown only as issued.
	account := b.created(ns+"/service-accounts", url.Values{"csrf": {token}, "name": {hostile}, "backendId": {"chatgpt-main"}})
	p := b.get(account)
	if !p.button("Issue credential") || !p.button("Delete") || !strings.Contains(p.text(), "not issued") {
		t.Fatalf("new service account page:\n%s", p.text())
	}
	if got := b.created(account+"/credential", url.Values{"csrf": {token}}); got != account {
		t.Fatalf("issue redirected to %s", got)
	}
	p = b.get(account)
	if !strings.Contains(p.text(), "access_token") || p.button("Issue credential") || w.backend.Issued() != 1 {
		t.Fatalf("service account after issuing (%d issued):\n%s", w.backend.Issued(), p.text())
	}
	if p := b.post(account+"/credential", url.Values{"csrf": {token}}); p.status != 409 || !strings.Contains(p.text(), "already issued") {
		t.Fatalf("second issue = %d %s", p.status, p.text())
	}
	if p := b.post(ns+"/service-accounts", url.Values{"csrf": {token}, "name": {"x"}, "backendId": {"nope"}}); p.status != 400 || !strings.Contains(p.text(), "/backendId") {
		t.Fatalf("unknown Backend = %d %s", p.status, p.text())
	}

	// Credential Sources: a refused config at its path, then created.
	p = b.post(ns+"/credential-sources", url.Values{"csrf": {token}, "name": {hostile}, "type": {"openai"}, "config": {"not json " + hostile}})
	if p.status != 400 || !strings.Contains(p.text(), "/config") {
		t.Fatalf("bad config = %d %s", p.status, p.text())
	}
	assertInert(t, "refused Credential Source", p, true)
	source := b.created(ns+"/credential-sources", url.Values{"csrf": {token}, "name": {hostile}, "type": {"openai"},
		"config": {`{"organization": "` + strings.ReplaceAll(hostile, `"`, `\"`) + `"}`}, "field-0": {"apiKey"}, "secret-0": {d.Secret}})
	if p := b.get(source); !strings.Contains(p.text(), "apiKey") || !strings.Contains(p.text(), "ready") || !p.button("Delete") {
		t.Fatalf("Credential Source page:\n%s", p.text())
	}

	// Its Secret fields are replaced with the version shown; a stale one is refused.
	second := e.CreateSecret(d.Ns, "second", w.canary+"-2")
	p = b.get(source)
	if p.status != 200 || !p.button("Replace Secret fields") {
		t.Fatalf("Credential Source page:\n%s", p.text())
	}
	replace := url.Values{"csrf": {token}, "version": {"999"}, "field-0": {"apiKey"}, "secret-0": {second}}
	if p := b.post(source, replace); p.status != 412 {
		t.Fatalf("stale replacement = %d %s", p.status, p.text())
	}
	replace.Set("version", hiddenValue(p, "version"))
	b.created(source, replace)
	if r := e.Call("GET", d.Path(strings.TrimPrefix(source, ns)), e.Admin, nil); r.Data()["secrets"].(map[string]any)["apiKey"].(map[string]any)["id"] != second {
		t.Fatalf("Credential Source after the replacement = %v", r.Data())
	}

	// Presets: plugins and a harness binding; a bad plugin line is refused.
	p = b.post(ns+"/presets", url.Values{"csrf": {token}, "name": {hostile}, "plugins": {"a@b c d"}})
	if p.status != 400 || !strings.Contains(p.text(), "/plugins") || hiddenValue(p, "name") != hostile {
		t.Fatalf("bad plugin line = %d %s", p.status, p.body)
	}
	b.created(ns+"/presets", url.Values{"csrf": {token}, "name": {hostile}, "executionMode": {"dedicated"}, "harnessMethod": {"codex_pat"},
		"secretId": {d.Secret}, "plugins": {"google-calendar@openai-curated-remote write_actions\r\n"}})
	var preset map[string]any
	for _, x := range e.Call("GET", d.Path("/presets"), e.Admin, nil).List() {
		if x.(map[string]any)["name"] == hostile {
			preset = x.(map[string]any)
		}
	}
	if servertest.ToJSON(preset["plugins"]) != `{"google-calendar@openai-curated-remote":{"approvalPolicy":"write_actions"}}` ||
		servertest.ToJSON(preset["harnessAuth"]) != servertest.ToJSON(map[string]any{"method": "codex_pat", "source": map[string]any{"kind": "secret", "namespaceId": d.Ns, "id": d.Secret}}) {
		t.Fatalf("Preset made by the console = %v", preset)
	}

	// The Preset's own page saves a rename and unsets what is left empty.
	presetPath := ns + "/presets/" + preset["id"].(string)
	p = b.get(presetPath)
	if p.status != 200 || !p.button("Save Preset") || hiddenValue(p, "name") != hostile || textareaNamed(p, "plugins") != "google-calendar@openai-curated-remote write_actions" {
		t.Fatalf("Preset page = %d %s", p.status, p.body)
	}
	assertInert(t, presetPath, p, true)
	assertInert(t, "Presets", b.get(ns+"/presets"), true)
	edit := url.Values{"csrf": {token}, "version": {"999"}, "name": {"renamed"}, "executionMode": {"embedded"}}
	if p := b.post(presetPath, edit); p.status != 412 {
		t.Fatalf("stale Preset save = %d %s", p.status, p.text())
	}
	edit.Set("version", hiddenValue(p, "version"))
	b.created(presetPath, edit)
	if r := e.Call("GET", d.Path("/presets/"+preset["id"].(string)), e.Admin, nil).Data(); r["name"] != "renamed" || r["executionMode"] != "embedded" ||
		r["harnessAuth"] != nil || servertest.ToJSON(r["plugins"]) != `{}` {
		t.Fatalf("Preset after the save = %v", r)
	}

	// An Agent's settings: the form starts from the saved ones; a stale
	// version is refused; a save changes only the draft.
	agentPath := ns + "/agents/" + w.agent
	if p := b.get(agentPath); !strings.Contains(p.body, `href="`+agentPath+`/settings"`) {
		t.Fatalf("no settings link on the Agent page:\n%s", p.body)
	}
	settings := b.get(agentPath + "/settings")
	version := hiddenValue(settings, "version")
	form := url.Values{"csrf": {token}, "version": {version}, "configurationId": {d.Cfg}, "executionMode": {"embedded"},
		"harnessMethod": {"api_key"}, "secretId": {d.Secret}, "plugins": {"google-calendar@openai-curated-remote"}}
	stale := url.Values{}
	for k, v := range form {
		stale[k] = v
	}
	stale.Set("version", "999")
	if p := b.post(agentPath+"/settings", stale); p.status != 412 {
		t.Fatalf("stale settings save = %d %s", p.status, p.text())
	}
	if got := b.created(agentPath+"/settings", form); got != agentPath {
		t.Fatalf("settings saved, redirected to %s", got)
	}
	g := e.Call("GET", d.Path("/agents/"+w.agent), e.Admin, nil).Data()
	if servertest.ToJSON(g["plugins"]) != `{"google-calendar@openai-curated-remote":{}}` || g["harnessAuth"].(map[string]any)["method"] != "api_key" {
		t.Fatalf("Agent after the settings save = %v", g)
	}
	// Emptying the harness method clears the binding.
	form.Set("version", hiddenValue(b.get(agentPath+"/settings"), "version"))
	form.Set("harnessMethod", "")
	b.created(agentPath+"/settings", form)
	if g := e.Call("GET", d.Path("/agents/"+w.agent), e.Admin, nil).Data(); g["harnessAuth"] != nil {
		t.Fatalf("harnessAuth after clearing = %v", g["harnessAuth"])
	}

	// Restrictions on the Namespace's Access page; installation roles.
	person := e.Call("POST", "/iam/principals", e.Admin, map[string]any{"email": "dev@example.com", "name": hostile, "password": "a long enough password"}).Data()["id"].(string)
	b.created(ns+"/iam/restrictions", url.Values{"csrf": {token}, "principalId": {person}, "permission": {"agent:deploy"}, "targetKind": {"agent"}, "targetId": {w.agent}})
	if x := e.Call("GET", d.Path("/iam/restrictions"), e.Admin, nil).List(); len(x) != 1 || x[0].(map[string]any)["permission"] != "agent:deploy" {
		t.Fatalf("restrictions = %v", x)
	}
	if p := b.post(ns+"/iam/restrictions", url.Values{"csrf": {token}, "principalId": {person}, "permission": {hostile}}); p.status != 400 || !strings.Contains(p.text(), "/permission") {
		t.Fatalf("unknown permission = %d %s", p.status, p.text())
	}
	b.created("/console/iam/roles", url.Values{"csrf": {token}, "name": {hostile}, "permissions": {"namespace:read"}})
	var role string
	for _, r := range e.Call("GET", "/iam/roles", e.Admin, nil).List() {
		if r.(map[string]any)["name"] == hostile {
			role = r.(map[string]any)["id"].(string)
		}
	}
	b.created("/console/iam/bindings", url.Values{"csrf": {token}, "principalId": {person}, "roleId": {role}})

	for _, c := range []struct {
		path string
		show bool
	}{
		{ns + "/service-accounts", true},
		{account, true},
		{ns + "/credential-sources", true},
		{source, true},
		{ns + "/presets", false},
		{presetPath, false},
		{agentPath + "/settings", true},
		{ns + "/iam", false},
		{"/console/iam", true},
		{ns + "/agents/new", true},
	} {
		p := b.get(c.path)
		if p.status != 200 {
			t.Fatalf("GET %s = %d %s", c.path, p.status, p.body)
		}
		assertInert(t, c.path, p, c.show)
		if strings.Contains(p.body, w.canary) || strings.Contains(p.body, w.backend.Canary) {
			t.Fatalf("%s shows a Secret's value or the issued credential", c.path)
		}
	}
	if p := b.get(ns + "/iam"); !strings.Contains(p.text(), "agent:deploy") || !p.button("Restrict") {
		t.Fatalf("Access page with a restriction:\n%s", p.text())
	}

	// A bound role cannot be deleted; unbound, it can.
	inst := b.get("/console/iam")
	roleDelete := formAction(t, inst, "/console/iam/roles/"+role+"/delete")
	if p := b.post(roleDelete, url.Values{"csrf": {token}}); p.status != 409 || !strings.Contains(p.text(), "still bound") {
		t.Fatalf("delete a bound role = %d %s", p.status, p.text())
	}
	var binding string
	for _, x := range e.Call("GET", "/iam/bindings", e.Admin, nil).List() {
		if x.(map[string]any)["principalId"] == person {
			binding = x.(map[string]any)["id"].(string)
		}
	}
	b.created(formAction(t, inst, "/console/iam/bindings/"+binding+"/delete"), url.Values{"csrf": {token}})
	b.created(roleDelete, url.Values{"csrf": {token}})
	if r := e.Call("GET", "/iam/roles/"+role, e.Admin, nil); r.Status != 404 {
		t.Fatalf("the deleted role = %d", r.Status)
	}

	// Lift, delete: each is gone afterwards.
	p = b.get(ns + "/iam")
	b.created(formAction(t, p, "/iam/restrictions/"), url.Values{"csrf": {token}})
	if x := e.Call("GET", d.Path("/iam/restrictions"), e.Admin, nil).List(); len(x) != 0 {
		t.Fatalf("restrictions after lifting = %v", x)
	}
	p = b.get(source)
	b.created(formAction(t, p, "/delete"), url.Values{"csrf": {token}, "version": {hiddenValue(p, "version")}})
	p = b.get(account)
	b.created(formAction(t, p, "/delete"), url.Values{"csrf": {token}, "version": {hiddenValue(p, "version")}})
	if n := len(e.Call("GET", d.Path("/service-accounts"), e.Admin, nil).List()); n != 0 {
		t.Fatalf("%d service accounts after delete", n)
	}
	if b.get(source).status != 404 {
		t.Fatal("the deleted Credential Source still shows")
	}
	p = b.get(ns + "/presets")
	before := len(e.Call("GET", d.Path("/presets"), e.Admin, nil).List())
	b.created(formAction(t, p, "/delete"), url.Values{"csrf": {token}, "version": {hiddenValue(p, "version")}})
	if after := len(e.Call("GET", d.Path("/presets"), e.Admin, nil).List()); after != before-1 {
		t.Fatalf("Presets %d → %d after delete", before, after)
	}
}

// TestConsoleManagedReader: a person who may only read a Namespace's
// service accounts, Credential Sources, Presets and Agents sees them
// without create, issue, delete or save (each with the permission named),
// and their forged writes are refused; another Namespace's resources are
// not found; the installation's Access page is refused. A person granted
// service_account:create creates one.
func TestConsoleManagedReader(t *testing.T) {
	t.Parallel()
	w := bootManaged(t)
	e, d := w.E, w.DeployWorld
	sa := e.Call("POST", d.Path("/service-accounts"), e.Admin, map[string]any{"name": "bot", "backendId": "chatgpt-main"}).Data()["id"].(string)
	cs := e.Call("POST", d.Path("/credential-sources"), e.Admin, map[string]any{"name": "team", "type": "openai",
		"secrets": map[string]any{"apiKey": map[string]any{"kind": "secret", "namespaceId": d.Ns, "id": d.Secret}}}).Data()["id"].(string)
	preset := e.Call("POST", d.Path("/presets"), e.Admin, map[string]any{"name": "house"}).Data()["id"].(string)
	other := e.CreateNamespace("elsewhere")
	otherSA := e.Call("POST", "/namespaces/"+other+"/service-accounts", e.Admin, map[string]any{"name": "bot", "backendId": "chatgpt-main"}).Data()["id"].(string)
	ns := "/console/namespaces/" + d.Ns

	r := consolePerson(t, w.DeployWorld, "reader@example.com", "namespace:read", "service_account:read", "credential_source:read", "preset:read", "agent:read")
	token := r.get(ns).csrf(t)
	for path, reason := range map[string]string{
		ns + "/service-accounts":                "it needs service_account:create",
		ns + "/service-accounts/" + sa:          "it needs service_account:delete",
		ns + "/credential-sources":              "it needs credential_source:create",
		ns + "/presets":                         "it needs preset:create",
		ns + "/presets/" + preset:               "it needs preset:update",
		ns + "/credential-sources/" + cs:        "it needs credential_source:update",
		ns + "/agents/" + w.agent + "/settings": "it needs agent:update",
	} {
		p := r.get(path)
		if p.status != 200 || !strings.Contains(p.text(), reason) {
			t.Fatalf("reader's %s = %d %s", path, p.status, p.text())
		}
		for _, label := range []string{"Create service account", "Create Credential Source", "Create Preset", "Issue credential", "Delete", "Save settings", "Replace Secret fields", "Save Preset"} {
			if p.button(label) {
				t.Fatalf("reader's %s offers %q", path, label)
			}
		}
	}
	for path, form := range map[string]url.Values{
		ns + "/service-accounts":                       {"name": {"sneaky"}, "backendId": {"chatgpt-main"}},
		ns + "/service-accounts/" + sa + "/credential": {},
		ns + "/service-accounts/" + sa + "/delete":     {"version": {"1"}},
		ns + "/credential-sources":                     {"name": {"sneaky"}, "type": {"openai"}},
		ns + "/credential-sources/" + cs:               {"version": {"2"}},
		ns + "/credential-sources/" + cs + "/delete":   {"version": {"2"}},
		ns + "/presets":                                {"name": {"sneaky"}},
		ns + "/presets/" + preset:                      {"name": {"sneaky"}, "version": {"1"}},
		ns + "/agents/" + w.agent + "/settings":        {"configurationId": {d.Cfg}, "version": {"1"}},
		"/console/iam/roles":                           {"name": {"sneaky"}, "permissions": {"namespace:read"}},
		ns + "/iam/restrictions":                       {"principalId": {"prn_x"}, "permission": {"agent:read"}},
	} {
		form.Set("csrf", token)
		if p := r.post(path, form); p.status != 403 {
			t.Fatalf("reader's POST %s = %d %s", path, p.status, p.text())
		}
	}
	if n := len(e.Call("GET", d.Path("/service-accounts"), e.Admin, nil).List()); n != 1 || w.backend.Issued() != 0 {
		t.Fatalf("the reader's forged writes changed something: %d accounts, %d issued", n, w.backend.Issued())
	}
	if p := r.get("/console/iam"); p.status != 403 {
		t.Fatalf("reader's installation Access page = %d", p.status)
	}
	// Another Namespace's account is not found, through either path.
	if p := r.get(ns + "/service-accounts/" + otherSA); p.status != 404 {
		t.Fatalf("another Namespace's account through this one = %d", p.status)
	}
	if p := r.get("/console/namespaces/" + other + "/service-accounts/" + otherSA); p.status != 404 {
		t.Fatalf("reader opening another Namespace's account = %d", p.status)
	}
	admin := newBrowser(t, e)
	admin.signIn("admin@occ.local", servertest.AdminPassword)
	if p := admin.get(ns + "/service-accounts/" + otherSA); p.status != 404 {
		t.Fatalf("administrator opening another Namespace's account through this one = %d", p.status)
	}

	// Allowed: a person with service_account:create creates one.
	creator := consolePerson(t, w.DeployWorld, "creator@example.com", "namespace:read", "service_account:create", "service_account:read")
	p := creator.get(ns + "/service-accounts")
	if !p.button("Create service account") {
		t.Fatalf("creator's service accounts page:\n%s", p.text())
	}
	creator.created(ns+"/service-accounts", url.Values{"csrf": {p.csrf(t)}, "name": {"made-by-creator"}, "backendId": {"chatgpt-main"}})
}

// textareaNamed is the content of the page's text area of this name.
func textareaNamed(p page, name string) string {
	for _, a := range p.all("textarea") {
		if attr(a, "name") == name && a.FirstChild != nil {
			return strings.TrimSpace(a.FirstChild.Data)
		}
	}
	return ""
}

// consolePerson creates a person holding perms in the world's Namespace and
// signs them in to the console.
func consolePerson(t *testing.T, d *servertest.DeployWorld, email string, perms ...string) *browser {
	t.Helper()
	e := d.E
	h := e.Call("POST", "/iam/principals", e.Admin, map[string]any{"email": email, "name": email, "password": "a long enough password"})
	if h.Status != 201 {
		t.Fatalf("create %s = %d %v", email, h.Status, h.Body)
	}
	role := e.Call("POST", d.Path("/iam/roles"), e.Admin, map[string]any{"name": "role-" + email, "permissions": perms})
	if role.Status != 201 {
		t.Fatalf("role for %s = %d %v", email, role.Status, role.Body)
	}
	if r := e.Call("POST", d.Path("/iam/bindings"), e.Admin, map[string]any{"principalId": h.Data()["id"], "roleId": role.Data()["id"]}); r.Status != 201 {
		t.Fatalf("bind %s = %d %v", email, r.Status, r.Body)
	}
	b := newBrowser(t, e)
	b.signIn(email, "a long enough password")
	return b
}
