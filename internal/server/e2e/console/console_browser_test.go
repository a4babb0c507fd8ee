package console_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/openclaw/occ/internal/backends"
	"github.com/openclaw/occ/internal/backends/backendstest"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/credgateway/credgatewaytest"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// bootConsole starts occ (fake gateway) on a port of its own whose public
// origin is the address a browser opens, and a headless Chromium.
func bootConsole(t *testing.T, driver compute.Driver, opts ...func(*server.Main)) (*servertest.Env, string, context.Context) {
	t.Helper()
	chromium := chromiumBinary(t)
	listen := servertest.FreePort(t)
	site := "http://" + listen
	e := servertest.Boot(t, storetest.URL(t, "sqlite"), driver, append(opts, func(m *server.Main) { m.Config.Listen, m.Config.PublicOrigin = listen, site })...)
	alloc, cancel := chromedp.NewExecAllocator(t.Context(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 900))...)
	t.Cleanup(cancel)
	browser, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	ctx, cancel := context.WithTimeout(browser, 3*time.Minute)
	t.Cleanup(cancel)
	return e, site, ctx
}

// do runs browser steps or fails the test with the page's text.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	began := time.Now()
	defer func() { t.Logf("%s: %s", what, time.Since(began).Round(time.Millisecond)) }()
	if err := chromedp.Do(ctx, steps...); err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		t.Fatalf("%s: %v\npage:\n%s", what, err, text)
	}
}

// submit clicks the submit button of the form whose action ends with
// action and waits until the next page has loaded (not the page it left).
func submit(action string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Evaluate[chromedp.Void](`window.occPageBeforeSubmit = true`), // gone once the next page loads
		chromedp.Click(chromedp.CSS(`form[action$="`+action+`"] button[type=submit]`)),
		waitJS(`window.occPageBeforeSubmit === undefined && document.readyState === "complete"`))
}

// waitText waits until the page's text holds s.
func waitText(s string) chromedp.Action[chromedp.Void] {
	return waitJS(`document.readyState === "complete" && document.body.innerText.includes(` + jsString(s) + `)`)
}

