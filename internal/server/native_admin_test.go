package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/store/storetest"
)

// The native admin installation of the tests: the console on occ.localhost,
// Agents on *.admin.occ.localhost, the shared cookie on occ.localhost (a
// *.localhost name resolves to loopback without DNS).
const (
	adminDomain  = "admin.occ.localhost"
	cookieDomain = "occ.localhost"
	adminOrigin  = "http://occ.localhost:8080"
)

// withNativeAdmin enables the native admin UI (a boot option), with a short
// WebSocket recheck.
func withNativeAdmin(m *server.Main) {
	m.Config.PublicOrigin = adminOrigin
	m.Config.NativeAdminUI = config.NativeAdminUI{Enabled: true, Domain: adminDomain, CookieDomain: cookieDomain,
		RecheckInterval: config.Duration(50 * time.Millisecond)}
}

// startedBefore is the local driver with the fake gateway whose endpoints
// hide the native admin origin of chosen Agents, as a gateway started
// before the installation enabled the native admin UI would.
type startedBefore struct {
	*local.Driver
	mu   sync.Mutex
	hide map[string]bool
}

func (d *startedBefore) GatewayEndpoint(ctx context.Context, a compute.AgentRef) (compute.Endpoint, bool) {
	ep, ok := d.Driver.GatewayEndpoint(ctx, a)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.hide[a.AgentID] {
		ep.NativeAdminOrigin = ""
	}
	return ep, ok
}

// adminWorld is an occ with the native admin UI on, a Namespace and
// deployable Agents, and a client that talks to Agent hosts.
type adminWorld struct {
	*deployWorld
	driver *startedBefore
	inst   string
	plain  *http.Client // for Agent hosts (not API responses)
}

