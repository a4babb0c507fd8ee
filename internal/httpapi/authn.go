package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/httpapi/contract"
	"github.com/openclaw/occ/internal/httpapi/limit"
	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/occ"
)

type callerKey struct{}

// callerFrom returns the authenticated caller of a request.
func callerFrom(ctx context.Context) occ.Caller {
	c, _ := ctx.Value(callerKey{}).(occ.Caller)
	return c
}

type clientKey struct{}

// clientAddr returns the client's address (for sign-in throttling).
func clientAddr(ctx context.Context) string {
	s, _ := ctx.Value(clientKey{}).(string)
	return s
}

// authenticator resolves the caller of every non-public route.
type authenticator struct {
	authn      *iam.Authenticator
	log        *slog.Logger
	origin     string         // the public origin session writes must come from
	cookie     string         // session cookie name
	principals *limit.Buckets // one bucket per authenticated principal
}

// middleware authenticates with "Authorization: Bearer occ_…" and puts the
// caller and request ID in the context. Public routes (security: [] in the
// spec) pass without credentials. Every request of an authenticated
// principal counts against its bucket before anything else is checked, so
// requests that will be denied count too; an empty bucket is 429.
func (a *authenticator) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := occ.WithRequestID(r.Context(), contract.RequestID(r.Context()))
		ctx = context.WithValue(ctx, clientKey{}, limit.ClientAddr(r))
		if rt := contract.RouteFrom(ctx); rt != nil && isPublic(rt) {
			if err := a.checkPublicOrigin(r); err != nil {
				contract.WriteError(w, r, err)
				return
			}
			// A public route may still look at a valid session (GET /api/auth/session).
			if c, err := a.authenticate(ctx, r); err == nil && c.Method == occ.AuthSession {
				contract.SetPrincipal(ctx, c.PrincipalID)
				if err := a.take(c); err != nil {
					contract.WriteError(w, r, err)
					return
				}
				ctx = context.WithValue(ctx, callerKey{}, c)
			}
			next.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		c, err := a.authenticate(ctx, r)
		if err == nil {
			contract.SetPrincipal(ctx, c.PrincipalID)
			err = a.take(c)
		}
		if err == nil && c.Method == occ.AuthSession && !safeMethod(r.Method) {
			err = a.checkCSRF(r)
		}
		if err != nil {
			contract.WriteError(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, callerKey{}, c)))
	})
}

// take counts one request of c's principal, or refuses it.
func (a *authenticator) take(c occ.Caller) error {
	if ok, wait := a.principals.Take(c.PrincipalID); !ok {
		return occ.RateLimited(occ.MsgRateLimitedPrincipal, wait)
	}
	return nil
}

// isPublic reports whether the operation declares no security requirement.
func isPublic(rt *contract.Route) bool {
	return rt.Operation != nil && rt.Operation.Security != nil && len(*rt.Operation.Security) == 0
}

// authenticate uses the service key when an Authorization header is sent
// (never falling back to a cookie), otherwise the session cookie.
func (a *authenticator) authenticate(ctx context.Context, r *http.Request) (occ.Caller, error) {
	h := r.Header.Values("Authorization")
	if len(h) == 0 {
		cookies := r.CookiesNamed(a.cookie)
		if len(cookies) != 1 {
			return occ.Caller{}, occ.ErrUnauthenticated // none, or ambiguous duplicates
		}
		return a.authn.Session(ctx, cookies[0].Value)
	}
	if len(h) != 1 {
		return occ.Caller{}, occ.ErrUnauthenticated
	}
	scheme, key, ok := strings.Cut(h[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return occ.Caller{}, occ.ErrUnauthenticated
	}
	return a.authn.ServiceKey(ctx, strings.TrimSpace(key))
}

// requireAdmin guards a non-API handler (metrics) with installation:administer.
func (a *authenticator) requireAdmin(ap *app.App, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := a.authenticate(r.Context(), r)
		if err == nil {
			err = ap.RequireInstallationAdmin(r.Context(), c, "metrics.read")
		}
		if err != nil {
			contract.WriteError(w, r, err)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

var errOrigin = occ.E(occ.CodeForbidden, occ.MsgUntrustedOrigin)

// checkCSRF guards a cookie-authenticated write: Origin must be the public
// origin, and Sec-Fetch-Site, when sent, must say same-origin.
func (a *authenticator) checkCSRF(r *http.Request) error {
	if r.Header.Get("Origin") != a.origin {
		return errOrigin
	}
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" {
		return errOrigin
	}
	return nil
}

// checkPublicOrigin refuses a public write (sign-in) from an explicitly
// foreign browser origin, while allowing clients that send no Origin (CLI).
func (a *authenticator) checkPublicOrigin(r *http.Request) error {
	if safeMethod(r.Method) {
		return nil
	}
	if o := r.Header.Get("Origin"); o != "" && o != a.origin {
		return errOrigin
	}
	if r.Header.Get("Origin") == "" && r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return errOrigin
	}
	return nil
}
