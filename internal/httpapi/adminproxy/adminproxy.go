// Package adminproxy serves the native OpenClaw admin UI of each Agent on
// its derived browser host (CONTRACT.md §6, reference/flows.md §11,
// reference/openclaw-runtime.md §3). Route sends every request whose host
// lies below the admin domain here, before anything else, so an Agent host
// never reaches the API or the console.
//
// On every request the proxy authenticates the shared session cookie
// (exactly one; the console's cookie and service keys are not accepted),
// resolves the host to its Agent and authorizes exact agent:administer
// through app.NativeAdminTarget, then forwards to the Agent's private
// gateway:
//
//   - it strips the browser's cookies, credentials, forwarding, identity and
//     scope headers, sets the one identity occ asserts
//     (gateway.NativeAdminUserHeader) and an X-Forwarded-For naming a
//     non-loopback client (the browser's address as limit.ClientAddr
//     decided it, or 192.0.2.1 when that is loopback: the gateway refuses a
//     loopback client behind a proxy), and keeps the public Host;
//   - it refuses unsafe methods without the Agent's exact Origin and
//     service worker scripts (a worker would outlive revocation), and adds
//     worker-src 'none' to the response's policy;
//   - it drops every upstream Set-Cookie that carries a Domain (one Agent
//     must not set cookies for the console or other Agents) or names an occ
//     cookie, and turns Location headers that point at the private gateway
//     into the Agent's origin;
//   - a WebSocket needs the Agent's exact Origin; the browser is accepted
//     only after the gateway accepted, every message is relayed as is, the
//     authorization is checked again every RecheckInterval (each check
//     bounded to 5 s) and both sides are closed when it fails or the active
//     revision changed; connect and close are audited.
//
// Native edits made in the UI stay in the gateway: occ never turns them into
// Configuration changes or revisions.
package adminproxy

import (
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/httpapi"
	"github.com/openclaw/occ/internal/httpapi/contract"
	"github.com/openclaw/occ/internal/occ"
)

// Options configure the proxy.
type Options struct {
	App *app.App
	// Domain is the admin domain: every host strictly below it is an
	// Agent's.
	Domain string
	// PublicOrigin names the shared cookie (occ_shared or
	// __Secure-occ_shared) and gives X-Forwarded-Proto.
	PublicOrigin string
	// RecheckInterval is how often an open WebSocket is authorized again;
	// default 25 s.
	RecheckInterval time.Duration
	Logger          *slog.Logger
}

// fallbackClient is the X-Forwarded-For of a browser on loopback (a
// documentation address, TEST-NET-1).
const fallbackClient = "192.0.2.1"

// checkTimeout bounds one recheck of an open WebSocket.
const checkTimeout = 5 * time.Second

// Proxy is the native admin UI proxy.
type Proxy struct {
	o      Options
	cookie string

	mu      sync.Mutex
	sockets map[*socket]struct{}
	closed  bool
}

// New returns the proxy.
func New(o Options) *Proxy {
	if o.RecheckInterval <= 0 {
		o.RecheckInterval = 25 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Proxy{o: o, cookie: httpapi.SharedCookieName(o.PublicOrigin), sockets: map[*socket]struct{}{}}
}

// Route sends requests for hosts strictly below the admin domain to p and
// everything else to next.
func (p *Proxy) Route(next http.Handler) http.Handler {
	suffix := "." + strings.ToLower(p.o.Domain)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(hostname(r.Host), suffix) {
			p.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostname is the lower-case host of a Host header, without port.
func hostname(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

var (
	errOrigin        = occ.E(occ.CodeForbidden, "The request must come from the Agent's own page (Origin).")
	errServiceWorker = occ.E(occ.CodeForbidden, "Service workers are not allowed on native admin hosts.")
)

// ServeHTTP authenticates, authorizes and forwards one request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := occ.WithRequestID(r.Context(), occ.NewID(occ.PrefixRequest))
	r = r.WithContext(ctx)
	token, err := p.sharedToken(r)
	var c occ.Caller
	if err == nil {
		c, err = p.o.App.NativeAdminSession(ctx, token)
	}
	var t app.NativeAdminTarget
	if err == nil {
		t, err = p.o.App.NativeAdminTarget(ctx, c, hostname(r.Host))
	}
	switch {
	case err != nil:
	case r.Header.Get("Service-Worker") != "":
		err = errServiceWorker
	case isWebSocket(r) || !safeMethod(r.Method):
		if r.Header.Get("Origin") != t.Origin {
			err = errOrigin
		}
	}
	if err != nil {
		contract.WriteError(w, r, err)
		return
	}
	if isWebSocket(r) {
		p.serveWebSocket(w, r, c, t, token)
		return
	}
	p.forward(w, r, t)
}

// sharedToken is the value of the one shared cookie; none, or several (a
// cookie planted under the parent domain beside occ's), is refused.
func (p *Proxy) sharedToken(r *http.Request) (string, error) {
	cs := r.CookiesNamed(p.cookie)
	if len(cs) != 1 || cs[0].Value == "" {
		return "", occ.ErrUnauthenticated
	}
	return cs[0].Value, nil
}

func safeMethod(m string) bool { return m == http.MethodGet || m == http.MethodHead }

func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// Close closes every open WebSocket (occ is shutting down).
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	socks := make([]*socket, 0, len(p.sockets))
	for s := range p.sockets {
		socks = append(socks, s)
	}
	p.mu.Unlock()
	for _, s := range socks {
		s.end(app.NativeAdminCloseShutdown)
	}
}
