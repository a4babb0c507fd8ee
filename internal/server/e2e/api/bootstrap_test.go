package api_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

func start(t *testing.T, dir, dbURL, role string, env ...string) *server.Main {
	t.Helper()
	m, err := servertest.StartMain(dir, dbURL, role, nil, env...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// startTogether starts n occ processes at the same moment; start(i) starts
// the i-th. Each started one is closed when the test ends.
func startTogether(t *testing.T, n int, start func(i int) (*server.Main, error)) ([]*server.Main, []error) {
	ms := make([]*server.Main, n)
	errs := make([]error, n)
	begin := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-begin
			ms[i], errs[i] = start(i)
		})
	}
	close(begin)
	wg.Wait()
	for _, m := range ms {
		if m != nil {
			t.Cleanup(func() { m.Close() })
		}
	}
	return ms, errs
}

// TestReplicasStartTogether: API replicas started at the same moment on
// one fresh PostgreSQL database (each with its own data directory, sharing
// the keyset, with an installation Preset to seed) all start and serve one
// installation; exactly one wrote the bootstrap key, and that key works on
// every replica.
func TestReplicasStartTogether(t *testing.T) {
	t.Parallel()
	const replicas = 4
	url := storetest.URL(t, "postgres")
	keyset := filepath.Join(t.TempDir(), "secrets.keyset")
	dirs := make([]string, replicas)
	for i := range dirs {
		dirs[i] = gatewaytest.ReachableDir(t)
	}
	ms, errs := startTogether(t, replicas, func(i int) (*server.Main, error) {
		return servertest.StartMain(dirs[i], url, "api", withInstallationSettings, "OCC_SECRETS_KEYSET_FILE="+keyset)
	})
	var key []byte
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d did not start: %v", i, err)
		}
		if k, err := os.ReadFile(filepath.Join(dirs[i], "bootstrap-admin.key")); err == nil {
			if key != nil {
				t.Fatal("two replicas wrote a bootstrap key")
			}
			key = k
		}
	}
	if key == nil {
		t.Fatal("no replica wrote the bootstrap key")
	}
	for i, m := range ms {
		e := &servertest.Env{T: t, M: m, Base: "http://" + m.Addr(), Admin: strings.TrimSpace(string(key)), Client: http.DefaultClient}
		if r := e.Call("GET", "/namespaces", e.Admin, nil); r.Status != 200 || len(r.List()) != 1 {
			t.Fatalf("replica %d: namespaces = %d %v", i, r.Status, r.Body)
		}
	}
}

// TestSQLiteStartsTogether: occ processes started at the same moment on one
// fresh SQLite data directory: one starts, and every other says the data
// directory is in use (never a half-applied migration).
func TestSQLiteStartsTogether(t *testing.T) {
	t.Parallel()
	dir := gatewaytest.ReachableDir(t)
	url := storetest.URL(t, "sqlite")
	_, errs := startTogether(t, 6, func(int) (*server.Main, error) { return servertest.StartMain(dir, url, "api", nil) })
	started := 0
	for i, err := range errs {
		if err == nil {
			started++
		} else if !strings.Contains(err.Error(), "another occ process uses this data directory") {
			t.Errorf("process %d: %v", i, err)
		}
	}
	if started != 1 {
		t.Errorf("%d processes started, want 1", started)
	}
}

// TestBootstrapOnce: the first start writes a 0600 key file; a restart
// neither bootstraps again nor touches the key.
func TestBootstrapOnce(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		dir := gatewaytest.ReachableDir(t)
		m := start(t, dir, url, "all")
		keyFile := filepath.Join(dir, "bootstrap-admin.key")
		info, err := os.Stat(keyFile)
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Fatalf("key file: %v %v", info, err)
		}
		before, _ := os.ReadFile(keyFile)
		in1, _ := m.Store().GetInstallation(context.Background())
		m.Close()

		m = start(t, dir, url, "all")
		defer m.Close()
		after, _ := os.ReadFile(keyFile)
		in2, _ := m.Store().GetInstallation(context.Background())
		if string(before) != string(after) || in1.ID != in2.ID {
			t.Fatalf("restart changed the installation or key: %s→%s", in1.ID, in2.ID)
		}
		n, _ := m.Store().CountNamespaces(context.Background())
		if n != 1 {
			t.Fatalf("%d namespaces after restart, want the one default", n)
		}
		req, _ := http.NewRequest("GET", "http://"+m.Addr()+"/installation", nil)
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(after)))
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("bootstrap key after restart: %v %v", res, err)
		}
		res.Body.Close()
	})
}

func TestBootstrapAPIKeyFromEnvironment(t *testing.T) {
	t.Parallel()
	dir := gatewaytest.ReachableDir(t)
	key := "occ_" + strings.Repeat("a1", 20)
	m := start(t, dir, storetest.URL(t, "sqlite"), "all", "OCC_BOOTSTRAP_API_KEY="+key)
	defer m.Close()
	req, _ := http.NewRequest("GET", "http://"+m.Addr()+"/namespaces", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("OCC_BOOTSTRAP_API_KEY: %v %v", res, err)
	}
	res.Body.Close()
}

// TestSplitRoles runs the API and the worker as separate processes on one
// PostgreSQL database: work admitted by one is done by the other.
func TestSplitRoles(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t, "postgres")
	apiDir := gatewaytest.ReachableDir(t)
	api := start(t, apiDir, url, "api")
	defer api.Close()
	// Replicas share the secrets keyset (a shared volume in production).
	worker := start(t, gatewaytest.ReachableDir(t), url, "worker", "OCC_SECRETS_KEYSET_FILE="+filepath.Join(apiDir, "secrets.keyset"))
	defer worker.Close()
	key, _ := os.ReadFile(filepath.Join(apiDir, "bootstrap-admin.key"))
	e := &servertest.Env{T: t, M: api, Base: "http://" + api.Addr(), Admin: strings.TrimSpace(string(key)), Client: http.DefaultClient}
	e.CreateNamespace("split") // waits for ready, which only the worker can do
}

