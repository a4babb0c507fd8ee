package servertest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/server"
)

// The native admin installation of the tests: the console on occ.localhost,
// Agents on *.admin.occ.localhost, the shared cookie on occ.localhost (a
// *.localhost name resolves to loopback without DNS).
const (
	AdminDomain  = "admin.occ.localhost"
	CookieDomain = "occ.localhost"
	AdminOrigin  = "http://occ.localhost:8080"
)

// withNativeAdmin enables the native admin UI (a boot option), with a short
// WebSocket recheck.
func WithNativeAdmin(m *server.Main) {
	m.Config.PublicOrigin = AdminOrigin
	m.Config.NativeAdminUI = config.NativeAdminUI{Enabled: true, Domain: AdminDomain, CookieDomain: CookieDomain,
		RecheckInterval: config.Duration(50 * time.Millisecond)}
}

// startedBefore is the local driver with the fake gateway whose endpoints
// hide the native admin origin of chosen Agents, as a gateway started
// before the installation enabled the native admin UI would.
type StartedBefore struct {
	*local.Driver
	Mu   sync.Mutex
	Hide map[string]bool
}

func (d *StartedBefore) GatewayEndpoint(ctx context.Context, a compute.AgentRef) (compute.Endpoint, bool) {
	ep, ok := d.Driver.GatewayEndpoint(ctx, a)
	d.Mu.Lock()
	defer d.Mu.Unlock()
	if d.Hide[a.AgentID] {
		ep.NativeAdminOrigin = ""
	}
	return ep, ok
}

// adminWorld is an occ with the native admin UI on, a Namespace and
// deployable Agents, and a client that talks to Agent hosts.
type AdminWorld struct {
	*DeployWorld
	Driver *StartedBefore
	Inst   string
	Plain  *http.Client // for Agent hosts (not API responses)
}

// host is an Agent's derived browser host, computed here from the rule.
func (w *AdminWorld) Host(agent string) string {
	sum := sha256.Sum256([]byte(w.Inst + "\x00" + w.Ns + "\x00" + agent))
	return "agent-" + hex.EncodeToString(sum[:])[:32] + "." + AdminDomain
}

func (w *AdminWorld) Origin(agent string) string { return "http://" + w.Host(agent) + ":8080" }

// running deploys an Agent and waits until it serves.
func (w *AdminWorld) Running(t *testing.T, name string) string {
	agent, _ := w.NewAgent(t, name, true)
	if st := w.DeployWorld.WaitDeployment(t, agent, w.Deploy(t, agent)); st["status"] != "succeeded" {
		t.Fatalf("deployment = %v", st)
	}
	return agent
}

// availability is GET …/native-admin-ui as key.
func (w *AdminWorld) Availability(t *testing.T, key, agent string) Resp {
	t.Helper()
	return w.E.Call("GET", w.Path("/agents/"+agent+"/native-admin-ui"), key, nil)
}

// user makes a person with the namespace role perms (targeted at target
// when set), signs them in, and returns the shared cookie, the console
// cookie and the binding.
func (w *AdminWorld) User(t *testing.T, name string, perms []string, target string) (shared, console, binding string) {
	t.Helper()
	e := w.E
	email := name + "-" + strings.ToLower(target[len(target)-6:]) + "@example.com"
	p := e.Call("POST", "/iam/principals", e.Admin, map[string]any{"email": email, "name": name, "password": "a long enough password"})
	if p.Status != 201 {
		t.Fatalf("principal = %d %v", p.Status, p.Body)
	}
	if len(perms) > 0 {
		role := e.Call("POST", w.Path("/iam/roles"), e.Admin, map[string]any{"name": name + "-" + target[len(target)-6:], "permissions": perms}).Data()["id"].(string)
		r := e.Call("POST", w.Path("/iam/bindings"), e.Admin, map[string]any{"principalId": p.Data()["id"], "roleId": role,
			"target": map[string]any{"kind": "agent", "id": target}})
		if r.Status != 201 {
			t.Fatalf("binding = %d %v", r.Status, r.Body)
		}
		binding = r.Data()["id"].(string)
	}
	shared, console = w.SignIn(t, email, "a long enough password")
	return shared, console, binding
}

// signIn returns the shared and console cookies ("name=value") of a new
// session, checking the shared cookie's attributes.
func (w *AdminWorld) SignIn(t *testing.T, email, password string) (shared, console string) {
	t.Helper()
	r := w.E.Call("POST", "/api/auth/sign-in", "", map[string]any{"email": email, "password": password})
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
			if c.Domain != CookieDomain || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" {
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
func (w *AdminWorld) Get(t *testing.T, method, host, path string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, w.E.Base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	res, err := w.Plain.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}
