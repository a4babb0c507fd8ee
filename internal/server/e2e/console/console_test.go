package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/cachetest"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
	"golang.org/x/net/html"
)

// TestConsoleSignIn: / is the sign-in page when signed out; a wrong
// password, a foreign origin and a session that ended each keep a person
// out; sign-in sets the API's session cookie and sign-out clears it.
func TestConsoleSignIn(t *testing.T) {
	t.Parallel()
	e := servertest.Boot(t, storetest.URL(t, "sqlite"), nil)
	b := newBrowser(t, e)

	p := b.get("/")
	if p.status != 200 || len(p.all("form")) != 1 || attr(p.all("form")[0], "action") != "/console/sign-in" {
		t.Fatalf("GET / signed out = %d %s", p.status, p.body)
	}
	if p := b.get("/console/namespaces"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/console/sign-in?next=%2Fconsole%2Fnamespaces" {
		t.Fatalf("a page signed out = %d %q", p.status, p.header.Get("Location"))
	}
	if p := b.post("/console/sign-in", url.Values{"email": {"admin@occ.local"}, "password": {"wrong password"}}); p.status != 401 ||
		!strings.Contains(p.text(), "The email or password is not correct.") || !strings.Contains(p.body, `value="admin@occ.local"`) || b.hasSession() {
		t.Fatalf("wrong password = %d %s", p.status, p.body)
	}
	if p := b.post("/console/sign-in", url.Values{"email": {"admin@occ.local"}, "password": {servertest.AdminPassword}}, "Origin", "https://evil.example"); p.status != 403 || b.hasSession() {
		t.Fatalf("sign-in from another origin = %d", p.status)
	}
	p = b.post("/console/sign-in", url.Values{"email": {"admin@occ.local"}, "password": {servertest.AdminPassword}, "next": {"//evil.example/x"}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/console/" {
		t.Fatalf("sign-in = %d %q", p.status, p.header.Get("Location"))
	}
	sc := p.header.Get("Set-Cookie")
	if !strings.HasPrefix(sc, "occ_session=") || !strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "SameSite=Lax") {
		t.Fatalf("session cookie = %q", sc)
	}
	home := b.get("/")
	if home.status != 200 || !strings.Contains(home.text(), "Signed in as") || !home.button("Sign out") {
		t.Fatalf("GET / signed in = %d %s", home.status, home.body)
	}
	// The console's session is the API's: the same cookie reads the API.
	if r := e.Call("GET", "/api/auth/session", "", nil, "Cookie", b.cookie()); r.Data()["authenticated"] != true {
		t.Fatalf("API session = %v", r.Body)
	}

	// A session that expired sends the next page back to sign-in, which
	// returns to it.
	if _, err := e.M.Store().DB().Exec(`UPDATE sessions SET expires_at = 1`); err != nil {
		t.Fatal(err)
	}
	if p := b.get("/console/namespaces?page="); p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/console/sign-in?next=") {
		t.Fatalf("expired session = %d %q", p.status, p.header.Get("Location"))
	}
	if p := b.post("/console/namespaces", url.Values{"csrf": {home.csrf(t)}, "name": {"late"}}); p.status != 401 || !strings.Contains(p.text(), "Your session has ended") ||
		textarea(p) != "late" || !strings.Contains(p.body, `name="next" value="/console/namespaces"`) {
		t.Fatalf("write with an expired session = %d %s", p.status, p.body)
	}
	// What was typed is shown back to copy, never a Secret's value.
	p = b.post("/console/namespaces/ns_00000000-0000-4000-8000-000000000000/secrets/sec_00000000-0000-4000-8000-000000000000",
		url.Values{"csrf": {home.csrf(t)}, "name": {"kept-name"}, "value": {"sk-kept-canary"}, "version": {"3"}})
	if p.status != 401 || !strings.Contains(p.text(), "kept-name") || strings.Contains(p.body, "sk-kept-canary") ||
		!strings.Contains(p.body, `name="next" value="/console/namespaces/ns_00000000-0000-4000-8000-000000000000/secrets"`) {
		t.Fatalf("secret form with an expired session = %d %s", p.status, p.body)
	}
	b.signIn("admin@occ.local", servertest.AdminPassword)
	home = b.get("/console/namespaces")
	if p := b.post("/console/sign-out", url.Values{"csrf": {home.csrf(t)}}); p.status != http.StatusSeeOther || !strings.Contains(p.header.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("sign-out = %d %q", p.status, p.header.Get("Set-Cookie"))
	}
	if p := b.get("/console/namespaces"); p.status != http.StatusSeeOther {
		t.Fatalf("after sign-out = %d", p.status)
	}
	if p := b.get("/console/static/console.css"); p.status != 200 || !strings.HasPrefix(p.header.Get("Content-Type"), "text/css") {
		t.Fatalf("stylesheet = %d %q", p.status, p.header.Get("Content-Type"))
	}
	if p := b.get("/console"); p.status != http.StatusMovedPermanently || p.header.Get("Location") != "/console/" {
		t.Fatalf("/console = %d %q", p.status, p.header.Get("Location"))
	}
	if p := b.get("/console/no-such-page"); p.status != 404 {
		t.Fatalf("unknown console page = %d", p.status)
	}
	// API paths are untouched by the console.
	if r := e.Call("GET", "/healthz", "", nil); r.Status != 200 {
		t.Fatalf("healthz = %d", r.Status)
	}
}

