package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/store/storetest"
)

func start(t *testing.T, dir, dbURL, role string, env ...string) *server.Main {
	t.Helper()
	cfg, err := config.Load(config.Source{Env: env, Flags: map[string]string{"dataDir": dir, "listen": "127.0.0.1:0",
		"databaseURL": dbURL, "worker.pollInterval": "20ms", "publicOrigin": origin, "role": role}})
	if err != nil {
		t.Fatal(err)
	}
	m := &server.Main{Config: cfg, Out: io.Discard, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestBootstrapOnce: the first start writes a 0600 key file; a restart
// neither bootstraps again nor touches the key.
func TestBootstrapOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, url string) {
		dir := t.TempDir()
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
	dir := t.TempDir()
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
	url := storetest.URL(t, "postgres")
	apiDir := t.TempDir()
	api := start(t, apiDir, url, "api")
	defer api.Close()
	// Replicas share the secrets keyset (a shared volume in production).
	worker := start(t, t.TempDir(), url, "worker", "OCC_SECRETS_KEYSET_FILE="+filepath.Join(apiDir, "secrets.keyset"))
	defer worker.Close()
	key, _ := os.ReadFile(filepath.Join(apiDir, "bootstrap-admin.key"))
	e := &env{t: t, m: api, base: "http://" + api.Addr(), admin: strings.TrimSpace(string(key)), client: http.DefaultClient}
	e.createNamespace("split") // waits for ready, which only the worker can do
}

func TestMetricsAndPaging(t *testing.T) {
	e := boot(t, storetest.URL(t, "sqlite"), nil)
	for _, key := range []string{"", e.admin} {
		req, _ := http.NewRequest("GET", e.base+"/metrics", nil)
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
		e.call("POST", "/namespaces", e.admin, map[string]any{"name": "page-" + string(rune('a'+i))})
	}
	seen := map[string]bool{}
	path := "/namespaces?pageSize=2"
	for pages := 0; ; pages++ {
		r := e.call("GET", path, e.admin, nil)
		for _, it := range r.list() {
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
		if r := e.call("GET", "/namespaces"+q, e.admin, nil); r.Status != 400 {
			t.Fatalf("GET /namespaces%s = %d", q, r.Status)
		}
	}
}
