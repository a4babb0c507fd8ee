// Package httpapi serves occ's HTTP API: admission against api/openapi.yaml
// (package wire), authentication, and handlers that call the use cases. It is
// the one place that turns occ errors into HTTP statuses (contract.StatusOf).
package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/openclaw/occ/api"
	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/httpapi/contract"
	"github.com/openclaw/occ/internal/httpapi/gen"
	"github.com/openclaw/occ/internal/httpapi/limit"
	"github.com/openclaw/occ/internal/iam"
)

// Options configure the HTTP API.
type Options struct {
	App                 *app.App
	Authn               *iam.Authenticator
	DefaultBodyLimit    int64
	BodyLimits          map[string]int64 // by operationId
	Version             string
	OpenClawVersion     string
	WorkspaceDefaultsID string // published in GET /installation
	ComputeDriver       string
	Metrics             http.Handler // served at /metrics to installation administrators
	PublicOrigin        string       // scheme://host[:port] browsers use
	SessionLifetime     time.Duration
	// NativeAdminCookieDomain, when the native admin UI is enabled, is the
	// shared cookie parent domain: sign-in also sets the shared cookie
	// there, sign-out clears it. Empty when disabled.
	NativeAdminCookieDomain string
	// PerPrincipal is the request rate of one authenticated principal;
	// unset, limits.requestsPerSecondPerPrincipal's default.
	PerPrincipal limit.Rate
	// MaxInFlight caps the requests handled at once once their body is in;
	// unset, limits.maxInFlight's default.
	MaxInFlight int
	// StreamWriteTimeout bounds each write of an event stream, which as a
	// whole outlives the server's write timeout; 0 means no bound.
	StreamWriteTimeout time.Duration
	Logger             *slog.Logger
	// RequestMetrics, when set, count and time every request.
	RequestMetrics *RequestMetrics
	// AccessLog writes one info line per request to Logger (request ID,
	// principal, operationId, method, status, duration).
	AccessLog bool
}

// LoadSpec returns the embedded OpenAPI document, parsed and validated: one
// value per process, which callers read and never change.
func LoadSpec() (*openapi3.T, error) { return loadedSpec() }

// loadedSpec parses and validates the document once per process (a few
// hundred milliseconds of CPU, more under the race detector): every
// handler and test in the process shares it, and none may change it.
var loadedSpec = sync.OnceValues(func() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	spec, err := loader.LoadFromData(api.OpenAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("parse api/openapi.yaml: %w", err)
	}
	if err := spec.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("validate api/openapi.yaml: %w", err)
	}
	return spec, nil
})

// New returns the API handler.
func New(o Options) (http.Handler, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.PerPrincipal.PerSecond <= 0 || o.PerPrincipal.Burst <= 0 {
		d := config.Defaults().Limits
		o.PerPrincipal = limit.Rate{PerSecond: d.RequestsPerSecondPerPrincipal, Burst: d.BurstPerPrincipal}
	}
	spec, err := LoadSpec()
	if err != nil {
		return nil, err
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	obs := observer{metrics: o.RequestMetrics}
	if o.AccessLog {
		obs.accessLog = o.Logger.With("component", "access")
	}
	var observe func(contract.Served)
	if obs.metrics != nil || obs.accessLog != nil {
		observe = obs.observe
	}
	adm, err := contract.New(contract.Options{Spec: spec, DefaultBodyLimit: o.DefaultBodyLimit, BodyLimits: o.BodyLimits, Logger: o.Logger,
		Observe: observe})
	if err != nil {
		return nil, err
	}
	h := &handlers{app: o.App, opts: o, specJSON: specJSON}
	strict := gen.NewStrictHandlerWithOptions(h, nil, gen.StrictHTTPServerOptions{
		RequestErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, err error) {
			contract.WriteError(w, r, invalidRequest(err))
		},
		ResponseErrorHandlerFunc: contract.WriteError,
	})
	routes := gen.HandlerWithOptions(strict, gen.StdHTTPServerOptions{
		ErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, err error) {
			contract.WriteError(w, r, invalidRequest(err))
		},
	})
	authn := &authenticator{authn: o.Authn, log: o.Logger, origin: o.PublicOrigin, cookie: SessionCookieName(o.PublicOrigin),
		principals: limit.NewBuckets(o.PerPrincipal)}
	idem := idempotency{app: o.App, log: o.Logger}
	inFlight := limit.InFlight(o.MaxInFlight)
	api := adm.PreAuth(authn.middleware(adm.Body(inFlight(idem.middleware(routes)))))
	if o.Metrics == nil {
		return api, nil
	}
	// Not a ServeMux: it would clean and redirect paths before the wire
	// rules see them.
	metrics := authn.requireAdmin(o.App, o.Metrics)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" && r.Method == http.MethodGet {
			metrics.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	}), nil
}

// SharedCookieName is the native admin UI's shared cookie: occ_shared, or
// __Secure-occ_shared (which browsers accept only with Secure) when the
// origin is HTTPS. It carries Domain=<cookie parent>, so __Host- cannot be
// used.
func SharedCookieName(origin string) string {
	if strings.HasPrefix(origin, "https://") {
		return "__Secure-occ_shared"
	}
	return "occ_shared"
}

// SessionCookieName is occ_session, with the __Host- prefix (which browsers
// accept only with Secure, Path=/ and no Domain) when the origin is HTTPS.
func SessionCookieName(origin string) string {
	if strings.HasPrefix(origin, "https://") {
		return "__Host-occ_session"
	}
	return "occ_session"
}