func newAdminWorld(t *testing.T, url string) *adminWorld {
	root := gatewaytest.ReachableDir(t)
	d, err := local.Open(local.Options{Root: root, Command: local.BinaryCommand(fakeGatewayBinary(t)), UIDRange: gatewayUIDs(t)})
	if err != nil {
		t.Fatal(err)
	}
	// Last of all (cleanups run in reverse), a gateway that stopAll did not
	// stop (an Agent stopped or deleted while its work was in flight) is
	// killed before its directory goes.
	t.Cleanup(func() { killGatewayProcs(filepath.Join(root, "namespaces")) })
	drv := &startedBefore{Driver: d, hide: map[string]bool{}}
	e := boot(t, url, drv, withNativeAdmin)
	t.Cleanup(func() { stopAll(e, drv) })
	w := &adminWorld{deployWorld: &deployWorld{agentWorld: &agentWorld{e: e, ns: e.createNamespace("native")}}, driver: drv,
		plain: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	w.secret = e.call("POST", w.path("/secrets"), e.admin, map[string]any{"name": "k", "value": "sk-x"}).data()["id"].(string)
	w.cfg = e.call("POST", w.path("/configurations"), e.admin, map[string]any{"name": "c", "kind": "agent", "values": map[string]any{}}).data()["id"].(string)
	w.inst = e.call("GET", "/installation", e.admin, nil).data()["id"].(string)
	return w
}

// stopAll stops every Agent's gateway the driver runs.
func stopAll(e *env, d *startedBefore) {
	rows, err := e.m.Store().RunningAgents(context.Background())
	if err != nil {
		return
	}
	for _, r := range rows {
		_ = d.StopAgent(context.Background(), compute.AgentRef{NamespaceID: r.NamespaceID, AgentID: r.ID})
	}
}

// host is an Agent's derived browser host, computed here from the rule.
func (w *adminWorld) host(agent string) string {
	sum := sha256.Sum256([]byte(w.inst + "\x00" + w.ns + "\x00" + agent))
	return "agent-" + hex.EncodeToString(sum[:])[:32] + "." + adminDomain
}

func (w *adminWorld) origin(agent string) string { return "http://" + w.host(agent) + ":8080" }

// running deploys an Agent and waits until it serves.
func (w *adminWorld) running(t *testing.T, name string) string {
	agent, _ := w.newAgent(t, name, true)
	if st := w.deployWorld.waitDeployment(t, agent, w.deploy(t, agent)); st["status"] != "succeeded" {
		t.Fatalf("deployment = %v", st)
	}
	return agent
}

// availability is GET …/native-admin-ui as key.
func (w *adminWorld) availability(t *testing.T, key, agent string) resp {
	t.Helper()
	return w.e.call("GET", w.path("/agents/"+agent+"/native-admin-ui"), key, nil)
}

// user makes a person with the namespace role perms (targeted at target
// when set), signs them in, and returns the shared cookie, the console
// cookie and the binding.
func (w *adminWorld) user(t *testing.T, name string, perms []string, target string) (shared, console, binding string) {
	t.Helper()
	e := w.e
	email := name + "-" + strings.ToLower(target[len(target)-6:]) + "@example.com"
	p := e.call("POST", "/iam/principals", e.admin, map[string]any{"email": email, "name": name, "password": "a long enough password"})
	if p.Status != 201 {
		t.Fatalf("principal = %d %v", p.Status, p.Body)
	}
	if len(perms) > 0 {
		role := e.call("POST", w.path("/iam/roles"), e.admin, map[string]any{"name": name + "-" + target[len(target)-6:], "permissions": perms}).data()["id"].(string)
		r := e.call("POST", w.path("/iam/bindings"), e.admin, map[string]any{"principalId": p.data()["id"], "roleId": role,
			"target": map[string]any{"kind": "agent", "id": target}})
		if r.Status != 201 {
			t.Fatalf("binding = %d %v", r.Status, r.Body)
		}
		binding = r.data()["id"].(string)
	}
	shared, console = w.signIn(t, email, "a long enough password")
	return shared, console, binding
}

// signIn returns the shared and console cookies ("name=value") of a new
// session, checking the shared cookie's attributes.
func (w *adminWorld) signIn(t *testing.T, email, password string) (shared, console string) {
	t.Helper()
	r := w.e.call("POST", "/api/auth/sign-in", "", map[string]any{"email": email, "password": password})
	if r.Status != 200 {
		t.Fatalf("sign in = %d %v", r.Status, r.Body)
	}
	for _, line := range r.Header.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err != nil {
			t.Fatal(err)
		}
		switch c.Name {
		case "occ_shared":
			if c.Domain != cookieDomain || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" {
				t.Fatalf("shared cookie = %q", line)
			}
			shared = c.Name + "=" + c.Value
		case "occ_session":
			if c.Domain != "" {
				t.Fatalf("console cookie = %q", line)
			}
			console = c.Name + "=" + c.Value
		}
	}
	if shared == "" || console == "" {
		t.Fatalf("sign-in cookies = %q", r.Header.Values("Set-Cookie"))
	}
	return shared, console
}

