package console_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/cachetest"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// chromiumBinary is the browser of the browser lane: OCC_TEST_CHROMIUM, or
// Debian's chromium on PATH. Missing, the test fails and says how to get it
// (scripts/test installs it as root).
func chromiumBinary(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("OCC_TEST_CHROMIUM"); b != "" {
		return b
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium for the browser lane: install Debian's chromium (scripts/test does as root) or set OCC_TEST_CHROMIUM")
	return ""
}

// TestNativeAdminBrowser signs in to occ in headless Chromium, opens the
// native admin UI of a running Agent (real OpenClaw) on its derived host and
// sees the OpenClaw Control UI load and connect; then a person without
// agent:administer, a shared cookie planted by another Agent's host, and a
// forged identity header are refused.
func TestNativeAdminBrowser(t *testing.T) {
	t.Parallel()
	chromium := chromiumBinary(t)
	cache := cachetest.Runtime(t)
	if _, err := agentruntime.Install(t.Context(), agentruntime.Options{Dir: cache, Progress: servertest.LineLogger(t)}); err != nil {
		t.Fatalf("install the pinned runtime into %s: %v", cache, err)
	}
	prov := servertest.StartFakeProvider(t)
	root := gatewaytest.ReachableDir(t)
	ld, err := local.Open(local.Options{Root: root, Command: local.InstalledRuntime(cache), UIDRange: servertest.GatewayUIDs(t), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // occ never stops gateways on shutdown; the test does
		dirs, _ := filepath.Glob(filepath.Join(root, "namespaces", "*", "agents", "*"))
		for _, dir := range dirs {
			ref := compute.AgentRef{NamespaceID: filepath.Base(filepath.Dir(filepath.Dir(dir))), AgentID: filepath.Base(dir)}
			_ = ld.StopAgent(context.Background(), ref)
		}
		ld.Close()
	})
	listen := servertest.FreePort(t)
	port := listen[strings.LastIndex(listen, ":")+1:]
	console := "http://occ.localhost:" + port
	e := servertest.Boot(t, storetest.URL(t, "sqlite"), ld, func(m *server.Main) {
		servertest.WithNativeAdmin(m)
		m.Config.Listen, m.Config.PublicOrigin = listen, console
		m.Config.NativeAdminUI.RecheckInterval = config.Duration(25 * time.Second)
		m.Config.Worker.ConvergenceTimeout = config.Duration(5 * time.Minute)
	})
	w := &servertest.RealWorld{T: t, E: e, Ns: e.CreateNamespace("browser"), Prov: prov}
	r := e.Call("POST", w.Path("/secrets"), e.Admin, map[string]any{"name": "provider-key", "value": "sk-browser-" + servertest.RandomHex(8)})
	if r.Status != 201 {
		t.Fatalf("create secret = %d %v", r.Status, r.Body)
	}
	w.Secret = r.Data()["id"].(string)
	agent, _ := w.NewAgent("browser", "sk-good", nil)
	other, _ := w.NewAgent("other", "sk-good", nil) // never started: only its host matters
	began := time.Now()
	rev, _ := w.Deploy(agent)
	if st, _ := w.WaitDeployment(agent, rev, 5*time.Minute); st["status"] != "succeeded" {
		t.Fatalf("deployment = %v", st)
	}
	t.Logf("real gateway ready in %s", time.Since(began).Round(time.Second))
	avail := e.Call("GET", w.Path("/agents/"+agent+"/native-admin-ui"), e.Admin, nil).Data()
	url, _ := avail["url"].(string)
	if avail["status"] != "available" || !strings.HasSuffix(strings.TrimSuffix(url, "/"), "."+servertest.AdminDomain+":"+port) {
		t.Fatalf("availability = %v", avail)
	}
	otherURL := "http://" + (&servertest.AdminWorld{DeployWorld: &servertest.DeployWorld{AgentWorld: &servertest.AgentWorld{Ns: w.Ns}}, Inst: e.Call("GET", "/installation", e.Admin, nil).Data()["id"].(string)}).Host(other) + ":" + port + "/"
	// A person who may read and operate the Agent, not administer it.
	if r := e.Call("POST", "/iam/principals", e.Admin, map[string]any{"email": "reader@example.com", "name": "Reader", "password": "a long enough password"}); r.Status != 201 {
		t.Fatalf("principal = %d %v", r.Status, r.Body)
	} else {
		role := e.Call("POST", w.Path("/iam/roles"), e.Admin, map[string]any{"name": "reader", "permissions": []string{"agent:read", "agent:operate"}}).Data()["id"]
		if b := e.Call("POST", w.Path("/iam/bindings"), e.Admin, map[string]any{"principalId": r.Data()["id"], "roleId": role}); b.Status != 201 {
			t.Fatalf("binding = %d %v", b.Status, b.Body)
		}
	}

	alloc, cancel := chromedp.NewExecAllocator(t.Context(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.Flag("disable-dev-shm-usage", true))...)
	defer cancel()
	browser, cancel := chromedp.NewContext(alloc)
	defer cancel()
	ctx, cancel := context.WithTimeout(browser, 4*time.Minute)
	defer cancel()
	began = time.Now()

	// Sign in through occ's own endpoint, from the console's origin.
	if got := signInBrowser(t, ctx, console, "admin@occ.local", servertest.AdminPassword); got != 200 {
		t.Fatalf("sign-in in the browser = %d", got)
	}
	// The Control UI loads on the derived host and connects: its WebSocket
	// went through occ (audited) and the UI shows the connected shell.
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady("body")); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	// "OpenClaw Control" while it loads, "<agent> — OpenClaw" once connected.
	if !strings.Contains(title, "OpenClaw") {
		t.Fatalf("title = %q, body %s", title, bodyText(ctx))
	}
	servertest.WaitFor(t, "the Control UI's WebSocket through occ", func() bool {
		return len(e.Call("GET", "/audit-events?action=agents.native_admin.websocket.connect&resourceId="+agent, e.Admin, nil).List()) > 0
	})
	ep, ok := ld.GatewayEndpoint(t.Context(), compute.AgentRef{NamespaceID: w.Ns, AgentID: agent})
	if !ok || !strings.HasPrefix(ep.ProxyIdentity, "occ-") {
		t.Fatalf("gateway endpoint = %v (ok %v), want the identity occ asserts", ep.URL, ok)
	}
	var shown string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		shown = deepText(ctx)
		if controlUIConnected(shown, ep.ProxyIdentity) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Control UI did not show a connected gateway; it shows:\n%s", shown)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("Control UI connected %s after sign-in", time.Since(began).Round(time.Second))

	// A cookie planted for the admin domain by another Agent's host (its
	// page runs script) makes occ refuse instead of acting on it.
	if err := chromedp.Do(ctx, chromedp.Navigate(otherURL), chromedp.WaitReady("body"),
		chromedp.Evaluate[chromedp.Void](`document.cookie = "occ_shared=occa_planted; domain=`+servertest.AdminDomain+`; path=/"`)); err != nil {
		t.Fatal(err)
	}
	if st := pageStatus(t, ctx, url); st != "UNAUTHENTICATED" {
		t.Fatalf("with a planted cookie the Agent host answered %q", st)
	}

	// A person without agent:administer, in a browser of their own.
	reader, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	defer cancel()
	if got := signInBrowser(t, reader, console, "reader@example.com", "a long enough password"); got != 200 {
		t.Fatalf("reader sign-in = %d", got)
	}
	if st := pageStatus(t, reader, url); st != "FORBIDDEN" {
		t.Fatalf("the reader got %q", st)
	}

	// A forged identity header, without a session.
	forger, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	defer cancel()
	if _, err := chromedp.Call(forger, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(forger, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{
		"X-Occ-Identity": "occ-native-admin", "X-Forwarded-For": "198.51.100.9"}}); err != nil {
		t.Fatal(err)
	}
	if st := pageStatus(t, forger, url); st != "UNAUTHENTICATED" {
		t.Fatalf("a forged identity got %q", st)
	}
}

