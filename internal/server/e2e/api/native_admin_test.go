package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

func newAdminWorld(t *testing.T, url string) *servertest.AdminWorld {
	root := gatewaytest.ReachableDir(t)
	d, err := local.Open(local.Options{Root: root, Command: local.BinaryCommand(servertest.FakeGatewayBinary(t)), UIDRange: servertest.GatewayUIDs(t)})
	if err != nil {
		t.Fatal(err)
	}
	// Last of all (cleanups run in reverse), a gateway that stopAll did not
	// stop (an Agent stopped or deleted while its work was in flight) is
	// killed before its directory goes.
	t.Cleanup(func() { servertest.KillGatewayProcs(filepath.Join(root, "namespaces")) })
	drv := &servertest.StartedBefore{Driver: d, Hide: map[string]bool{}}
	e := servertest.Boot(t, url, drv, servertest.WithNativeAdmin)
	t.Cleanup(func() { stopAll(e, drv) })
	w := &servertest.AdminWorld{DeployWorld: &servertest.DeployWorld{AgentWorld: &servertest.AgentWorld{E: e, Ns: e.CreateNamespace("native")}}, Driver: drv,
		Plain: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	w.Secret = e.Call("POST", w.Path("/secrets"), e.Admin, map[string]any{"name": "k", "value": "sk-x"}).Data()["id"].(string)
	w.Cfg = e.Call("POST", w.Path("/configurations"), e.Admin, map[string]any{"name": "c", "kind": "agent", "values": map[string]any{}}).Data()["id"].(string)
	w.Inst = e.Call("GET", "/installation", e.Admin, nil).Data()["id"].(string)
	return w
}

// stopAll stops every Agent's gateway the driver runs.
func stopAll(e *servertest.Env, d *servertest.StartedBefore) {
	rows, err := e.M.Store().RunningAgents(context.Background())
	if err != nil {
		return
	}
	for _, r := range rows {
		_ = d.StopAgent(context.Background(), compute.AgentRef{NamespaceID: r.NamespaceID, AgentID: r.ID})
	}
}

// TestNativeAdmin walks the availability statuses and the proxy's rules
// against the fake gateway in trusted-proxy mode.
func TestNativeAdmin(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		w := newAdminWorld(t, url)
		e := w.E

		// Availability: stopped before any deployment (no URL), available
		// with the derived URL once running.
		a, _ := w.NewAgent(t, "alpha", true)
		if r := w.Availability(t, e.Admin, a); r.Status != 200 || r.Data()["status"] != "stopped" || r.Data()["url"] != nil {
			t.Fatalf("before deploy = %d %v", r.Status, r.Body)
		}
		if st := w.WaitDeployment(t, a, w.Deploy(t, a)); st["status"] != "succeeded" {
			t.Fatalf("deployment = %v", st)
		}
		if r := w.Availability(t, e.Admin, a); r.Data()["status"] != "available" || r.Data()["url"] != w.Origin(a)+"/" {
			t.Fatalf("running = %v, want url %s/", r.Body, w.Origin(a))
		}
		// `occ agents open` prints that URL; a stopped Agent's says why not.
		occ, _ := servertest.CliRunner(t)
		keyFile := filepath.Join(t.TempDir(), "key")
		if err := os.WriteFile(keyFile, []byte(e.Admin), 0o600); err != nil {
			t.Fatal(err)
		}
		open := func(agent string) (string, string, int) {
			return occ("agents", "open", agent, "--url", e.Base, "--key-file", keyFile, "-n", w.Ns)
		}
		if out, errOut, code := open("alpha"); code != 0 || out != w.Origin(a)+"/\n" {
			t.Fatalf("occ agents open = %d %q %q", code, out, errOut)
		}
		w.NewAgent(t, "never-deployed", true)
		if _, errOut, code := open("never-deployed"); code != 1 || !strings.Contains(errOut, "is stopped") {
			t.Fatalf("occ agents open of a stopped Agent = %d %q", code, errOut)
		}
		// unavailable: desired running without an active revision.
		u, _ := w.NewAgent(t, "pending", true)
		if _, err := e.M.Store().DB().Exec(`UPDATE agents SET desired_state = 'running' WHERE id = $1`, u); err != nil {
			t.Fatal(err)
		}
		if r := w.Availability(t, e.Admin, u); r.Data()["status"] != "unavailable" {
			t.Fatalf("no active revision = %v", r.Body)
		}
		// unsupported: a gateway started before the toggle.
		b := w.Running(t, "beta")
		w.Driver.Mu.Lock()
		w.Driver.Hide[b] = true
		w.Driver.Mu.Unlock()
		if r := w.Availability(t, e.Admin, b); r.Data()["status"] != "unsupported" {
			t.Fatalf("gateway without the native admin origin = %v", r.Body)
		}
		w.Driver.Mu.Lock()
		w.Driver.Hide[b] = false
		w.Driver.Mu.Unlock()

		adminShared, adminConsole := w.SignIn(t, "admin@occ.local", servertest.AdminPassword)
		host := w.Host(a)

		// Without a session, with the console's cookie, with a tampered or
		// a duplicated shared cookie: 401.
		tampered := adminShared[:len(adminShared)-1] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", adminShared[len(adminShared)-1])+1)%16])
		for name, cookie := range map[string]string{"none": "", "console token in the shared cookie": "occ_shared=" + strings.TrimPrefix(adminConsole, "occ_session="),
			"tampered": tampered, "planted beside occ's": adminShared + "; occ_shared=occa_forged", "console cookie": adminConsole} {
			if st, _, body := w.Get(t, "GET", host, "/", "Cookie", cookie); st != 401 {
				t.Errorf("%s: %d %s, want 401", name, st, body)
			}
		}
		// The shared cookie is no console credential.
		if r := e.Call("GET", "/api/auth/session", "", nil, "Cookie", adminShared); r.Data()["authenticated"] != false {
			t.Fatalf("the API accepted the shared cookie: %v", r.Body)
		}

		// The Control UI loads through the proxy.
		if st, _, body := w.Get(t, "GET", host, "/", "Cookie", adminShared); st != 200 || !strings.Contains(body, "OpenClaw Control (fake)") {
			t.Fatalf("control UI = %d %s", st, body)
		}
		// Every host below the admin domain is the proxy's: API paths never
		// reach the API there.
		if st, _, body := w.Get(t, "GET", host, "/namespaces", "Cookie", adminShared, "Authorization", "Bearer "+e.Admin); st != 404 || strings.Contains(body, `"data"`) {
			t.Fatalf("API path on an Agent host = %d %s", st, body)
		}

		// What reaches the gateway: no cookies or credentials, no forged
		// identity, forwarding or scope headers; occ's identity, a
		// non-loopback client and the public host.
		st, _, body := w.Get(t, "GET", host, "/__fake/headers", "Cookie", adminShared+"; other=1", "Authorization", "Bearer "+e.Admin,
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
		ep, _ := w.Driver.GatewayEndpoint(context.Background(), compute.AgentRef{NamespaceID: w.Ns, AgentID: a})
		if !strings.HasPrefix(ep.ProxyIdentity, "occ-") || len(ep.ProxyIdentity) != 36 {
			t.Fatalf("the identity occ asserts to the gateway = %q, want occ-<32 hex> derived from the Agent's secret", ep.ProxyIdentity)
		}
		if seen.Host != host || h.Get("Cookie") != "" || h.Get("Authorization") != "" || len(h.Values("X-Occ-Identity")) != 1 ||
			h.Get("X-Occ-Identity") != ep.ProxyIdentity || h.Get("X-Forwarded-For") != "192.0.2.1" || h.Get("Forwarded") != "" ||
			h.Get("X-Forwarded-User") != "" || h.Get("X-Openclaw-Scopes") != "" || h.Get("X-Real-Ip") != "" {
			t.Fatalf("the gateway saw %s", body)
		}
		if strings.Contains(body, strings.TrimPrefix(adminShared, "occ_shared=")) || strings.Contains(body, e.Admin) {
			t.Fatal("a credential reached the gateway")
		}
		// A forged identity header without a session is refused by occ.
		// Straight to the gateway (from loopback, which it trusts as its
		// proxy) a forged identity is refused too, with or without a
		// proxy's forwarding: it trusts only the identity derived from the
		// Agent's secret, which differs per Agent.
		if st, _, _ := w.Get(t, "GET", host, "/", "X-Occ-Identity", ep.ProxyIdentity, "X-Forwarded-For", "198.51.100.9"); st != 401 {
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
		_, hdr, _ := w.Get(t, "GET", host, "/__fake/set-cookie?domain="+servertest.CookieDomain, "Cookie", adminShared)
		if c := hdr.Values("Set-Cookie"); len(c) != 1 || !strings.HasPrefix(c[0], "fake_host=") {
			t.Fatalf("Set-Cookie through the proxy = %q", c)
		}
		if !strings.Contains(strings.Join(hdr.Values("Content-Security-Policy"), ","), "worker-src 'none'") {
			t.Fatalf("CSP = %q", hdr.Values("Content-Security-Policy"))
		}
		// Unsafe methods need the Agent's Origin; service workers are refused.
		if st, _, _ := w.Get(t, "POST", host, "/", "Cookie", adminShared); st != 403 {
			t.Fatalf("POST without Origin = %d", st)
		}
		if st, _, _ := w.Get(t, "POST", host, "/", "Cookie", adminShared, "Origin", servertest.AdminOrigin); st != 403 {
			t.Fatalf("POST with the console's Origin = %d", st)
		}
		if st, _, _ := w.Get(t, "POST", host, "/", "Cookie", adminShared, "Origin", w.Origin(a)); st != 405 {
			t.Fatalf("POST with the Agent's Origin = %d, want the gateway's 405", st)
		}
		if st, _, _ := w.Get(t, "GET", host, "/sw.js", "Cookie", adminShared, "Service-Worker", "script"); st != 403 {
			t.Fatalf("service worker script = %d", st)
		}
		// Unknown hosts.
		for _, hh := range []string{"agent-00000000000000000000000000000000." + servertest.AdminDomain, "nope." + servertest.AdminDomain, "x.agent-1." + servertest.AdminDomain} {
			if st, _, _ := w.Get(t, "GET", hh, "/", "Cookie", adminShared); st != 404 {
				t.Errorf("host %s = %d, want 404", hh, st)
			}
		}

		// People: read and operate are not enough (403 on the availability
		// route and the host); nothing on the Agent hides it (404); a grant
		// on another Agent does not open this one.
		readerShared, _, _ := w.User(t, "reader", []string{"agent:read", "agent:operate"}, a)
		reader, _ := e.Principal(servertest.Grant{Perms: nsPerms("agent:read", "agent:operate"), Namespace: w.Ns})
		if r := w.Availability(t, reader, a); r.Status != 403 {
			t.Fatalf("availability for a reader = %d", r.Status)
		}
		if st, _, _ := w.Get(t, "GET", host, "/", "Cookie", readerShared); st != 403 {
			t.Fatalf("host for a reader = %d, want 403", st)
		}
		otherShared, _, _ := w.User(t, "other", []string{"agent:read", "agent:administer"}, b)
		st, _, hidden := w.Get(t, "GET", host, "/", "Cookie", otherShared)
		if st != 404 {
			t.Fatalf("another Agent's administrator on this host = %d, want 404", st)
		}
		// The 404 of a host that exists but is hidden says exactly what the
		// 404 of a host that does not exist says.
		_, _, unknown := w.Get(t, "GET", "agent-00000000000000000000000000000000."+servertest.AdminDomain, "/", "Cookie", otherShared)
		if errorOf(hidden) != errorOf(unknown) {
			t.Fatalf("hidden host answers %s; unknown host %s: existence leaks", hidden, unknown)
		}
		if st, _, _ := w.Get(t, "GET", w.Host(b), "/", "Cookie", otherShared); st != 200 {
			t.Fatalf("their own Agent's host = %d", st)
		}

		// A WebSocket: exact Origin, identity asserted by occ (the fake
		// grants the trusted-proxy identity operator.admin), rechecked and
		// closed when the grant goes; connect and close audited.
		userShared, _, binding := w.User(t, "admin", []string{"agent:read", "agent:administer"}, a)
		wsURL := "ws://" + strings.TrimPrefix(e.Base, "http://") + "/"
		if _, res, err := websocket.Dial(context.Background(), wsURL, &websocket.DialOptions{Host: host,
			HTTPHeader: http.Header{"Cookie": {userShared}, "Origin": {servertest.AdminOrigin}}}); err == nil || res == nil || res.StatusCode != 403 {
			t.Fatalf("WebSocket with the console's Origin: %v", err)
		}
		c, _, err := websocket.Dial(context.Background(), wsURL, &websocket.DialOptions{Host: host,
			HTTPHeader: http.Header{"Cookie": {userShared}, "Origin": {w.Origin(a)}}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseNow()
		hello := uiConnect(t, c)
		if hello["auth"].(map[string]any)["method"] != "trusted-proxy" || !strings.Contains(servertest.ToJSON(hello["auth"]), "operator.admin") {
			t.Fatalf("hello through the proxy = %v", hello["auth"])
		}
		// A native edit through the UI's connection changes no revision.
		revs := len(e.Call("GET", w.Path("/agents/"+a+"/revisions"), e.Admin, nil).List())
		if res := uiCall(t, c, "agents.files.set", map[string]any{"agentId": "main", "name": "SOUL.md", "content": "edited natively\n"}); res["ok"] != true {
			t.Fatalf("native edit = %v", res)
		}
		if n := len(e.Call("GET", w.Path("/agents/"+a+"/revisions"), e.Admin, nil).List()); n != revs {
			t.Fatalf("revisions %d → %d after a native edit", revs, n)
		}
		if r := e.Call("DELETE", w.Path("/iam/bindings/"+binding), e.Admin, nil); r.Status != 204 {
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
		servertest.WaitFor(t, "the close audit", func() bool {
			evs := e.Call("GET", "/audit-events?action=agents.native_admin.websocket.close&resourceId="+a, e.Admin, nil).List()
			return len(evs) == 1 && evs[0].(map[string]any)["details"].(map[string]any)["closeReason"] == "revocation"
		})
		if n := len(e.Call("GET", "/audit-events?action=agents.native_admin.websocket.connect&resourceId="+a, e.Admin, nil).List()); n != 1 {
			t.Fatalf("connect audits = %d", n)
		}

		// A redeploy applies the managed revision again and keeps the
		// gateway's local state (the native edit is still there).
		if st := w.WaitDeployment(t, a, w.Deploy(t, a)); st["status"] != "succeeded" {
			t.Fatalf("redeploy = %v", st)
		}
		if r := e.Call("GET", w.Path("/agents/"+a+"/workspace/files/SOUL.md"), e.Admin, nil); r.Data()["content"] != "edited natively\n" {
			t.Fatalf("after redeploy SOUL.md = %v", r.Body)
		}

		// Signing out ends the shared cookie too; a stopped Agent's host no
		// longer serves.
		if r := e.Call("POST", "/api/auth/sign-out", "", nil, "Cookie", adminConsole, "Origin", servertest.AdminOrigin); r.Status != 200 ||
			!strings.Contains(strings.Join(r.Header.Values("Set-Cookie"), "\n"), "occ_shared=; Path=/; Domain="+servertest.CookieDomain) {
			t.Fatalf("sign out = %d %q", r.Status, r.Header.Values("Set-Cookie"))
		}
		if st, _, _ := w.Get(t, "GET", host, "/", "Cookie", adminShared); st != 401 {
			t.Fatalf("shared cookie after sign-out = %d", st)
		}
		fresh, _ := w.SignIn(t, "admin@occ.local", servertest.AdminPassword)
		if r := e.Call("POST", w.Path("/agents/"+a+"/stop"), e.Admin, nil); r.Status != 202 {
			t.Fatalf("stop = %d", r.Status)
		}
		servertest.WaitFor(t, "the Agent stopped", func() bool { return w.Availability(t, e.Admin, a).Data()["status"] == "stopped" })
		if st, _, _ := w.Get(t, "GET", host, "/", "Cookie", fresh); st == 200 {
			t.Fatal("a stopped Agent's host still serves")
		}
	})
}

// TestNativeAdminDisabled: without the toggle the route says disabled (to
// an administrator only) and sign-in sets no shared cookie.
func TestNativeAdminDisabled(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		d := newDeployWorld(t, url)
		e := d.E
		if r := e.Call("GET", d.Path("/agents/"+d.Agent+"/native-admin-ui"), e.Admin, nil); r.Status != 200 || r.Data()["status"] != "disabled" || r.Data()["url"] != nil {
			t.Fatalf("disabled = %d %v", r.Status, r.Body)
		}
		reader, _ := e.Principal(servertest.Grant{Perms: nsPerms("agent:read"), Namespace: d.Ns})
		if r := e.Call("GET", d.Path("/agents/"+d.Agent+"/native-admin-ui"), reader, nil); r.Status != 403 {
			t.Fatalf("disabled, for a reader = %d", r.Status)
		}
		r := e.Call("POST", "/api/auth/sign-in", "", map[string]any{"email": "admin@occ.local", "password": servertest.AdminPassword})
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