// TestConsoleForgedWrites: a cookie-authenticated form without the
// session's token, with another session's token, or from another origin
// is refused and changes nothing.
func TestConsoleForgedWrites(t *testing.T) {
	t.Parallel()
	e := servertest.Boot(t, storetest.URL(t, "sqlite"), nil)
	b := newBrowser(t, e)
	b.signIn("admin@occ.local", servertest.AdminPassword)
	token := b.get("/console/namespaces").csrf(t)
	other := newBrowser(t, e)
	other.signIn("admin@occ.local", servertest.AdminPassword)
	otherToken := other.get("/console/namespaces").csrf(t)
	if otherToken == token {
		t.Fatal("two sessions share a CSRF token")
	}
	for name, c := range map[string]struct {
		form    url.Values
		headers []string
	}{
		"no token":                {url.Values{"name": {"forged"}}, nil},
		"another session's token": {url.Values{"name": {"forged"}, "csrf": {otherToken}}, nil},
		"another origin":          {url.Values{"name": {"forged"}, "csrf": {token}}, []string{"Origin", "https://evil.example"}},
		"cross-site fetch":        {url.Values{"name": {"forged"}, "csrf": {token}}, []string{"Origin", "", "Sec-Fetch-Site", "cross-site"}},
	} {
		if p := b.post("/console/namespaces", c.form, c.headers...); p.status != 403 || !strings.Contains(p.text(), "did not come from this console page") {
			t.Fatalf("%s: forged create = %d %s", name, p.status, p.body)
		}
	}
	if names := namespaceNames(e); strings.Contains(names, "forged") {
		t.Fatalf("a forged form created a Namespace: %s", names)
	}
	if p := b.post("/console/namespaces", url.Values{"name": {"real"}, "csrf": {token}}); p.status != http.StatusSeeOther {
		t.Fatalf("genuine create = %d %s", p.status, p.body)
	}
	if names := namespaceNames(e); !strings.Contains(names, "real") {
		t.Fatalf("namespaces = %s", names)
	}
}