// get sends a request to an Agent host through occ.
func (w *adminWorld) get(t *testing.T, method, host, path string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, w.e.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	res, err := w.plain.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

// TestNativeAdmin walks the availability statuses and the proxy's rules
// against the fake gateway in trusted-proxy mode.
func TestNativeAdmin(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, url string) {
		w := newAdminWorld(t, url)
		e := w.e

		// Availability: stopped before any deployment (no URL), available
		// with the derived URL once running.
		a, _ := w.newAgent(t, "alpha", true)
		if r := w.availability(t, e.admin, a); r.Status != 200 || r.data()["status"] != "stopped" || r.data()["url"] != nil {
			t.Fatalf("before deploy = %d %v", r.Status, r.Body)
		}
		if st := w.waitDeployment(t, a, w.deploy(t, a)); st["status"] != "succeeded" {
			t.Fatalf("deployment = %v", st)
		}
		if r := w.availability(t, e.admin, a); r.data()["status"] != "available" || r.data()["url"] != w.origin(a)+"/" {
			t.Fatalf("running = %v, want url %s/", r.Body, w.origin(a))
		}
		// `occ agents open` prints that URL; a stopped Agent's says why not.
		occ, _ := cliRunner(t)
		keyFile := filepath.Join(t.TempDir(), "key")
		if err := os.WriteFile(keyFile, []byte(e.admin), 0o600); err != nil {
			t.Fatal(err)
		}
		open := func(agent string) (string, string, int) {
			return occ("agents", "open", agent, "--url", e.base, "--key-file", keyFile, "-n", w.ns)
		}
		if out, errOut, code := open("alpha"); code != 0 || out != w.origin(a)+"/\n" {
			t.Fatalf("occ agents open = %d %q %q", code, out, errOut)
		}
		w.newAgent(t, "never-deployed", true)
		if _, errOut, code := open("never-deployed"); code != 1 || !strings.Contains(errOut, "is stopped") {
			t.Fatalf("occ agents open of a stopped Agent = %d %q", code, errOut)
		}
		// unavailable: desired running without an active revision.
		u, _ := w.newAgent(t, "pending", true)
		if _, err := e.m.Store().DB().Exec(`UPDATE agents SET desired_state = 'running' WHERE id = $1`, u); err != nil {
			t.Fatal(err)
		}
		if r := w.availability(t, e.admin, u); r.data()["status"] != "unavailable" {
			t.Fatalf("no active revision = %v", r.Body)
		}
		// unsupported: a gateway started before the toggle.
		b := w.running(t, "beta")
		w.driver.mu.Lock()
		w.driver.hide[b] = true
		w.driver.mu.Unlock()
		if r := w.availability(t, e.admin, b); r.data()["status"] != "unsupported" {
			t.Fatalf("gateway without the native admin origin = %v", r.Body)
		}
		w.driver.mu.Lock()
		w.driver.hide[b] = false
		w.driver.mu.Unlock()

		adminShared, adminConsole := w.signIn(t, "admin@occ.local", adminPassword)
		host := w.host(a)

		// Without a session, with the console's cookie, with a tampered or
		// a duplicated shared cookie: 401.
		tampered := adminShared[:len(adminShared)-1] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", adminShared[len(adminShared)-1])+1)%16])
		for name, cookie := range map[string]string{"none": "", "console token in the shared cookie": "occ_shared=" + strings.TrimPrefix(adminConsole, "occ_session="),
			"tampered": tampered, "planted beside occ's": adminShared + "; occ_shared=occa_forged", "console cookie": adminConsole} {
			if st, _, body := w.get(t, "GET", host, "/", "Cookie", cookie); st != 401 {
				t.Errorf("%s: %d %s, want 401", name, st, body)
			}
		}
		// The shared cookie is no console credential.
		if r := e.call("GET", "/api/auth/session", "", nil, "Cookie", adminShared); r.data()["authenticated"] != false {
			t.Fatalf("the API accepted the shared cookie: %v", r.Body)
		}

		// The Control UI loads through the proxy.
		if st, _, body := w.get(t, "GET", host, "/", "Cookie", adminShared); st != 200 || !strings.Contains(body, "OpenClaw Control (fake)") {
			t.Fatalf("control UI = %d %s", st, body)
		}
		// Every host below the admin domain is the proxy's: API paths never
		// reach the API there.
		if st, _, body := w.get(t, "GET", host, "/namespaces", "Cookie", adminShared, "Authorization", "Bearer "+e.admin); st != 404 || strings.Contains(body, `"data"`) {
			t.Fatalf("API path on an Agent host = %d %s", st, body)
		}

		// What reaches the gateway: no cookies or credentials, no forged
		// identity, forwarding or scope headers; occ's identity, a
		// non-loopback client and the public host.
		st, _, body := w.get(t, "GET", host, "/__fake/headers", "Cookie", adminShared+"; other=1", "Authorization", "Bearer "+e.admin,
			"X-Occ-Identity", "forged", "X-Forwarded-For", "10.9.9.9", "X-Forwarded-User", "forged", "Forwarded", "for=10.9.9.9",
			"X-Openclaw-Scopes", "operator.admin", "X-Real-Ip", "10.9.9.9")
		var seen struct {
			Host    string
			Headers http.Header
		}
		if st != 200 || json.Unmarshal([]byte(body), &seen) != nil {
			t.Fatalf("headers = %d %s", st, body)
		}
		h := seen.Headers
		ep, _ := w.driver.GatewayEndpoint(context.Background(), compute.AgentRef{NamespaceID: w.ns, AgentID: a})
		if !strings.HasPrefix(ep.ProxyIdentity, "occ-") || len(ep.ProxyIdentity) != 36 {
			t.Fatalf("the identity occ asserts to the gateway = %q, want occ-<32 hex> derived from the Agent's secret", ep.ProxyIdentity)
		}
		if seen.Host != host || h.Get("Cookie") != "" || h.Get("Authorization") != "" || len(h.Values("X-Occ-Identity")) != 1 ||
			h.Get("X-Occ-Identity") != ep.ProxyIdentity || h.Get("X-Forwarded-For") != "192.0.2.1" || h.Get("Forwarded") != "" ||
			h.Get("X-Forwarded-User") != "" || h.Get("X-Openclaw-Scopes") != "" || h.Get("X-Real-Ip") != "" {
			t.Fatalf("the gateway saw %s", body)
		}
		if strings.Contains(body, strings.TrimPrefix(adminShared, "occ_shared=")) || strings.Contains(body, e.admin) {
			t.Fatal("a credential reached the gateway")
		}
		// A forged identity header without a session is refused by occ.
		// Straight to the gateway (from loopback, which it trusts as its
		// proxy) a forged identity is refused too, with or without a
		// proxy's forwarding: it trusts only the identity derived from the
		// Agent's secret, which differs per Agent.
		if st, _, _ := w.get(t, "GET", host, "/", "X-Occ-Identity", ep.ProxyIdentity, "X-Forwarded-For", "198.51.100.9"); st != 401 {
			t.Fatalf("forged identity through occ = %d, want 401", st)
		}
		for _, forged := range [][]string{
			{"X-Occ-Identity", "occ-native-admin"},
			{"X-Occ-Identity", "occ-native-admin", "X-Forwarded-For", "198.51.100.9"},
			{"X-Occ-Identity", "occ-00000000000000000000000000000000", "X-Forwarded-For", "198.51.100.9"},
		} {
			req, _ := http.NewRequest("GET", "http"+strings.TrimPrefix(ep.URL, "ws")+"/", nil)
			for i := 0; i < len(forged); i += 2 {
				req.Header.Set(forged[i], forged[i+1])
			}
			if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 403 {
				t.Fatalf("forged identity %v at the gateway = %v %v, want 403", forged, res, err)
			} else {
				res.Body.Close()
			}
		}

		// Set-Cookie with a Domain never reaches the browser; host-only does.
		_, hdr, _ := w.get(t, "GET", host, "/__fake/set-cookie?domain="+cookieDomain, "Cookie", adminShared)
		if c := hdr.Values("Set-Cookie"); len(c) != 1 || !strings.HasPrefix(c[0], "fake_host=") {
			t.Fatalf("Set-Cookie through the proxy = %q", c)
		}
		if !strings.Contains(strings.Join(hdr.Values("Content-Security-Policy"), ","), "worker-src 'none'") {
			t.Fatalf("CSP = %q", hdr.Values("Content-Security-Policy"))
		}
		// Unsafe methods need the Agent's Origin; service workers are refused.
		if st, _, _ := w.get(t, "POST", host, "/", "Cookie", adminShared); st != 403 {
			t.Fatalf("POST without Origin = %d", st)
		}
		if st, _, _ := w.get(t, "POST", host, "/", "Cookie", adminShared, "Origin", adminOrigin); st != 403 {
			t.Fatalf("POST with the console's Origin = %d", st)
		}
		if st, _, _ := w.get(t, "POST", host, "/", "Cookie", adminShared, "Origin", w.origin(a)); st != 405 {
			t.Fatalf("POST with the Agent's Origin = %d, want the gateway's 405", st)
		}
		if st, _, _ := w.get(t, "GET", host, "/sw.js", "Cookie", adminShared, "Service-Worker", "script"); st != 403 {
			t.Fatalf("service worker script = %d", st)
		}
		// Unknown hosts.
		for _, hh := range []string{"agent-00000000000000000000000000000000." + adminDomain, "nope." + adminDomain, "x.agent-1." + adminDomain} {
			if st, _, _ := w.get(t, "GET", hh, "/", "Cookie", adminShared); st != 404 {
				t.Errorf("host %s = %d, want 404", hh, st)
			}
		}

		// People: read and operate are not enough (403 on the availability
		// route and the host); nothing on the Agent hides it (404); a grant
		// on another Agent does not open this one.
		readerShared, _, _ := w.user(t, "reader", []string{"agent:read", "agent:operate"}, a)
		reader, _ := e.principal(grant{perms: nsPerms("agent:read", "agent:operate"), namespace: w.ns})
		if r := w.availability(t, reader, a); r.Status != 403 {
			t.Fatalf("availability for a reader = %d", r.Status)
		}
		if st, _, _ := w.get(t, "GET", host, "/", "Cookie", readerShared); st != 403 {
			t.Fatalf("host for a reader = %d, want 403", st)
		}
		otherShared, _, _ := w.user(t, "other", []string{"agent:read", "agent:administer"}, b)
		st, _, hidden := w.get(t, "GET", host, "/", "Cookie", otherShared)
		if st != 404 {
			t.Fatalf("another Agent's administrator on this host = %d, want 404", st)
		}
		// The 404 of a host that exists but is hidden says exactly what the
		// 404 of a host that does not exist says.
		_, _, unknown := w.get(t, "GET", "agent-00000000000000000000000000000000."+adminDomain, "/", "Cookie", otherShared)
		if errorOf(hidden) != errorOf(unknown) {
			t.Fatalf("hidden host answers %s; unknown host %s: existence leaks", hidden, unknown)
		}
		if st, _, _ := w.get(t, "GET", w.host(b), "/", "Cookie", otherShared); st != 200 {
			t.Fatalf("their own Agent's host = %d", st)
		}

		// A WebSocket: exact Origin, identity asserted by occ (the fake
		// grants the trusted-proxy identity operator.admin), rechecked and
		// closed when the grant goes; connect and close audited.
		userShared, _, binding := w.user(t, "admin", []string{"agent:read", "agent:administer"}, a)
		wsURL := "ws://" + strings.TrimPrefix(e.base, "http://") + "/"
		if _, res, err := websocket.Dial(context.Background(), wsURL, &websocket.DialOptions{Host: host,
			HTTPHeader: http.Header{"Cookie": {userShared}, "Origin": {adminOrigin}}}); err == nil || res == nil || res.StatusCode != 403 {
			t.Fatalf("WebSocket with the console's Origin: %v", err)
		}
		c, _, err := websocket.Dial(context.Background(), wsURL, &websocket.DialOptions{Host: host,
			HTTPHeader: http.Header{"Cookie": {userShared}, "Origin": {w.origin(a)}}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseNow()
		hello := uiConnect(t, c)
		if hello["auth"].(map[string]any)["method"] != "trusted-proxy" || !strings.Contains(toJSON(hello["auth"]), "operator.admin") {
			t.Fatalf("hello through the proxy = %v", hello["auth"])
		}
		// A native edit through the UI's connection changes no revision.
		revs := len(e.call("GET", w.path("/agents/"+a+"/revisions"), e.admin, nil).list())
		if res := uiCall(t, c, "agents.files.set", map[string]any{"agentId": "main", "name": "SOUL.md", "content": "edited natively\n"}); res["ok"] != true {
			t.Fatalf("native edit = %v", res)
		}
		if n := len(e.call("GET", w.path("/agents/"+a+"/revisions"), e.admin, nil).list()); n != revs {
			t.Fatalf("revisions %d → %d after a native edit", revs, n)
		}
		if r := e.call("DELETE", w.path("/iam/bindings/"+binding), e.admin, nil); r.Status != 204 {
			t.Fatalf("remove grant = %d %v", r.Status, r.Body)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		for {
			if _, _, err := c.Read(ctx); err != nil {
				if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
					t.Fatalf("WebSocket ended with %v, want occ's policy-violation close", err)
				}
				break
			}
		}
		waitFor(t, "the close audit", func() bool {
			evs := e.call("GET", "/audit-events?action=agents.native_admin.websocket.close&resourceId="+a, e.admin, nil).list()
			return len(evs) == 1 && evs[0].(map[string]any)["details"].(map[string]any)["closeReason"] == "revocation"
		})
		if n := len(e.call("GET", "/audit-events?action=agents.native_admin.websocket.connect&resourceId="+a, e.admin, nil).list()); n != 1 {
			t.Fatalf("connect audits = %d", n)
		}

		// A redeploy applies the managed revision again and keeps the
		// gateway's local state (the native edit is still there).
		if st := w.waitDeployment(t, a, w.deploy(t, a)); st["status"] != "succeeded" {
			t.Fatalf("redeploy = %v", st)
		}
		if r := e.call("GET", w.path("/agents/"+a+"/workspace/files/SOUL.md"), e.admin, nil); r.data()["content"] != "edited natively\n" {
			t.Fatalf("after redeploy SOUL.md = %v", r.Body)
		}

		// Signing out ends the shared cookie too; a stopped Agent's host no
		// longer serves.
		if r := e.call("POST", "/api/auth/sign-out", "", nil, "Cookie", adminConsole, "Origin", adminOrigin); r.Status != 200 ||
			!strings.Contains(strings.Join(r.Header.Values("Set-Cookie"), "\n"), "occ_shared=; Path=/; Domain="+cookieDomain) {
			t.Fatalf("sign out = %d %q", r.Status, r.Header.Values("Set-Cookie"))
		}
		if st, _, _ := w.get(t, "GET", host, "/", "Cookie", adminShared); st != 401 {
			t.Fatalf("shared cookie after sign-out = %d", st)
		}
		fresh, _ := w.signIn(t, "admin@occ.local", adminPassword)
		if r := e.call("POST", w.path("/agents/"+a+"/stop"), e.admin, nil); r.Status != 202 {
			t.Fatalf("stop = %d", r.Status)
		}
		waitFor(t, "the Agent stopped", func() bool { return w.availability(t, e.admin, a).data()["status"] == "stopped" })
		if st, _, _ := w.get(t, "GET", host, "/", "Cookie", fresh); st == 200 {
			t.Fatal("a stopped Agent's host still serves")
		}
	})
}

// TestNativeAdminDisabled: without the toggle the route says disabled (to
// an administrator only) and sign-in sets no shared cookie.
func TestNativeAdminDisabled(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, url string) {
		d := newDeployWorld(t, url)
		e := d.e
		if r := e.call("GET", d.path("/agents/"+d.agent+"/native-admin-ui"), e.admin, nil); r.Status != 200 || r.data()["status"] != "disabled" || r.data()["url"] != nil {
			t.Fatalf("disabled = %d %v", r.Status, r.Body)
		}
		reader, _ := e.principal(grant{perms: nsPerms("agent:read"), namespace: d.ns})
		if r := e.call("GET", d.path("/agents/"+d.agent+"/native-admin-ui"), reader, nil); r.Status != 403 {
			t.Fatalf("disabled, for a reader = %d", r.Status)
		}
		r := e.call("POST", "/api/auth/sign-in", "", map[string]any{"email": "admin@occ.local", "password": adminPassword})
		if c := r.Header.Values("Set-Cookie"); len(c) != 1 || strings.Contains(c[0], "occ_shared") {
			t.Fatalf("sign-in cookies without the toggle = %q", c)
		}
	})
}

