package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/openclaw/occ/internal/backends"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/httpapi"
	"github.com/openclaw/occ/internal/httpapi/contracttest"
	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/store"
)

// env is one running occ on port 0 and a client whose every exchange is
// validated against api/openapi.yaml.
type Env struct {
	T      *testing.T
	M      *server.Main
	Base   string
	Admin  string // bootstrap service key
	Client *http.Client
	Spec   *openapi3.T
}

// withBackend configures a Backend (a boot option).
func WithBackend(b backends.Backend) func(*server.Main) {
	return func(m *server.Main) {
		m.Config.Backends = append(m.Config.Backends, config.Backend{ID: b.ID, Type: b.Type, URL: b.URL})
	}
}

// withGateway configures the Credential Gateway at url (a boot option).
func WithGateway(url string) func(*server.Main) {
	return func(m *server.Main) { m.Config.CredentialGateway.URL = url }
}

// testRates raise the request rate limits far above what any test sends
// from its one address and few principals (the defaults allow 20 requests
// a second per principal): the servers tests start use them unless a test
// of the limits lowers them again.
var TestRates = map[string]string{
	"limits.requestsPerSecondPerPrincipal": "100000", "limits.burstPerPrincipal": "1000000",
	"limits.requestsPerSecondPerClient": "100000", "limits.burstPerClient": "1000000",
}

// gatewayUIDs is the default range of gateway users, the one occ serve
// gives the local driver (used when the tests run as root).
func GatewayUIDs(t testing.TB) local.UIDRange {
	t.Helper()
	first, last, err := config.Defaults().Compute.Local.UIDs()
	if err != nil {
		t.Fatal(err)
	}
	return local.UIDRange{First: first, Last: last}
}

