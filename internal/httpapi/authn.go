package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/httpapi/wire"
	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/occ"
)

type callerKey struct{}

// callerFrom returns the authenticated caller of a request.
func callerFrom(ctx context.Context) occ.Caller {
	c, _ := ctx.Value(callerKey{}).(occ.Caller)
	return c
}

// authenticator resolves the caller of every non-public route.
type authenticator struct {
	authn *iam.Authenticator
	log   *slog.Logger
}

// middleware authenticates with "Authorization: Bearer occ_…" and puts the
// caller and request ID in the context. Public routes (security: [] in the
// spec) pass without credentials.
func (a *authenticator) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := occ.WithRequestID(r.Context(), wire.RequestID(r.Context()))
		if rt := wire.RouteFrom(ctx); rt != nil && isPublic(rt) {
			next.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		c, err := a.authenticate(ctx, r)
		if err != nil {
			wire.WriteError(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, callerKey{}, c)))
	})
}

// isPublic reports whether the operation declares no security requirement.
func isPublic(rt *wire.Route) bool {
	return rt.Operation != nil && rt.Operation.Security != nil && len(*rt.Operation.Security) == 0
}

func (a *authenticator) authenticate(ctx context.Context, r *http.Request) (occ.Caller, error) {
	h := r.Header.Values("Authorization")
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
			wire.WriteError(w, r, err)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}
