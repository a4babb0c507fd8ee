package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// BenchmarkDeploy measures deployments through a whole occ in the test
// process (default worker settings) whose local compute driver runs the
// fake gateway binary, ready about 50 ms after exec:
//
//   - overhead/<db>: one deployment at a time, each of a new Agent, from the
//     deploy request to the terminal status seen by polling
//     GET …/deployments/{rev} every 10 ms; p50-ms and p99-ms;
//   - 200-agents/<db>: 200 Agents deployed at once (16 clients sending the
//     deploys), seconds until all succeeded, and the test process's VmRSS
//     (the server; the gateways are separate processes) when they had.
//
// The PostgreSQL lanes need OCC_TEST_POSTGRES_URL (skipped without it).
//
//	go test -run '^$' -bench BenchmarkDeploy -benchtime 100x ./internal/server/
func BenchmarkDeploy(b *testing.B) {
	fake := gatewaytest.BuildBinary(b)
	lanes := []string{"sqlite", "postgres"}
	for _, db := range lanes {
		b.Run("overhead/"+db, func(b *testing.B) {
			dw := bootDeployBench(b, fake, db)
			agents := make([]string, b.N)
			for i := range agents {
				agents[i] = dw.newAgent(b, fmt.Sprintf("o-%d", i))
			}
			durs := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				rev := dw.deploy(b, agents[i])
				dw.waitSucceeded(b, agents[i], rev, 10*time.Millisecond)
				durs = append(durs, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(durs)
			b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(durs[len(durs)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
	for _, db := range lanes {
		b.Run("200-agents/"+db, func(b *testing.B) {
			const n, clients = 200, 16
			var secs, rss, hwm float64
			for range b.N {
				b.StopTimer()
				dw := bootDeployBench(b, fake, db)
				agents := make([]string, n)
				for i := range agents {
					agents[i] = dw.newAgent(b, fmt.Sprintf("m-%d", i))
				}
				b.StartTimer()
				start := time.Now()
				revs := make([]string, n)
				work := make(chan int)
				var wg sync.WaitGroup
				for range clients {
					wg.Go(func() {
						for i := range work {
							revs[i] = dw.deploy(b, agents[i])
						}
					})
				}
				for i := range n {
					work <- i
				}
				close(work)
				wg.Wait()
				for i := range n {
					dw.waitSucceeded(b, agents[i], revs[i], 100*time.Millisecond)
				}
				secs = time.Since(start).Seconds()
				b.StopTimer()
				rss, hwm = procStatusMB(b, "VmRSS"), procStatusMB(b, "VmHWM")
				if got := len(servertest.GatewayProcs(dw.root)); got != n {
					b.Fatalf("%d gateways run, want %d", got, n)
				}
				b.StartTimer()
			}
			b.ReportMetric(secs, "s-all-succeeded")
			b.ReportMetric(rss, "rss-MB")
			b.ReportMetric(hwm, "peak-rss-MB")
		})
	}
}

// deployBench is an occ in the test process with a deployable setup: a
// Namespace, a Secret, a Configuration and a role that lets Agents'
// principals operate the Secret.
type deployBench struct {
	base, key       string
	root            string // the driver's namespaces directory
	ns, secret, cfg string
	role            string
	client          *http.Client
}

func bootDeployBench(b *testing.B, fake, db string) *deployBench {
	b.Helper()
	if db == "postgres" && os.Getenv("OCC_TEST_POSTGRES_URL") == "" {
		b.Skip("OCC_TEST_POSTGRES_URL is not set")
	}
	dir := gatewaytest.ReachableDir(b)
	flags := map[string]string{"dataDir": dir, "listen": "127.0.0.1:0", "publicOrigin": "http://127.0.0.1:8080"}
	maps.Copy(flags, servertest.TestRates)
	if db == "postgres" {
		flags["databaseURL"] = storetest.URL(b, "postgres")
	}
	cfg, err := config.Load(config.Source{Flags: flags})
	if err != nil {
		b.Fatal(err)
	}
	root := filepath.Join(dir, "compute")
	drv, err := local.Open(local.Options{Root: root, Command: local.BinaryCommand(fake), UIDRange: servertest.GatewayUIDs(b)})
	if err != nil {
		b.Fatal(err)
	}
	m := &server.Main{Config: cfg, Driver: drv, Out: io.Discard, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := m.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	dw := &deployBench{base: "http://" + m.Addr(), root: filepath.Join(root, "namespaces"),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}, Timeout: 30 * time.Second}}
	b.Cleanup(func() {
		m.Close()
		drv.Close()
		servertest.KillGatewayProcs(dw.root)
	})
	raw, err := os.ReadFile(filepath.Join(dir, "bootstrap-admin.key"))
	if err != nil {
		b.Fatal(err)
	}
	dw.key = strings.TrimSpace(string(raw))
	dw.ns = dw.call(b, "POST", "/namespaces", map[string]any{"name": "bench-deploy"}, 201)["id"].(string)
	deadline := time.Now().Add(30 * time.Second)
	for dw.call(b, "GET", "/namespaces/"+dw.ns, nil, 200)["status"] != "ready" {
		if time.Now().After(deadline) {
			b.Fatal("namespace not ready")
		}
		time.Sleep(20 * time.Millisecond)
	}
	p := "/namespaces/" + dw.ns
	dw.secret = dw.call(b, "POST", p+"/secrets", map[string]any{"name": "openai", "value": "sk-bench"}, 201)["id"].(string)
	dw.cfg = dw.call(b, "POST", p+"/configurations", map[string]any{"name": "c", "kind": "agent",
		"values": map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": "openai/gpt-5"}}}}, 201)["id"].(string)
	dw.role = dw.call(b, "POST", p+"/iam/roles", map[string]any{"name": "operate", "permissions": []string{"secret:operate"}}, 201)["id"].(string)
	return dw
}

// call sends one request, fails unless the status is want, and returns data.
func (dw *deployBench) call(b *testing.B, method, path string, body any, want int) map[string]any {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, dw.base+path, rd)
	if err != nil {
		b.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+dw.key)
	res, err := dw.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	if res.StatusCode != want {
		b.Fatalf("%s %s = %d %v", method, path, res.StatusCode, out)
	}
	d, _ := out["data"].(map[string]any)
	return d
}

// newAgent creates a deployable Agent and grants its principal the role.
func (dw *deployBench) newAgent(b *testing.B, name string) string {
	p := "/namespaces/" + dw.ns
	a := dw.call(b, "POST", p+"/agents", map[string]any{"name": name, "configurationId": dw.cfg,
		"harnessAuth": map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "id": dw.secret}}}, 201)
	dw.call(b, "POST", p+"/iam/bindings", map[string]any{"principalId": a["servicePrincipalId"], "roleId": dw.role}, 201)
	return a["id"].(string)
}

func (dw *deployBench) deploy(b *testing.B, agent string) string {
	return dw.call(b, "POST", "/namespaces/"+dw.ns+"/agents/"+agent+"/deploy", nil, 202)["id"].(string)
}

// waitSucceeded polls the deployment every interval until it is terminal,
// and fails unless it succeeded.
func (dw *deployBench) waitSucceeded(b *testing.B, agent, rev string, interval time.Duration) {
	deadline := time.Now().Add(120 * time.Second)
	for {
		st := dw.call(b, "GET", "/namespaces/"+dw.ns+"/agents/"+agent+"/deployments/"+rev, nil, 200)
		switch st["status"] {
		case "succeeded":
			return
		case "failed":
			b.Fatalf("deployment %s failed: %v", rev, st)
		}
		if time.Now().After(deadline) {
			b.Fatalf("deployment %s not terminal after 120 s: %v", rev, st)
		}
		time.Sleep(interval)
	}
}

// procStatusMB reads a "kB" field of /proc/self/status in MB.
func procStatusMB(b *testing.B, field string) float64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb / 1024
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}
