package api_test

import (
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// scrape GETs a Prometheus endpoint (with key, when not "") and returns
// its text.
func scrape(t *testing.T, url, key string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s = %d %s", url, res.StatusCode, body)
	}
	return string(body)
}

// sample returns the value of the series with exactly these labels (in
// the exposition's sorted order), or -1 when there is none.
func sample(text, name, labels string) float64 {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name+"{"+labels+"}") + ` (\S+)$`)
	m := re.FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// TestOperationsMetricsAndAccessLog: occ's own metrics count API requests
// by operation and status (unmatched paths too), denials by action and
// reason, finished jobs by kind, deployments by outcome and Agents by
// state; the metrics listener serves them without a key, with /healthz
// and /readyz, and Go's profiles (only there); every request leaves one access log line with its request
// ID, principal, operation and status.
func TestOperationsMetricsAndAccessLog(t *testing.T) {
	t.Parallel()
	logs := &servertest.LockedBuffer{}
	d := newDeployWorld(t, storetest.Migrated(t, "sqlite"), servertest.RecordLogs(logs), func(m *server.Main) { m.Config.Metrics.Listen = "127.0.0.1:0" })
	e := d.E
	st := d.WaitDeployment(t, d.Agent, d.Deploy(t, d.Agent))
	if st["status"] != "succeeded" {
		t.Fatalf("deployment = %v", servertest.ToJSON(st))
	}
	reader, _ := e.Principal(servertest.Grant{Perms: []occ.Permission{occ.P(occ.KindNamespace, occ.ActionRead)}, Namespace: d.Ns})
	if r := e.Call("POST", d.Path("/secrets"), reader, map[string]any{"name": "x", "value": "v"}); r.Status != 403 {
		t.Fatalf("a reader's Secret create = %d", r.Status)
	}
	if r := e.Call("GET", "/no-such-route", e.Admin, nil); r.Status != 404 {
		t.Fatalf("unmatched = %d", r.Status)
	}

	// The revision job completes (and is timed) just after the
	// deployment it finished is published: wait for it.
	text := scrape(t, e.Base+"/metrics", e.Admin)
	for deadline := time.Now().Add(20 * time.Second); sample(text, "occ_job_run_seconds_count", `kind="revision_reconcile",outcome="job_completed"`) < 1 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		text = scrape(t, e.Base+"/metrics", e.Admin)
	}
	// On the API listener the metrics are an installation administrator's
	// only: a Namespace administrator's key is refused.
	nsAdmin, _ := e.Principal(servertest.Grant{Perms: []occ.Permission{occ.P(occ.KindNamespace, occ.ActionAdminister), occ.P(occ.KindNamespace, occ.ActionRead)}, Namespace: d.Ns})
	req, _ := http.NewRequest("GET", e.Base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+nsAdmin)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 403 {
		t.Fatalf("/metrics with a Namespace administrator's key = %v %v, want 403", res, err)
	} else {
		res.Body.Close()
	}
	if other := scrape(t, "http://"+e.M.MetricsAddr()+"/metrics", ""); !strings.Contains(other, "occ_http_requests_total") {
		t.Fatalf("the metrics listener serves no request metrics:\n%s", other)
	}
	for _, c := range []struct {
		name, labels string
	}{
		{"occ_http_requests_total", `code="201",method="POST",operation="createNamespace"`},
		{"occ_http_requests_total", `code="202",method="POST",operation="deployAgent"`},
		{"occ_http_requests_total", `code="403",method="POST",operation="createSecret"`},
		{"occ_http_requests_total", `code="404",method="GET",operation="unmatched"`},
		{"occ_http_request_duration_seconds_count", `operation="createNamespace"`},
		{"occ_authorization_denials_total", `action="secrets.create",reason="AUTHORIZATION_DENIED"`},
		{"occ_job_run_seconds_count", `kind="revision_reconcile",outcome="job_completed"`},
		{"occ_deployments", `code="",status="succeeded"`},
		{"occ_agents", `active="true",desired_state="running",driver="local",status="active"`},
		{"occ_metrics_database_errors", `gauge="jobs"`},
	} {
		v := sample(text, c.name, c.labels)
		if c.name == "occ_metrics_database_errors" {
			if v != 0 {
				t.Errorf("%s{%s} = %v, want 0", c.name, c.labels, v)
			}
			continue
		}
		if v < 1 {
			t.Errorf("%s{%s} = %v, want at least 1", c.name, c.labels, v)
		}
	}
	if t.Failed() {
		t.Fatalf("metrics:\n%s", text)
	}

	for _, path := range []string{"/healthz", "/readyz"} {
		if body := scrape(t, "http://"+e.M.MetricsAddr()+path, ""); !strings.Contains(body, `"status":"ok"`) {
			t.Fatalf("%s on the metrics listener = %s", path, body)
		}
	}
	// Go's profiles: on the loopback metrics listener, never on the API
	// listener (not even to the installation administrator).
	if heap := scrape(t, "http://"+e.M.MetricsAddr()+"/debug/pprof/heap?debug=1", ""); !strings.Contains(heap, "heap profile:") {
		t.Fatalf("/debug/pprof/heap on the metrics listener = %.200s", heap)
	}
	if r := e.Call("GET", "/debug/pprof/heap", e.Admin, nil); r.Status != 404 {
		t.Fatalf("/debug/pprof/heap on the API listener = %d, want 404", r.Status)
	}

	lines := strings.Split(string(logs.Bytes()), "\n")
	find := func(operation, status string) string {
		for _, l := range lines {
			if strings.Contains(l, "msg=request") && strings.Contains(l, "operation="+operation+" ") && strings.Contains(l, "status="+status+" ") {
				return l
			}
		}
		t.Fatalf("no access log line for %s %s", operation, status)
		return ""
	}
	if l := find("createSecret", "403"); !regexp.MustCompile(`requestId=req_\S+ principal=spn_\S+ `).MatchString(l) {
		t.Fatalf("access log line lacks its request or principal: %s", l)
	}
	if l := find("unmatched", "404"); !strings.Contains(l, "method=GET") || strings.Contains(l, "no-such-route") {
		t.Fatalf("unmatched access log line: %s", l)
	}
}

// TestWorkerHealthOnMetricsListener: a --role worker process, which serves
// no API, answers /healthz, /readyz and /metrics on metrics.listen; a
// taken metrics port stops it before it starts.
func TestWorkerHealthOnMetricsListener(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(gatewaytest.ReachableDir(t), "occ-data")
	m, err := servertest.StartMain(dir, "", "worker", func(m *server.Main) { m.Config.Metrics.Listen = "127.0.0.1:0" })
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	base := "http://" + m.MetricsAddr()
	for _, path := range []string{"/healthz", "/readyz"} {
		if body := scrape(t, base+path, ""); !strings.Contains(body, `"status":"ok"`) {
			t.Fatalf("worker %s = %s", path, body)
		}
	}
	if text := scrape(t, base+"/metrics", ""); !strings.Contains(text, "occ_metrics_database_errors") || strings.Contains(text, "occ_http_requests_total") {
		t.Fatalf("worker /metrics:\n%s", text)
	}
	_, err = servertest.StartMain(filepath.Join(gatewaytest.ReachableDir(t), "other"), "", "worker", func(o *server.Main) { o.Config.Metrics.Listen = m.MetricsAddr() })
	if err == nil || !strings.Contains(err.Error(), "(metrics.listen)") {
		t.Fatalf("a worker on a taken metrics port = %v", err)
	}
}