// TestConsoleHostileContent: names and file contents holding markup
// render as text on every page, through a full life: a Namespace,
// Configuration, Secret and Agent with hostile names, deployed, with a
// hostile workspace file.
func TestConsoleHostileContent(t *testing.T) {
	t.Parallel()
	e := servertest.Boot(t, storetest.URL(t, "sqlite"), nil)
	b := newBrowser(t, e)
	b.signIn("admin@occ.local", servertest.AdminPassword)
	token := b.get("/console/").csrf(t)

	p := b.post("/console/namespaces", url.Values{"csrf": {token}, "name": {hostile}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("create namespace = %d %s", p.status, p.body)
	}
	nsPath := p.header.Get("Location")
	ns := strings.TrimPrefix(nsPath, "/console/namespaces/")
	e.WaitStatus(ns, "ready")
	d := &servertest.DeployWorld{AgentWorld: &servertest.AgentWorld{E: e, Ns: ns}}

	p = b.post(nsPath+"/secrets", url.Values{"csrf": {token}, "name": {hostile}, "value": {"sk-console-canary"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("create secret = %d %s", p.status, p.body)
	}
	d.Secret = e.Call("GET", d.Path("/secrets"), e.Admin, nil).List()[0].(map[string]any)["id"].(string)
	p = b.post(nsPath+"/configurations", url.Values{"csrf": {token}, "name": {hostile}, "values": {`{"note": "` + strings.ReplaceAll(hostile, `"`, `\"`) + `"}`}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("create configuration = %d %s", p.status, p.body)
	}
	cfgPath := strings.SplitN(p.header.Get("Location"), "?", 2)[0]
	d.Cfg = strings.TrimPrefix(cfgPath, nsPath+"/configurations/")
	p = b.post(nsPath+"/agents", url.Values{"csrf": {token}, "name": {hostile}, "configurationId": {d.Cfg}, "harnessMethod": {"api_key"},
		"secretId": {d.Secret}, "set-AGENTS.md": {"1"}, "file-AGENTS.md": {hostile + "\r\nsecond line\r\n"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("create agent = %d %s", p.status, p.body)
	}
	agentPath := strings.SplitN(p.header.Get("Location"), "?", 2)[0]
	agent := strings.TrimPrefix(agentPath, nsPath+"/agents/")
	if p := b.post(nsPath+"/iam/roles", url.Values{"csrf": {token}, "name": {hostile}, "permissions": {"secret:operate"}}); p.status != http.StatusSeeOther {
		t.Fatalf("create role = %d %s", p.status, p.text())
	}
	var roleID string
	for _, r := range e.Call("GET", d.Path("/iam/roles"), e.Admin, nil).List() {
		if r.(map[string]any)["name"] == hostile {
			roleID = r.(map[string]any)["id"].(string)
		}
	}
	sp := e.Call("GET", d.Path("/agents/"+agent), e.Admin, nil).Data()["servicePrincipalId"].(string)
	if p := b.post(nsPath+"/iam/bindings", url.Values{"csrf": {token}, "principalId": {sp}, "roleId": {roleID}}); p.status != http.StatusSeeOther {
		t.Fatalf("bind = %d %s", p.status, p.text())
	}
	p = b.post(agentPath+"/deploy", url.Values{"csrf": {token}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("deploy = %d %s", p.status, p.body)
	}
	depPath := p.header.Get("Location")
	d.WaitDeployment(t, agent, strings.TrimPrefix(depPath, agentPath+"/deployments/"))

	// The initial file arrived with the browser's CRLF turned back to LF.
	if r := e.Call("GET", d.Path("/agents/"+agent+"/workspace/files/AGENTS.md"), e.Admin, nil); r.Data()["content"] != hostile+"\nsecond line\n" {
		t.Fatalf("initial AGENTS.md = %q", r.Data()["content"])
	}
	p = b.post(agentPath+"/files/SOUL.md", url.Values{"csrf": {token}, "content": {hostile}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("write SOUL.md = %d %s", p.status, p.body)
	}

	for _, c := range []struct {
		path string
		show bool
	}{
		{"/console/namespaces", true},
		{nsPath, true},
		{nsPath + "/agents?q=" + url.QueryEscape("<script>"), true},
		{nsPath + "/agents/new", true},
		{agentPath, true},
		{depPath, true},
		{agentPath + "/files/AGENTS.md", true},
		{agentPath + "/files/SOUL.md", true},
		{nsPath + "/configurations", true},
		{cfgPath, true},
		{nsPath + "/secrets", true},
		{nsPath + "/audit", false},
		{nsPath + "/iam", true},
		{nsPath + "/presets", false},
		{"/console/keys", false},
		{"/console/audit", false},
	} {
		p := b.get(c.path)
		if p.status != 200 {
			t.Fatalf("GET %s = %d %s", c.path, p.status, p.body)
		}
		assertInert(t, c.path, p, c.show)
		if strings.Contains(p.body, "sk-console-canary") {
			t.Fatalf("%s shows a Secret's value", c.path)
		}
	}
	// Without an installed runtime the form says why its files start empty.
	if p := b.get(nsPath + "/agents/new"); !strings.Contains(p.text(), "default files are not available on this server") {
		t.Fatalf("Create Agent without a runtime:\n%s", p.text())
	}
	// A refused form shows the person's hostile input back as text.
	p = b.post(nsPath+"/configurations", url.Values{"csrf": {token}, "name": {hostile}, "values": {"not json " + hostile}})
	if p.status != 400 || !strings.Contains(p.text(), "/values") {
		t.Fatalf("bad JSON = %d %s", p.status, p.body)
	}
	assertInert(t, "refused configuration", p, true)
}

// namespaceNames lists every Namespace's name, as the administrator sees them.
func namespaceNames(e *servertest.Env) string {
	var names []string
	for _, n := range e.Call("GET", "/namespaces", e.Admin, nil).List() {
		names = append(names, n.(map[string]any)["name"].(string))
	}
	return strings.Join(names, ",")
}

// TestConsoleReader: a person who may read an Agent but not deploy, stop
// or delete it sees the Agent without those buttons (with the reason), and
// a forged deploy with their own valid token is still refused by the use
// case; the administrator sees the buttons.
func TestConsoleReader(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, testConsoleReader)
}

func testConsoleReader(t *testing.T, dbURL string) {
	d, agent := servertest.LiveAgent(t, dbURL, "reader")
	e := d.E
	h := e.Call("POST", "/iam/principals", e.Admin, map[string]any{"email": "reader@example.com", "name": "Reader", "password": "a long enough password"})
	if h.Status != 201 {
		t.Fatalf("create reader = %d %v", h.Status, h.Body)
	}
	role := e.Call("POST", d.Path("/iam/roles"), e.Admin, map[string]any{"name": "reader", "permissions": []string{"namespace:read", "agent:read", "agent_revision:read"}}).Data()["id"].(string)
	if r := e.Call("POST", d.Path("/iam/bindings"), e.Admin, map[string]any{"principalId": h.Data()["id"], "roleId": role}); r.Status != 201 {
		t.Fatalf("bind reader = %d %v", r.Status, r.Body)
	}
	agentPath := "/console/namespaces/" + d.Ns + "/agents/" + agent

	admin := newBrowser(t, e)
	admin.signIn("admin@occ.local", servertest.AdminPassword)
	if p := admin.get(agentPath); p.status != 200 || !p.button("Deploy") || !p.button("Stop") || !p.button("Delete") {
		t.Fatalf("administrator's Agent page = %d %s", p.status, p.body)
	}

	r := newBrowser(t, e)
	r.signIn("reader@example.com", "a long enough password")
	p := r.get(agentPath)
	if p.status != 200 || p.button("Deploy") || p.button("Stop") || p.button("Delete") {
		t.Fatalf("reader's Agent page = %d %s", p.status, p.body)
	}
	if !strings.Contains(p.text(), "You may not deploy this Agent: it needs agent:deploy.") {
		t.Fatalf("no reason for the missing Deploy button:\n%s", p.text())
	}
	// Deployed by the administrator: the reader's fleet view shows it running.
	d.WaitDeployment(t, agent, d.Deploy(t, agent))
	fleet := r.get("/console/namespaces/" + d.Ns)
	if fleet.status != 200 || !strings.Contains(fleet.text(), "reader") || !strings.Contains(fleet.body, `class="state state-running"`) || strings.Contains(fleet.body, `href="/console/namespaces/`+d.Ns+`/agents/new"`) {
		t.Fatalf("reader's fleet = %d %s", fleet.status, fleet.body)
	}
	// The reader's own, valid form token does not grant the deploy.
	if p := r.post(agentPath+"/deploy", url.Values{"csrf": {p.csrf(t)}}); p.status != 403 {
		t.Fatalf("reader's deploy = %d %s", p.status, p.body)
	}
	if revs := e.Call("GET", d.Path("/agents/"+agent+"/revisions"), e.Admin, nil).List(); len(revs) != 1 {
		t.Fatalf("the reader's deploy made revisions: %v", revs)
	}
	// The audit log: the administrator finds the reader's refused deploy;
	// the reader has no link to it and is refused; a filter that cannot be
	// valid is refused with its field.
	if strings.Contains(p.body, `href="/console/audit"`) {
		t.Fatal("the reader's pages link to the installation's audit log")
	}
	if p := r.get("/console/audit"); p.status != 403 {
		t.Fatalf("reader's audit log = %d", p.status)
	}
	audit := admin.get("/console/audit?outcome=denied&action=agents.deploy&resource=" + agent)
	if audit.status != 200 || !strings.Contains(audit.text(), "agents.deploy") || strings.Count(audit.body, "<tr>") != 2 {
		t.Fatalf("administrator's audit log = %d %s", audit.status, audit.text())
	}
	if !strings.Contains(admin.get("/console/namespaces").body, `href="/console/audit"`) {
		t.Fatal("the administrator's pages do not link to the audit log")
	}
	for _, q := range []string{"?outcome=maybe", "?action=" + url.QueryEscape("a\x00b"), "?resource=" + url.QueryEscape("agt_x' OR 1=1")} {
		if p := admin.get("/console/audit" + q); p.status != 400 || len(p.all("li")) == 0 {
			t.Fatalf("audit filter %s = %d %s", q, p.status, p.text())
		}
	}
	if p := admin.get("/console/namespaces/" + d.Ns + "/audit?action=agents.deploy&outcome=success"); p.status != 200 || !strings.Contains(p.text(), "agents.deploy") {
		t.Fatalf("Namespace audit log = %d %s", p.status, p.text())
	}
	// Access: the reader may not administer the Namespace; the
	// administrator may, and binds a role there.
	if p := r.get("/console/namespaces/" + d.Ns + "/iam"); p.status != 403 {
		t.Fatalf("reader's Access page = %d", p.status)
	}
	if p := r.post("/console/namespaces/"+d.Ns+"/iam/roles", url.Values{"csrf": {p.csrf(t)}, "name": {"sneaky"}, "permissions": {"agent:deploy"}}); p.status != 403 {
		t.Fatalf("reader's role create = %d", p.status)
	}
	if p := admin.get("/console/namespaces/" + d.Ns + "/iam"); p.status != 200 || !p.button("Bind role") || !strings.Contains(p.text(), "reader") {
		t.Fatalf("administrator's Access page = %d %s", p.status, p.text())
	}
	// Another Namespace's pages are not found for the reader.
	other := e.CreateNamespace("elsewhere")
	if p := r.get("/console/namespaces/" + other); p.status != 404 {
		t.Fatalf("reader opening another Namespace = %d", p.status)
	}
	if names := r.get("/console/namespaces").text(); strings.Contains(names, "elsewhere") {
		t.Fatal("the reader's Namespace list shows a Namespace they may not read")
	}
}

// TestConsoleRefusals: a write whose outcome occ cannot confirm keeps the
// person's text and gives the seed's advice; a Configuration the use case
// refuses shows the refusal at its path and keeps the text; a Namespace is
// deleted through the console with the version the person saw.
func TestConsoleRefusals(t *testing.T) {
	t.Parallel()
	d, agent := servertest.LiveAgent(t, storetest.URL(t, "sqlite"), "refusals")
	e := d.E
	d.WaitDeployment(t, agent, d.Deploy(t, agent))
	b := newBrowser(t, e)
	b.signIn("admin@occ.local", servertest.AdminPassword)
	nsPath := "/console/namespaces/" + d.Ns
	file := nsPath + "/agents/" + agent + "/files/USER.md"
	token := b.get(file).csrf(t)

	servertest.BreakAuditWhen(t, e, "NEW.outcome <> 'pending'")
	p := b.post(file, url.Values{"csrf": {token}, "content": {"kept text\r\n"}})
	servertest.RepairAudit(t, e)
	if p.status != 503 || !strings.Contains(p.text(), "UNKNOWN_OUTCOME") ||
		!strings.Contains(p.text(), "Read the current file") || !strings.Contains(p.text(), "before deciding whether to submit another write") {
		t.Fatalf("unknown outcome = %d %s", p.status, p.text())
	}
	if textarea(p) != "kept text\n" {
		t.Fatalf("the person's text was not kept: %s", p.body)
	}

	// A Configuration that sets a key occ owns: the refusal's path shows
	// and the text stays.
	cfg := nsPath + "/configurations/" + d.Cfg
	p = b.get(cfg)
	version := ""
	for _, in := range p.all("input") {
		if attr(in, "name") == "version" {
			version = attr(in, "value")
		}
	}
	p = b.post(cfg, url.Values{"csrf": {token}, "version": {version}, "values": {`{"gateway": {"port": 18789}}`}})
	if p.status != 400 || !strings.Contains(strings.Join(strings.Fields(p.text()), " "), "at /values/gateway/port : INVALID_VALUE") || textarea(p) != `{"gateway": {"port": 18789}}` {
		t.Fatalf("refused configuration = %d %s", p.status, p.body)
	}
	// A stale version is refused, not overwritten.
	if p := b.post(cfg, url.Values{"csrf": {token}, "version": {"999"}, "values": {`{}`}}); p.status != 412 {
		t.Fatalf("stale configuration save = %d %s", p.status, p.text())
	}
	if p := b.post(cfg, url.Values{"csrf": {token}, "version": {version}, "values": {`{"agents": {"defaults": {"model": "openai/gpt-5"}}}`}}); p.status != http.StatusSeeOther {
		t.Fatalf("configuration save = %d %s", p.status, p.text())
	}
	if r := e.Call("GET", d.Path("/configurations/"+d.Cfg), e.Admin, nil); r.Data()["generation"] != float64(2) {
		t.Fatalf("configuration after save = %v", r.Data())
	}

	// Two revisions side by side: the Configuration's new generation is a
	// changed line.
	first := e.Call("GET", d.Path("/agents/"+agent), e.Admin, nil).Data()["activeRevisionId"].(string)
	second := d.Deploy(t, agent)
	d.WaitDeployment(t, agent, second)
	agentPage := b.get(nsPath + "/agents/" + agent)
	if !agentPage.button("Compare snapshots") {
		t.Fatalf("no compare form on the Agent page: %s", agentPage.text())
	}
	cmp := b.get(nsPath + "/agents/" + agent + "/revisions/compare?a=" + first + "&b=" + second)
	if cmp.status != 200 || !strings.Contains(cmp.body, `<tr class="changed"><td></td><td><pre><span class="sr">added: </span>    &#34;generation&#34;: 2,</pre>`) {
		t.Fatalf("compare = %d %s", cmp.status, cmp.body)
	}
	if p := b.get(nsPath + "/agents/" + agent + "/revisions/compare?a=" + first + "&b=nope"); p.status != 400 {
		t.Fatalf("compare with a bad revision ID = %d", p.status)
	}
	// Deleting a Namespace starts its teardown.
	gone := e.CreateNamespace("to-delete")
	p = b.get("/console/namespaces")
	if p := b.post("/console/namespaces/"+gone+"/delete", url.Values{"csrf": {token}, "version": {"999"}}); p.status != 412 {
		t.Fatalf("delete with a stale version = %d", p.status)
	}
	v := e.Call("GET", "/namespaces/"+gone, e.Admin, nil).Header.Get("ETag")
	if p := b.post("/console/namespaces/"+gone+"/delete", url.Values{"csrf": {token}, "version": {strings.Trim(v, `"`)}}); p.status != http.StatusSeeOther {
		t.Fatalf("delete = %d %s", p.status, p.text())
	}
	e.WaitStatus(gone, "gone")
}

// TestConsoleFleetFilters: the fleet view filters by state and name.
func TestConsoleFleetFilters(t *testing.T) {
	t.Parallel()
	d, agent := servertest.LiveAgent(t, storetest.URL(t, "sqlite"), "alpha")
	e := d.E
	d.NewAgent(t, "beta", true)
	d.WaitDeployment(t, agent, d.Deploy(t, agent))
	b := newBrowser(t, e)
	b.signIn("admin@occ.local", servertest.AdminPassword)
	fleet := "/console/namespaces/" + d.Ns + "/agents"
	names := func(p page) string {
		var out []string
		for _, a := range p.all("a") {
			if h := attr(a, "href"); strings.HasPrefix(h, fleet+"/agt_") && !strings.Contains(h, "/deployments/") {
				out = append(out, a.FirstChild.Data)
			}
		}
		return strings.Join(out, ",")
	}
	for query, want := range map[string]string{
		"":                       "alpha,beta",
		"?state=running":         "alpha",
		"?state=stopped":         "beta",
		"?state=failed":          "",
		"?q=BET":                 "beta",
		"?q=alp&state=stopped":   "",
		"?state=" + hostileQuery: "alpha,beta", // an unknown state is no filter
	} {
		if got := names(b.get(fleet + query)); got != want {
			t.Errorf("fleet%s = %q, want %q", query, got, want)
		}
	}
}

var hostileQuery = url.QueryEscape(hostile)

// textarea is the content of the page's one text area.
func textarea(p page) string {
	if a := p.all("textarea"); len(a) == 1 && a[0].FirstChild != nil {
		return a[0].FirstChild.Data
	}
	return ""
}

// TestConsoleCreateAgentDefaults: with the pinned runtime installed, Create
// Agent starts from its four rendered default files and sends their
// identity; a stale identity is refused (409) with an explanation and the
// person's text kept.
func TestConsoleCreateAgentDefaults(t *testing.T) {
	t.Parallel()
	cache := cachetest.Runtime(t)
	if _, err := agentruntime.Install(t.Context(), agentruntime.Options{Dir: cache, Progress: servertest.LineLogger(t)}); err != nil {
		t.Fatalf("install the pinned runtime into %s: %v", cache, err)
	}
	e := servertest.Boot(t, storetest.URL(t, "sqlite"), nil, func(m *server.Main) { m.Config.RuntimeDir = cache })
	d := &servertest.DeployWorld{AgentWorld: &servertest.AgentWorld{E: e, Ns: e.CreateNamespace("defaults")}}
	d.Cfg = e.Call("POST", d.Path("/configurations"), e.Admin, map[string]any{"name": "c", "kind": "agent", "values": map[string]any{}}).Data()["id"].(string)
	b := newBrowser(t, e)
	b.signIn("admin@occ.local", servertest.AdminPassword)
	newAgent := "/console/namespaces/" + d.Ns + "/agents/new"
	p := b.get(newAgent)
	form := url.Values{"csrf": {p.csrf(t)}, "name": {"from-defaults"}, "configurationId": {d.Cfg}}
	for _, in := range p.all("input") {
		if attr(in, "name") == "workspaceDefaultsId" {
			form.Set("workspaceDefaultsId", attr(in, "value"))
		}
		if strings.HasPrefix(attr(in, "name"), "set-") && hasAttr(in, "checked") {
			form.Set(attr(in, "name"), "1")
		}
	}
	if form.Get("workspaceDefaultsId") != gateway.PinnedDefaultsID {
		t.Fatalf("workspaceDefaultsId on the form = %q", form.Get("workspaceDefaultsId"))
	}
	for _, a := range p.all("textarea") {
		name, ok := strings.CutPrefix(attr(a, "name"), "file-")
		if !ok {
			continue
		}
		content := ""
		if a.FirstChild != nil {
			content = a.FirstChild.Data
		}
		if gateway.HashContent([]byte(content)) != gateway.PinnedDefaultDigests[name] || form.Get("set-"+name) != "1" {
			t.Fatalf("%s on the form is not the pinned default (ticked %q)", name, form.Get("set-"+name))
		}
		form.Set("file-"+name, strings.ReplaceAll(content, "\n", "\r\n")) // as a browser sends it
	}
	form.Set("file-USER.md", "Edited before creation.\r\n")

	stale := url.Values{}
	for k, v := range form {
		stale[k] = v
	}
	stale.Set("workspaceDefaultsId", strings.Repeat("0", 64))
	p = b.post("/console/namespaces/"+d.Ns+"/agents", stale)
	if p.status != 409 || !strings.Contains(p.text(), "not the runtime's current ones") {
		t.Fatalf("stale defaults = %d %s", p.status, p.text())
	}
	if !strings.Contains(p.text(), "Edited before creation.") {
		t.Fatal("the person's text was not kept after the 409")
	}
	p = b.post("/console/namespaces/"+d.Ns+"/agents", form)
	if p.status != http.StatusSeeOther {
		t.Fatalf("create with the defaults = %d %s", p.status, p.text())
	}
	if n := len(e.Call("GET", d.Path("/agents"), e.Admin, nil).List()); n != 1 {
		t.Fatalf("%d agents", n)
	}
}

func hasAttr(n *html.Node, name string) bool {
	for _, a := range n.Attr {
		if a.Key == name {
			return true
		}
	}
	return false
}

// TestConsoleServiceKeys: an installation administrator issues a key (shown
// once, working on the API) and revokes it; a person who is not one is
// refused.
func TestConsoleServiceKeys(t *testing.T) {
	t.Parallel()
	e := servertest.Boot(t, storetest.URL(t, "sqlite"), nil)
	sp := e.Call("POST", "/iam/service-principals", e.Admin, map[string]any{"name": "ci"})
	if sp.Status != 201 {
		t.Fatalf("service principal = %d %v", sp.Status, sp.Body)
	}
	b := newBrowser(t, e)
	b.signIn("admin@occ.local", servertest.AdminPassword)
	token := b.get("/console/keys").csrf(t)
	p := b.post("/console/keys", url.Values{"csrf": {token}, "name": {"ci-key"}, "principalId": {sp.Data()["id"].(string)}})
	var key string
	for _, in := range p.all("input") {
		if attr(in, "id") == "issued-key" {
			key = attr(in, "value")
		}
	}
	if p.status != 201 || !strings.HasPrefix(key, "occ_") {
		t.Fatalf("issue = %d %s", p.status, p.text())
	}
	if r := e.Call("GET", "/api/auth/service-keys", key, nil); r.Status != 403 && r.Status != 200 {
		t.Fatalf("the issued key does not authenticate: %d %v", r.Status, r.Body)
	}
	list := b.get("/console/keys")
	if strings.Contains(list.body, key) || !strings.Contains(list.text(), "ci-key") {
		t.Fatalf("keys page after issuing: %s", list.text())
	}
	var revoke string
	for _, f := range list.all("form") {
		if a := attr(f, "action"); strings.HasSuffix(a, "/revoke") {
			revoke = a
		}
	}
	if p := b.post(revoke, url.Values{"csrf": {token}}); p.status != http.StatusSeeOther {
		t.Fatalf("revoke = %d %s", p.status, p.text())
	}
	if r := e.Call("GET", "/api/auth/service-keys", key, nil); r.Status != 401 {
		t.Fatalf("the revoked key = %d", r.Status)
	}
	// A person without installation:administer.
	if r := e.Call("POST", "/iam/principals", e.Admin, map[string]any{"email": "dev@example.com", "name": "Dev", "password": "a long enough password"}); r.Status != 201 {
		t.Fatalf("person = %d", r.Status)
	}
	dev := newBrowser(t, e)
	dev.signIn("dev@example.com", "a long enough password")
	if p := dev.get("/console/keys"); p.status != 403 {
		t.Fatalf("keys page for a person without installation:administer = %d", p.status)
	}
	if p := dev.post("/console/keys", url.Values{"csrf": {dev.get("/console/namespaces").csrf(t)}, "name": {"x"}, "principalId": {sp.Data()["id"].(string)}}); p.status != 403 {
		t.Fatalf("issue by a person without installation:administer = %d", p.status)
	}
}