// sharedEndpoints is a driver declaring, or not, SharedEndpoints.
type sharedEndpoints struct {
	compute.Driver
	shared bool
}

func (s sharedEndpoints) Capabilities() compute.Capabilities {
	c := s.Driver.Capabilities()
	c.SharedEndpoints = s.shared
	return c
}

// TestAPIOnlyProcessReachesSharedEndpoints: an API-only process (--role
// api) answers an Agent's diagnostics through its own driver when the
// driver's endpoints are shared (as the Kubernetes driver's are), and 503
// DEPENDENCY_UNAVAILABLE when they are only the worker host's.
func TestAPIOnlyProcessReachesSharedEndpoints(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t, "postgres")
	d := newDeployWorld(t, url)
	rev := d.Deploy(t, d.Agent)
	if st := d.WaitDeployment(t, d.Agent, rev); st["status"] != "succeeded" {
		t.Fatalf("deployment = %v", st)
	}
	for _, shared := range []bool{true, false} {
		api, err := servertest.StartMain(gatewaytest.ReachableDir(t), url, "api", func(m *server.Main) { m.Driver = sharedEndpoints{d.Fake, shared} },
			"OCC_SECRETS_KEYSET_FILE="+d.E.M.Config.Secrets.KeysetFile)
		if err != nil {
			t.Fatal(err)
		}
		e := &servertest.Env{T: t, M: api, Base: "http://" + api.Addr(), Admin: d.E.Admin, Client: http.DefaultClient}
		r := e.Call("POST", d.Path("/agents/"+d.Agent+"/deployments/"+rev+"/diagnostics"), e.Admin, nil)
		checks, _ := r.Data()["checks"].([]any)
		switch {
		case shared && (r.Status != 200 || len(checks) == 0):
			t.Errorf("diagnostics from the API-only process, shared endpoints = %d %v; want 200 with the driver's checks", r.Status, r.Body)
		case !shared && (r.Status != 503 || r.Code() != "DEPENDENCY_UNAVAILABLE"):
			t.Errorf("diagnostics from the API-only process, the worker host's endpoints = %d %v; want 503 DEPENDENCY_UNAVAILABLE", r.Status, r.Body)
		}
		api.Close()
	}
}

func TestMetricsAndPaging(t *testing.T) {
	t.Parallel()
	e := servertest.Boot(t, storetest.URL(t, "sqlite"), nil)
	for _, key := range []string{"", e.Admin} {
		req, _ := http.NewRequest("GET", e.Base+"/metrics", nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if key == "" && res.StatusCode != 401 {
			t.Fatalf("/metrics without credentials = %d", res.StatusCode)
		}
		if key != "" && (res.StatusCode != 200 || !strings.Contains(string(body), "go_goroutines")) {
			t.Fatalf("/metrics as admin = %d", res.StatusCode)
		}
	}
	for i := 0; i < 4; i++ {
		e.Call("POST", "/namespaces", e.Admin, map[string]any{"name": "page-" + string(rune('a'+i))})
	}
	seen := map[string]bool{}
	path := "/namespaces?pageSize=2"
	for pages := 0; ; pages++ {
		r := e.Call("GET", path, e.Admin, nil)
		for _, it := range r.List() {
			seen[it.(map[string]any)["id"].(string)] = true
		}
		next, _ := r.Body["meta"].(map[string]any)["nextPageToken"].(string)
		if next == "" {
			break
		}
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		path = "/namespaces?pageSize=2&pageToken=" + next
	}
	if len(seen) != 5 {
		t.Fatalf("paged through %d namespaces, want 5", len(seen))
	}
	for _, q := range []string{"?pageSize=0", "?pageSize=1001", "?pageSize=x", "?pageToken=%25%25", "?other=1"} {
		if r := e.Call("GET", "/namespaces"+q, e.Admin, nil); r.Status != 400 {
			t.Fatalf("GET /namespaces%s = %d", q, r.Status)
		}
	}
}

// TestTakenPortStopsBeforeBootstrap: occ serve on a port another process
// holds refuses to start naming the setting, before it creates anything:
// no database, no bootstrap key, and no once-shown password printed for a
// server that never ran. The next start, on a free port, bootstraps.
func TestTakenPortStopsBeforeBootstrap(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := filepath.Join(gatewaytest.ReachableDir(t), "occ-data")
	var out strings.Builder
	_, err = servertest.StartMain(dir, "", "all", func(m *server.Main) {
		m.Config.Listen = taken.Addr().String()
		m.Out = &out
	})
	if err == nil || !strings.Contains(err.Error(), "(listen)") || !strings.Contains(err.Error(), taken.Addr().String()) {
		t.Fatalf("start on a taken port = %v, want a refusal naming listen", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 || out.Len() != 0 {
		t.Fatalf("a refused start left %v in the data directory and printed %q", entries, out.String())
	}

	var second strings.Builder
	m, err := servertest.StartMain(dir, "", "all", func(m *server.Main) { m.Out = &second })
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if !strings.Contains(second.String(), "console sign-in admin@occ.local / ") || !strings.Contains(second.String(), " at "+servertest.Origin+"/ ") {
		t.Fatalf("the first start that runs printed %q, want the once-shown password", second.String())
	}
}
