package httpapi

import (
	"log/slog"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openclaw/occ/internal/httpapi/contract"
)

// RequestMetrics count the API's requests by operation, method and status,
// and time them by operation. Labels come from the OpenAPI document only
// (operationIds, never paths), so their number is bounded.
type RequestMetrics struct {
	Requests *prometheus.CounterVec
	Duration *prometheus.HistogramVec
}

// unmatched is the operation label of a request no route matched.
const unmatched = "unmatched"

// NewRequestMetrics returns the metrics, to register once.
func NewRequestMetrics() *RequestMetrics {
	return &RequestMetrics{
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "occ_http_requests_total",
			Help: "API requests by operationId (\"unmatched\": no route), method and response status (0: the client left before a response)."},
			[]string{"operation", "method", "code"}),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "occ_http_request_duration_seconds",
			Help:    "Time from a request's arrival to its response's end, by operationId (event streams: the stream's life).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}},
			[]string{"operation"}),
	}
}

// Collectors lists the metrics, for a registry.
func (m *RequestMetrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Requests, m.Duration}
}

// observer is told what each request came to: it counts it in metrics
// (when set) and writes the access log line (when on).
type observer struct {
	metrics   *RequestMetrics
	accessLog *slog.Logger
}

func (o observer) observe(s contract.Served) {
	op := s.Operation
	if op == "" {
		op = unmatched
	}
	if o.metrics != nil {
		o.metrics.Requests.WithLabelValues(op, s.Method, strconv.Itoa(s.Status)).Inc()
		o.metrics.Duration.WithLabelValues(op).Observe(s.Duration.Seconds())
	}
	if o.accessLog != nil {
		o.accessLog.Info("request", "requestId", s.RequestID, "principal", s.Principal, "operation", op,
			"method", s.Method, "status", s.Status, "durationMs", float64(s.Duration.Microseconds())/1000)
	}
}