// waitJS waits until expr is true on the current page, across the
// navigation a form submission starts (an evaluation the navigation
// interrupts is asked again).
func waitJS(expr string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		deadline := time.Now().Add(time.Minute)
		for {
			ok, err := chromedp.Evaluate[bool](expr)(ctx, t)
			if err == nil && ok {
				return chromedp.Void{}, nil
			}
			if time.Now().After(deadline) {
				return chromedp.Void{}, fmt.Errorf("waited a minute for %s (last error %v)", expr, err)
			}
			select {
			case <-ctx.Done():
				return chromedp.Void{}, ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

func jsString(s string) string {
	return "`" + strings.NewReplacer("`", "\\`", "$", "\\$", "\\", "\\\\").Replace(s) + "`"
}

// TestConsoleBrowserJourney drives the console in headless Chromium: sign
// in, create a Namespace, Configuration, Secret and Agent, deploy and
// watch the timeline (the event stream, through the console's script
// under its CSP) reach succeeded, run diagnostics, edit a workspace file,
// stop, delete, sign out. The Agent's Secret grant is made on the Access
// page too.
func TestConsoleBrowserJourney(t *testing.T) {
	t.Parallel()
	e, site, ctx := bootConsole(t, nil)

	do(t, ctx, "sign in", chromedp.Navigate(site+"/"), chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), "admin@occ.local"), chromedp.SendKeys(chromedp.CSS("#password"), servertest.AdminPassword),
		submit("/console/sign-in"), waitText("Signed in as"))

	do(t, ctx, "create a Namespace", chromedp.SendKeys(chromedp.CSS("#ns-name"), "journey"), submit("/console/namespaces"),
		waitText("Agents in journey"))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	nsPath := strings.TrimPrefix(loc, site)
	ns := strings.TrimPrefix(nsPath, "/console/namespaces/")
	e.WaitStatus(ns, "ready")
	d := &servertest.DeployWorld{AgentWorld: &servertest.AgentWorld{E: e, Ns: ns}}

	do(t, ctx, "create a Configuration", chromedp.Click(chromedp.CSS(`nav a[href$="/configurations"]`)), chromedp.WaitVisible(chromedp.CSS("#c-name")),
		chromedp.SendKeys(chromedp.CSS("#c-name"), "support"),
		chromedp.SetValue(chromedp.CSS("#c-values"), `{"agents": {"defaults": {"model": "openai/gpt-5"}}}`),
		submit("/configurations"), waitText("Created."))
	do(t, ctx, "create a Secret", chromedp.Click(chromedp.CSS(`nav a[href$="/secrets"]`)), chromedp.WaitVisible(chromedp.CSS("#s-name")),
		chromedp.SendKeys(chromedp.CSS("#s-name"), "openai"), chromedp.SendKeys(chromedp.CSS("#s-value"), "sk-journey-canary"),
		submit("/secrets"), waitText("Created."))
	cfg := e.Call("GET", d.Path("/configurations"), e.Admin, nil).List()[0].(map[string]any)["id"].(string)
	secret := e.Call("GET", d.Path("/secrets"), e.Admin, nil).List()[0].(map[string]any)["id"].(string)
	do(t, ctx, "create a Preset", chromedp.Click(chromedp.CSS(`nav a[href$="/presets"]`)), chromedp.WaitVisible(chromedp.CSS("#p-name")),
		chromedp.SendKeys(chromedp.CSS("#p-name"), "support-preset"), chromedp.SetValue(chromedp.CSS("#l-method"), "api_key"),
		chromedp.SetValue(chromedp.CSS("#l-secret"), secret), submit("/presets"), waitText("Created."))

	do(t, ctx, "create an Agent", chromedp.Click(chromedp.CSS(`nav a[href$="/agents"]`)), chromedp.Click(chromedp.CSS(`a[href$="/agents/new"]`)),
		chromedp.WaitVisible(chromedp.CSS("#a-name")), chromedp.SendKeys(chromedp.CSS("#a-name"), "helpdesk"),
		chromedp.SetValue(chromedp.CSS("#l-cfg"), cfg), chromedp.SetValue(chromedp.CSS("#l-method"), "api_key"),
		chromedp.SetValue(chromedp.CSS("#l-secret"), secret), chromedp.Click(chromedp.CSS(`#set-AGENTS\.md`)),
		chromedp.SetValue(chromedp.CSS(`#file-AGENTS\.md`), "Answer support questions.\n"),
		submit("/agents"), waitText("Last deployment"))
	agents := e.Call("GET", d.Path("/agents"), e.Admin, nil).List()
	if len(agents) != 1 {
		t.Fatalf("agents = %v", agents)
	}
	agent := agents[0].(map[string]any)
	// The Agent's service principal may use the Secret: a role and a
	// binding made on the Access page.
	do(t, ctx, "create a role", chromedp.Click(chromedp.CSS(`nav a[href="`+nsPath+`/iam"]`)), chromedp.WaitVisible(chromedp.CSS("#r-name")),
		chromedp.SendKeys(chromedp.CSS("#r-name"), "secret-operators"), chromedp.SendKeys(chromedp.CSS("#r-perms"), "secret:operate"),
		submit("/iam/roles"), waitText("Created."))
	var role string
	for _, r := range e.Call("GET", d.Path("/iam/roles"), e.Admin, nil).List() {
		if r.(map[string]any)["name"] == "secret-operators" {
			role = r.(map[string]any)["id"].(string)
		}
	}
	do(t, ctx, "bind the Agent's principal", chromedp.SendKeys(chromedp.CSS("#b-principal"), agent["servicePrincipalId"].(string)),
		chromedp.SetValue(chromedp.CSS("#b-role"), role), submit("/iam/bindings"), waitText("Created."))

	do(t, ctx, "save the Agent's settings", chromedp.Navigate(site+nsPath+"/agents/"+agent["id"].(string)+"/settings"),
		chromedp.WaitVisible(chromedp.CSS("#l-cfg")), submit("/settings"), waitText("Saved."))
	do(t, ctx, "deploy and watch the timeline", chromedp.Navigate(site+nsPath+"/agents/"+agent["id"].(string)), submit("/deploy"),
		chromedp.WaitVisible(chromedp.CSS("#timeline")),
		waitJS(`document.querySelector('#timeline li[data-status="succeeded"]') !== null`))
	status, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#deployment-status")))
	if err != nil || status != "succeeded" {
		t.Fatalf("deployment status shown = %q (%v)", status, err)
	}
	do(t, ctx, "run diagnostics", submit("/diagnostics"), chromedp.WaitVisible(chromedp.CSS("table .check")))

	agentPath := nsPath + "/agents/" + agent["id"].(string)
	do(t, ctx, "read the initial file", chromedp.Navigate(site+agentPath+"/files/AGENTS.md"), chromedp.WaitVisible(chromedp.CSS("#content")))
	shown, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS("#content")))
	if err != nil || shown != "Answer support questions.\n" {
		t.Fatalf("AGENTS.md shown = %q (%v)", shown, err)
	}
	do(t, ctx, "edit SOUL.md", chromedp.Navigate(site+agentPath+"/files/SOUL.md"), chromedp.WaitVisible(chromedp.CSS("#content")),
		chromedp.SetValue(chromedp.CSS("#content"), "Be kind.\nBe brief.\n"), submit("/files/SOUL.md"), waitText("Saved."))
	if r := e.Call("GET", d.Path("/agents/"+agent["id"].(string)+"/workspace/files/SOUL.md"), e.Admin, nil); r.Data()["content"] != "Be kind.\nBe brief.\n" {
		t.Fatalf("SOUL.md after the edit = %v", r.Data()["content"])
	}

	do(t, ctx, "stop", chromedp.Navigate(site+agentPath), submit("/stop"), waitText("Stop accepted"))
	if r := e.Call("GET", d.Path("/agents/"+agent["id"].(string)), e.Admin, nil); r.Data()["desiredRuntimeState"] != "stopped" {
		t.Fatalf("after stop = %v", r.Data())
	}
	do(t, ctx, "delete", submit("/delete"), waitText("Delete accepted"))
	servertest.WaitFor(t, "the Agent's teardown", func() bool {
		return e.Call("GET", d.Path("/agents/"+agent["id"].(string)), e.Admin, nil).Status == 404
	})
	do(t, ctx, "sign out", chromedp.Navigate(site+"/console/namespaces"), submit("/console/sign-out"), chromedp.WaitVisible(chromedp.CSS("#password")))
	do(t, ctx, "a page after sign-out goes to sign-in", chromedp.Navigate(site+agentPath), chromedp.WaitVisible(chromedp.CSS("#password")))
}