// boot starts occ on a fresh data directory; opts adjust the server before
// it starts (e.g. a logger that records). Its rate limits are testRates.
func Boot(t *testing.T, dbURL string, driver compute.Driver, opts ...func(*server.Main)) *Env {
	t.Helper()
	// Made by occ (0700), in a directory others may pass through, as on
	// a first start.
	dir := filepath.Join(gatewaytest.ReachableDir(t), "occ-data")
	flags := map[string]string{"dataDir": dir, "listen": "127.0.0.1:0",
		"databaseURL": dbURL, "worker.pollInterval": "50ms", "publicOrigin": "http://127.0.0.1:8080"}
	maps.Copy(flags, TestRates)
	cfg, err := config.Load(config.Source{Env: []string{"OCC_BOOTSTRAP_ADMIN_PASSWORD=" + AdminPassword}, Flags: flags})
	if err != nil {
		t.Fatal(err)
	}
	if driver == nil {
		cfg.Compute.GatewayCommand = FakeGatewayBinary(t)
	}
	m := &server.Main{Config: cfg, Driver: driver, Out: io.Discard,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, o := range opts {
		o(m)
	}
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if driver == nil {
		// occ leaves gateways running when it stops: stop them after it.
		t.Cleanup(func() { KillGatewayProcs(filepath.Join(dir, "compute", "namespaces")) })
	}
	t.Cleanup(func() { m.Close() })
	key, err := os.ReadFile(filepath.Join(dir, "bootstrap-admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := httpapi.LoadSpec()
	if err != nil {
		t.Fatal(err)
	}
	return &Env{T: t, M: m, Base: "http://" + m.Addr(), Admin: strings.TrimSpace(string(key)), Spec: spec,
		Client: &http.Client{Transport: contracttest.NewValidatingTransport(t, spec, http.DefaultTransport)}}
}

// adminPassword is the bootstrap administrator's password in tests.
const AdminPassword = "test-admin-password-1"

// origin is the public origin the test servers are configured with.
const Origin = "http://127.0.0.1:8080"

// signIn signs in and returns the session cookie ("name=value").
func (e *Env) SignIn(email, password string) string {
	e.T.Helper()
	r := e.Call("POST", "/api/auth/sign-in", "", map[string]any{"email": email, "password": password})
	if r.Status != 200 {
		e.T.Fatalf("sign in %s = %d %v", email, r.Status, r.Body)
	}
	c := r.Header.Get("Set-Cookie")
	name, _, _ := strings.Cut(c, ";")
	return name
}

// withT returns a copy of e that reports to a subtest.
func (e *Env) WithT(t *testing.T) *Env {
	c := *e
	c.T = t
	return &c
}

// resp is a decoded response.
type Resp struct {
	Status int
	Header http.Header
	Body   map[string]any
}

func (r Resp) Data() map[string]any { m, _ := r.Body["data"].(map[string]any); return m }
func (r Resp) List() []any          { l, _ := r.Body["data"].([]any); return l }
func (r Resp) Code() string {
	e, _ := r.Body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// call sends one request; body may be nil, a string (sent as is) or a value
// (sent as JSON).
func (e *Env) Call(method, path, key string, body any, headers ...string) Resp {
	e.T.Helper()
	res, raw := e.CallRaw(method, path, key, body, headers...)
	out := Resp{Status: res.StatusCode, Header: res.Header}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &out.Body)
	}
	return out
}

// callRaw is call returning the response and its body's exact bytes.
func (e *Env) CallRaw(method, path, key string, body any, headers ...string) (*http.Response, []byte) {
	e.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.T.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.Base+path, rd)
	if err != nil {
		e.T.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := e.Client.Do(req)
	if err != nil {
		e.T.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res, raw
}

// createNamespace creates a Namespace as the admin and waits until ready.
func (e *Env) CreateNamespace(name string) string {
	e.T.Helper()
	r := e.Call("POST", "/namespaces", e.Admin, map[string]any{"name": name})
	if r.Status != 201 {
		e.T.Fatalf("create namespace %s: %d %v", name, r.Status, r.Body)
	}
	id := r.Data()["id"].(string)
	e.WaitStatus(id, "ready")
	return id
}

// waitStatus polls a Namespace until it has the status ("gone" = 404).
func (e *Env) WaitStatus(id, want string) Resp {
	e.T.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := e.Call("GET", "/namespaces/"+id, e.Admin, nil)
		got := "gone"
		if r.Status == 200 {
			got, _ = r.Data()["status"].(string)
		}
		if got == want {
			return r
		}
		if time.Now().After(deadline) {
			e.T.Fatalf("namespace %s stayed %q, want %q", id, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// grant describes a principal to make for a test.
type Grant struct {
	Perms     []occ.Permission
	Namespace string      // binding scope; "" = installation
	Target    *occ.Target // exact target
	Restrict  []occ.Permission
	pinNS     string // key pin
}

// principal creates a service principal with one role binding (and any
// restrictions) straight in the store, and returns a key for it.
func (e *Env) Principal(g Grant) (string, string) {
	e.T.Helper()
	ctx := context.Background()
	now := time.Now()
	st := e.M.Store()
	p := occ.Principal{ID: occ.NewID(occ.PrefixServicePrincipal), Kind: occ.PrincipalService, Name: "test", CreatedAt: now, UpdatedAt: now, Version: 1}
	key := iam.NewServiceKey()
	err := st.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertPrincipal(ctx, p); err != nil {
			return err
		}
		if len(g.Perms) > 0 {
			perms := slices.Compact(slices.SortedFunc(slices.Values(g.Perms), func(a, b occ.Permission) int { return strings.Compare(a.String(), b.String()) }))
			role := occ.Role{ID: occ.NewID(occ.PrefixRole), Name: "r-" + occ.NewUUID(), NamespaceID: g.Namespace, Permissions: perms, CreatedAt: now}
			if err := tx.InsertRole(ctx, role); err != nil {
				return err
			}
			b := occ.Binding{ID: occ.NewID(occ.PrefixBinding), PrincipalID: p.ID, RoleID: role.ID, NamespaceID: g.Namespace,
				Target: g.Target, CreatedBy: p.ID, CreatedAt: now}
			if err := tx.InsertBinding(ctx, b); err != nil {
				return err
			}
		}
		for _, rp := range g.Restrict {
			r := occ.Restriction{ID: occ.NewID(occ.PrefixRestriction), PrincipalID: p.ID, Permission: rp, NamespaceID: g.Namespace,
				Target: g.Target, CreatedBy: p.ID, CreatedAt: now}
			if err := tx.InsertRestriction(ctx, r); err != nil {
				return err
			}
		}
		return tx.InsertServiceKey(ctx, occ.ServiceKey{ID: occ.NewID(occ.PrefixServiceKey), PrincipalID: p.ID, NamespaceID: g.pinNS,
			Name: "test", Lookup: iam.KeyLookup(key), Digest: iam.Digest(key), CreatedBy: p.ID, CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
	})
	if err != nil {
		e.T.Fatal(err)
	}
	return key, p.ID
}
