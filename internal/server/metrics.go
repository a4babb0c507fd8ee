package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/riverqueue/river"

	"github.com/openclaw/occ/internal/audit"
	"github.com/openclaw/occ/internal/store"
)

// registry gathers occ's own metrics (docs/OPERATIONS.md lists them): the
// Go runtime and process, API requests (added by serveAPI), the worker's
// jobs, and gauges read from the database at each scrape.
func (m *Main) registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(m.retention.Collectors()...)
	reg.MustRegister(audit.DenialCounter())
	reg.MustRegister(&dbGauges{st: m.st, driver: m.Config.Compute.Driver, log: m.Logger})
	return reg
}

// observeJobs times the jobs this process's worker finishes, by kind and
// outcome, until the client stops.
func observeJobs(c *river.Client[*sql.Tx], reg prometheus.Registerer) {
	wait := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "occ_job_queue_wait_seconds",
		Help:    "Time a worker job waited available before it started, by kind.",
		Buckets: prometheus.ExponentialBuckets(0.005, 3, 10)}, []string{"kind"})
	run := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "occ_job_run_seconds",
		Help:    "Time a worker job ran, by kind and outcome (job_completed, job_failed, job_cancelled, job_snoozed).",
		Buckets: prometheus.ExponentialBuckets(0.005, 3, 10)}, []string{"kind", "outcome"})
	reg.MustRegister(wait, run)
	events, _ := c.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled, river.EventKindJobSnoozed)
	go func() {
		for ev := range events {
			if ev.Job == nil || ev.JobStats == nil {
				continue
			}
			wait.WithLabelValues(ev.Job.Kind).Observe(ev.JobStats.QueueWaitDuration.Seconds())
			run.WithLabelValues(ev.Job.Kind, string(ev.Kind)).Observe(ev.JobStats.RunDuration.Seconds())
		}
	}()
}

// dbGauges reads counts from the database at each scrape: the worker's
// queue, deployments by outcome and Agents by state. With several occ
// processes on one database every one reports the same installation-wide
// values.
type dbGauges struct {
	st     *store.Store
	driver string
	log    *slog.Logger
}

var (
	jobsDesc = prometheus.NewDesc("occ_jobs", "Unfinished worker jobs by kind and state (available, scheduled, running, retryable, pending).",
		[]string{"kind", "state"}, nil)
	deploymentsDesc = prometheus.NewDesc("occ_deployments", "Deployments by status and error code (\"\" when none).",
		[]string{"status", "code"}, nil)
	agentsDesc = prometheus.NewDesc("occ_agents", "Agents by desired state, status, whether a revision is active (a gateway runs for running ones) and the compute driver.",
		[]string{"desired_state", "status", "active", "driver"}, nil)
	scrapeErrorsDesc = prometheus.NewDesc("occ_metrics_database_errors", "1 when this scrape could not read a database gauge (it is then missing).",
		[]string{"gauge"}, nil)
)

func (g *dbGauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{jobsDesc, deploymentsDesc, agentsDesc, scrapeErrorsDesc} {
		ch <- d
	}
}

func (g *dbGauges) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, q := range []struct {
		name  string
		desc  *prometheus.Desc
		count func(context.Context) ([]store.Count, error)
		extra []string
	}{
		{"jobs", jobsDesc, g.st.CountQueuedJobs, nil},
		{"deployments", deploymentsDesc, g.st.CountDeployments, nil},
		{"agents", agentsDesc, g.st.CountAgents, []string{g.driver}},
	} {
		counts, err := q.count(ctx)
		failed := 0.0
		if err != nil {
			g.log.Warn("metrics: cannot read a database gauge", "gauge", q.name, "error", err)
			failed = 1
		}
		ch <- prometheus.MustNewConstMetric(scrapeErrorsDesc, prometheus.GaugeValue, failed, q.name)
		for _, c := range counts {
			ch <- prometheus.MustNewConstMetric(q.desc, prometheus.GaugeValue, float64(c.N), append(c.Labels, q.extra...)...)
		}
	}
}

// serveMetrics serves the metrics listener (metrics.listen, loopback only,
// bound at the start of Start): /metrics without authentication, and
// /healthz and /readyz for a process of any role, the worker included, and
// Go's profiles under /debug/pprof/ (net/http/pprof: CPU, heap, goroutines;
// never on the API listener, whose clients are not the machine's operator).
func (m *Main) serveMetrics() {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { writeStatus(w, http.StatusOK, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := m.st.Ping(ctx); err != nil {
			writeStatus(w, http.StatusServiceUnavailable, "database unavailable")
			return
		}
		writeStatus(w, http.StatusOK, "ok")
	})
	m.metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: time.Minute}
	go func() { _ = m.metricsSrv.Serve(m.metricsLn) }()
}

func writeStatus(w http.ResponseWriter, code int, status string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"status": status})
}

// MetricsAddr is the metrics listener's address, "" without one.
func (m *Main) MetricsAddr() string {
	if m.metricsLn == nil {
		return ""
	}
	return m.metricsLn.Addr().String()
}