// TestConsoleBrowserLiveTimeline: a deployment page opened while the
// gateway is still starting follows the event stream without a reload
// (the console's script, allowed by the CSP) until it shows succeeded.
func TestConsoleBrowserLiveTimeline(t *testing.T) {
	t.Parallel()
	fake := servertest.NewFakeCompute(t)
	e, site, ctx := bootConsole(t, fake)
	d := &servertest.DeployWorld{AgentWorld: &servertest.AgentWorld{E: e, Ns: e.CreateNamespace("live")}, Fake: fake}
	d.Secret = e.Call("POST", d.Path("/secrets"), e.Admin, map[string]any{"name": "k", "value": "sk-x"}).Data()["id"].(string)
	d.Cfg = e.Call("POST", d.Path("/configurations"), e.Admin, map[string]any{"name": "c", "kind": "agent", "values": map[string]any{}}).Data()["id"].(string)
	agent, _ := d.NewAgent(t, "live", true)
	fake.Set(func(f *servertest.FakeCompute) { f.NotReady[agent] = -1 }) // the gateway keeps starting
	rev := d.Deploy(t, agent)

	do(t, ctx, "sign in", chromedp.Navigate(site+"/console/sign-in"), chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), "admin@occ.local"), chromedp.SendKeys(chromedp.CSS("#password"), servertest.AdminPassword),
		submit("/console/sign-in"), waitText("Signed in as"))
	do(t, ctx, "open the deployment", chromedp.Navigate(site+"/console/namespaces/"+d.Ns+"/agents/"+agent+"/deployments/"+rev),
		chromedp.WaitVisible(chromedp.CSS("#timeline[data-events]")),
		chromedp.Evaluate[chromedp.Void](`window.occSamePage = true`))
	shown, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#deployment-status")))
	if err != nil || (shown != "queued" && shown != "running") {
		t.Fatalf("status while the gateway starts = %q (%v)", shown, err)
	}
	fake.Set(func(f *servertest.FakeCompute) { f.NotReady[agent] = 0 })
	do(t, ctx, "the timeline reaches succeeded", waitJS(`document.querySelector('#timeline li[data-status="succeeded"]') !== null`))
	same, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.occSamePage === true`))
	if err != nil || !same {
		t.Fatalf("the page was reloaded instead of following the stream (%v)", err)
	}
	if shown, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#deployment-status"))); shown != "succeeded" {
		t.Fatalf("status shown = %q", shown)
	}
}

// TestConsoleScreenshots opens every console page of a seeded occ in
// headless Chromium and writes a PNG of each: to OCC_CONSOLE_SCREENSHOTS
// when set (scripts/screenshots), otherwise to a temporary directory. Each
// page must answer 200 and render a non-empty image.
func TestConsoleScreenshots(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("OCC_CONSOLE_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fake := backendstest.New(t)
	e, site, ctx := bootConsole(t, nil, servertest.WithBackend(fake.Backend("chatgpt-main")), servertest.WithGateway(credgatewaytest.New(t).URL),
		servertest.WithBackendClient(&backends.HTTP{Timeout: time.Second}))
	d, agent := seedConsole(t, e)
	sa := e.Call("POST", d.Path("/service-accounts"), e.Admin, map[string]any{"name": "codex-bot", "backendId": "chatgpt-main"}).Data()["id"].(string)
	e.Call("POST", d.Path("/service-accounts/"+sa+"/credentials"), e.Admin, nil)
	e.Call("POST", d.Path("/service-accounts"), e.Admin, map[string]any{"name": "codex-spare", "backendId": "chatgpt-main"})
	cs := e.Call("POST", d.Path("/credential-sources"), e.Admin, map[string]any{"name": "openai-team", "type": "openai",
		"config": map[string]any{"organization": "acme"}, "secrets": map[string]any{"apiKey": map[string]any{"kind": "secret", "namespaceId": d.Ns, "id": d.Secret}}})
	if cs.Status != 201 {
		t.Fatalf("seed a Credential Source = %d %v", cs.Status, cs.Body)
	}
	preset := e.Call("POST", d.Path("/presets"), e.Admin, map[string]any{"name": "dedicated-codex", "executionMode": "dedicated",
		"plugins": map[string]any{"google-calendar@openai-curated-remote": map[string]any{"approvalPolicy": "write_actions"}}}).Data()["id"].(string)
	rev := d.Deploy(t, agent)
	d.WaitDeployment(t, agent, rev)
	if r := e.Call("PUT", d.Path("/agents/"+agent+"/workspace/files/SOUL.md"), e.Admin, map[string]any{"content": "Be kind.\nBe brief.\n"}); r.Status != 200 {
		t.Fatalf("write SOUL.md = %d %v", r.Status, r.Body)
	}
	ns := "/console/namespaces/" + d.Ns
	a := ns + "/agents/" + agent
	pages := []struct{ name, path string }{
		{"01-sign-in", "/console/sign-in"},
		{"02-namespaces", "/console/namespaces"},
		{"03-agents", ns + "/agents"},
		{"04-create-agent", ns + "/agents/new"},
		{"05-agent", a},
		{"06-deployment", a + "/deployments/" + rev},
		{"07-workspace-file", a + "/files/SOUL.md"},
		{"08-configurations", ns + "/configurations"},
		{"09-configuration", ns + "/configurations/" + d.Cfg},
		{"10-secrets", ns + "/secrets"},
		{"11-audit-log", "/console/audit"},
		{"12-access", ns + "/iam"},
		{"13-presets", ns + "/presets"},
		{"14-service-keys", "/console/keys"},
		{"15-service-accounts", ns + "/service-accounts"},
		{"16-service-account", ns + "/service-accounts/" + sa},
		{"17-credential-sources", ns + "/credential-sources"},
		{"18-credential-source", ns + "/credential-sources/" + cs.Data()["id"].(string)},
		{"19-agent-settings", a + "/settings"},
		{"20-installation-access", "/console/iam"},
		{"21-preset", ns + "/presets/" + preset},
	}
	for i, p := range pages {
		if i == 1 {
			do(t, ctx, "sign in", chromedp.SendKeys(chromedp.CSS("#email"), "admin@occ.local"),
				chromedp.SendKeys(chromedp.CSS("#password"), servertest.AdminPassword), submit("/console/sign-in"), waitText("Signed in as"))
		}
		res, err := chromedp.Run(ctx, chromedp.NavigateResponse(site+p.path))
		if err != nil || res.Status != 200 {
			t.Fatalf("%s: %v %v", p.path, res, err)
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if len(png) < 1000 || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Fatalf("%s: screenshot of %d bytes", p.path, len(png))
		}
		if err := os.WriteFile(filepath.Join(dir, p.name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d screenshots in %s", len(pages), dir)
}

// seedConsole fills a Namespace with what the pages show: Configurations,
// Secrets and Agents in several states, one deployable.
func seedConsole(t *testing.T, e *servertest.Env) (*servertest.DeployWorld, string) {
	d := &servertest.DeployWorld{AgentWorld: &servertest.AgentWorld{E: e, Ns: e.CreateNamespace("support")}}
	e.CreateNamespace("research")
	d.Secret = e.Call("POST", d.Path("/secrets"), e.Admin, map[string]any{"name": "openai-key", "value": "sk-seed"}).Data()["id"].(string)
	e.Call("POST", d.Path("/secrets"), e.Admin, map[string]any{"name": "slack-token", "value": "xoxb-seed"})
	d.Cfg = e.Call("POST", d.Path("/configurations"), e.Admin, map[string]any{"name": "support-bot", "kind": "agent",
		"values": map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": "openai/gpt-5"}}}}).Data()["id"].(string)
	e.Call("POST", d.Path("/configurations"), e.Admin, map[string]any{"name": "triage", "kind": "agent", "values": map[string]any{}})
	agent, _ := d.NewAgent(t, "helpdesk", true)
	d.NewAgent(t, "ticket-triage", true)
	return d, agent
}
