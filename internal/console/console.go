// Package console serves occ's web console: server-rendered pages (Go
// html/template, so every value is escaped for where it appears) under
// /console/ and at /, signed in with the API's session cookie. Every page
// and action calls the same use cases (internal/app) with the signed-in
// caller, so what a person may see and do is decided exactly as for the
// API; the buttons a page offers are only a preview of those decisions.
// Writes are HTML form POSTs carrying a CSRF token; pages work without
// JavaScript, and one small script of occ's own (static/console.js) adds
// the live deployment timeline. No third-party origin is ever contacted:
// the Content-Security-Policy allows only occ's own files.
package console

import (
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/occ"
)

// Prefix is the console's own path prefix; no API path starts with it.
const Prefix = "/console/"

// CSP is the Content-Security-Policy of every console response: occ's own
// scripts, styles and images only, no inline code, no framing, forms
// posting only to occ, and event streams only from occ.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configure the console.
type Options struct {
	App   *app.App
	Authn *iam.Authenticator
	// PublicOrigin is scheme://host[:port] browsers use; cookie-authenticated
	// writes must come from it.
	PublicOrigin    string
	SessionLifetime time.Duration
	// NativeAdminCookieDomain, when the native admin UI is enabled, is where
	// sign-in also sets the shared cookie (as the API's sign-in does).
	NativeAdminCookieDomain string
	// WorkspaceDefaults returns the four rendered default workspace files
	// of the pinned runtime and their identity (workspaceDefaultsId), which
	// the Create Agent form starts from; an error when they are not
	// available here (no runtime installed). Nil: never available.
	WorkspaceDefaults func() (files map[string]string, id string, err error)
	// BodyLimit bounds a form body (limits.agentCreateBodyBytes: the
	// largest form is Create Agent with its four files).
	BodyLimit int64
	Logger    *slog.Logger
}

// Console is the console's HTTP handler.
type Console struct {
	opts  Options
	app   *app.App
	mux   *http.ServeMux
	pages map[string]*pageTemplate
	log   *slog.Logger
}

// New builds the console.
func New(o Options) (*Console, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.BodyLimit <= 0 {
		o.BodyLimit = 1 << 20
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	c := &Console{opts: o, app: o.App, mux: http.NewServeMux(), pages: pages, log: o.Logger}
	c.routes()
	return c, nil
}

// Owns reports whether the console answers path: "/" and everything under
// Prefix.
func Owns(path string) bool {
	return path == "/" || strings.HasPrefix(path, Prefix) || path == strings.TrimSuffix(Prefix, "/")
}

// Route sends the console's paths to the console and everything else to
// next (the API).
func (c *Console) Route(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !Owns(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		c.ServeHTTP(w, r)
	})
}

// ServeHTTP answers one console request, with the console's security
// headers on every response.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("X-Request-Id", occ.NewID(occ.PrefixRequest))
	if !strings.HasPrefix(r.URL.Path, Prefix+"static/") {
		h.Set("Cache-Control", "no-store")
	}
	c.mux.ServeHTTP(w, r)
}

// static serves the embedded stylesheet and script.
func (c *Console) static() http.Handler {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err) // the embedded directory is part of the binary
	}
	files := http.StripPrefix(Prefix+"static/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		files.ServeHTTP(w, r)
	})
}
