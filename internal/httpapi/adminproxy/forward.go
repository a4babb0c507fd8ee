package adminproxy

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/httpapi/contract"
	"github.com/openclaw/occ/internal/httpapi/limit"
	"github.com/openclaw/occ/internal/occ"
)

// strippedHeaders never travel from the browser to a gateway: occ's own
// credentials, any forwarding chain, and any identity or scope claim (the
// gateway would trust them from occ's address).
var strippedHeaders = []string{"Cookie", "Authorization", "Proxy-Authorization", "Forwarded", "X-Real-Ip",
	"X-Forwarded-User", "X-Openclaw-Scopes", gateway.NativeAdminUserHeader}

// stripRequest removes strippedHeaders and every X-Forwarded-* and X-Occ-*
// header, then sets the identity and forwarding headers the gateway
// trusts from occ.
func (p *Proxy) stripRequest(h http.Header, in *http.Request, identity string) {
	for _, k := range strippedHeaders {
		h.Del(k)
	}
	for k := range h {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-forwarded-") || strings.HasPrefix(lk, "x-occ-") {
			delete(h, k)
		}
	}
	h.Set(gateway.NativeAdminUserHeader, identity)
	h.Set("X-Forwarded-For", clientAddress(limit.ClientAddr(in)))
	h.Set("X-Forwarded-Host", in.Host)
	proto := "http"
	if strings.HasPrefix(p.o.PublicOrigin, "https://") {
		proto = "https"
	}
	h.Set("X-Forwarded-Proto", proto)
}

// clientAddress is the browser's address (limit.ClientAddr: behind a
// trusted proxy, the address it forwarded for; the browser's own
// X-Forwarded-For never travels on) when the gateway can attribute it (not
// loopback or unspecified), else fallbackClient.
func clientAddress(addr string) string {
	ip := net.ParseIP(addr)
	if ip == nil || ip.IsLoopback() || ip.IsUnspecified() {
		return fallbackClient
	}
	return ip.String()
}

// forward proxies one HTTP request to the gateway.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, t app.NativeAdminTarget) {
	upstream, err := url.Parse(t.Upstream)
	if err != nil {
		contract.WriteError(w, r, occ.Unavailable(err))
		return
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(upstream)
			pr.Out.Host = pr.In.Host // the gateway checks the public host against its allowed origin
			p.stripRequest(pr.Out.Header, pr.In, t.Identity)
		},
		ModifyResponse: func(res *http.Response) error {
			filterResponse(res.Header, t)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			contract.WriteError(w, r, occ.Wrap(occ.CodeDependencyUnavailable, "The Agent's gateway did not answer.", err))
		},
	}
	rp.ServeHTTP(w, r)
}

// filterResponse drops Set-Cookie headers with a Domain or an occ cookie
// name, points private Location headers at the Agent's origin, and forbids
// workers.
func filterResponse(h http.Header, t app.NativeAdminTarget) {
	kept := h.Values("Set-Cookie")[:0:0]
	for _, line := range h.Values("Set-Cookie") {
		if keepCookie(line) {
			kept = append(kept, line)
		}
	}
	h.Del("Set-Cookie")
	for _, line := range kept {
		h.Add("Set-Cookie", line)
	}
	if loc := h.Get("Location"); strings.HasPrefix(loc, t.Upstream) {
		h.Set("Location", t.Origin+strings.TrimPrefix(loc, t.Upstream))
	}
	h.Add("Content-Security-Policy", "worker-src 'none'")
}

// keepCookie reports whether an upstream Set-Cookie line may reach the
// browser: host-only, and not one of occ's names.
func keepCookie(line string) bool {
	c, err := http.ParseSetCookie(line)
	if err != nil {
		return false
	}
	name := strings.ToLower(c.Name)
	name = strings.TrimPrefix(strings.TrimPrefix(name, "__host-"), "__secure-")
	if strings.HasPrefix(name, "occ_") {
		return false
	}
	for _, attr := range strings.Split(line, ";")[1:] {
		k, _, _ := strings.Cut(strings.TrimSpace(attr), "=")
		if strings.EqualFold(strings.TrimSpace(k), "domain") {
			return false
		}
	}
	return true
}