// signInBrowser opens the console origin and signs in with fetch, as the
// console does; the browser keeps the cookies.
func signInBrowser(t *testing.T, ctx context.Context, console, email, password string) int {
	t.Helper()
	js := fmt.Sprintf(`fetch("/api/auth/sign-in", {method: "POST", headers: {"Content-Type": "application/json"},
		body: JSON.stringify({email: %q, password: %q})}).then(r => r.status)`, email, password)
	if err := chromedp.Do(ctx, chromedp.Navigate(console+"/healthz"), chromedp.WaitReady("body")); err != nil {
		t.Fatal(err)
	}
	status, err := chromedp.Run(ctx, chromedp.Evaluate[int](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	return status
}

// pageStatus opens url and returns the occ error code the page shows ("" when
// it is not an occ error).
func pageStatus(t *testing.T, ctx context.Context, url string) string {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady("body")); err != nil {
		t.Fatal(err)
	}
	code, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { try { return JSON.parse(document.body.innerText).error.code } catch (e) { return "" } })()`))
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// deepText is the page's visible text, shadow roots included (the Control
// UI is made of web components).
func deepText(ctx context.Context) string {
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const out = [];
		const walk = (n) => {
			if (n.nodeName === "SCRIPT" || n.nodeName === "STYLE") return;
			if (n.nodeType === Node.TEXT_NODE) { const v = n.textContent.trim(); if (v) out.push(v); return; }
			if (n.shadowRoot) walk(n.shadowRoot);
			for (const c of n.childNodes) walk(c);
		};
		walk(document.body);
		return out.join("\n");
	})()`))
	return s
}

func bodyText(ctx context.Context) string { return deepText(ctx) }

// controlUIConnected reports whether the Control UI shows what it renders
// only after its WebSocket hello: the signed-in identity (the one occ
// asserts) and the connection status "Connected".
func controlUIConnected(text, identity string) bool {
	lines := strings.Split(text, "\n")
	return slices.Contains(lines, identity) && slices.Contains(lines, "Connected")
}