// nsPerms parses permissions.
func nsPerms(names ...string) []occ.Permission {
	var out []occ.Permission
	for _, n := range names {
		p, err := occ.ParsePermission(n)
		if err != nil {
			panic(err)
		}
		out = append(out, p)
	}
	return out
}

// uiConnect completes the gateway handshake as the Control UI would (after
// connect.challenge) and returns the hello-ok payload.
func uiConnect(t *testing.T, c *websocket.Conn) map[string]any {
	t.Helper()
	res := uiCall(t, c, "connect", map[string]any{"minProtocol": 4, "maxProtocol": 4, "role": "operator",
		"client": map[string]any{"id": "openclaw-control-ui", "version": "test", "platform": "web", "mode": "ui"},
		"scopes": []string{"operator.read", "operator.write", "operator.admin"}})
	if res["ok"] != true {
		t.Fatalf("connect through the proxy = %v", res)
	}
	return res["payload"].(map[string]any)
}

// uiCall sends one request and returns its response frame (events are
// skipped).
func uiCall(t *testing.T, c *websocket.Conn, method string, params any) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	id := occ.NewUUID()
	b, _ := json.Marshal(map[string]any{"type": "req", "id": id, "method": method, "params": params})
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	for {
		_, raw, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		var f map[string]any
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		if f["type"] == "res" && f["id"] == id {
			return f
		}
	}
}

// errorOf is the error object of an error envelope, without the request's
// own ID.
func errorOf(body string) string {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal([]byte(body), &env) != nil {
		return body
	}
	return string(env.Error)
}
