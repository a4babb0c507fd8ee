package httpapi

import (
	"context"
	"net/http"

	"github.com/openclaw/occ/internal/httpapi/gen"
	"github.com/openclaw/occ/internal/occ"
)

// sessionCookie renders the Set-Cookie value; maxAge < 0 clears it.
func (h *handlers) sessionCookie(token string, maxAge int) string {
	return SessionCookie(h.opts.PublicOrigin, token, maxAge).String()
}

// sharedCookie renders the second cookie of a session when the native admin
// UI is enabled; maxAge < 0 clears it.
func (h *handlers) sharedCookie(token string, maxAge int) string {
	return SharedCookie(h.opts.PublicOrigin, h.opts.NativeAdminCookieDomain, token, maxAge).String()
}

// withCookies adds Set-Cookie headers to a generated response, which can
// carry only one: they are added when the response writes its header.
type withCookies struct {
	http.ResponseWriter
	cookies []string
}

func (w withCookies) WriteHeader(code int) {
	for _, c := range w.cookies {
		w.Header().Add("Set-Cookie", c)
	}
	w.ResponseWriter.WriteHeader(code)
}

// signInResponse and signOutResponse add the shared cookie.
type signInResponse struct {
	gen.SignIn200JSONResponse
	extra []string
}

func (r signInResponse) VisitSignInResponse(w http.ResponseWriter) error {
	return r.SignIn200JSONResponse.VisitSignInResponse(withCookies{w, r.extra})
}

type signOutResponse struct {
	gen.SignOut200JSONResponse
	extra []string
}

func (r signOutResponse) VisitSignOutResponse(w http.ResponseWriter) error {
	return r.SignOut200JSONResponse.VisitSignOutResponse(withCookies{w, r.extra})
}

func sessionOf(p occ.Principal, expires string) gen.Session {
	s := gen.Session{Authenticated: true}
	s.Principal = &struct {
		Email string `json:"email"`
		Id    string `json:"id"`
		Name  string `json:"name"`
	}{Email: p.Email, Id: p.ID, Name: p.Name}
	if expires != "" {
		s.ExpiresAt = &expires
	}
	return s
}

func (h *handlers) SignIn(ctx context.Context, r gen.SignInRequestObject) (gen.SignInResponseObject, error) {
	res, err := h.app.SignIn(ctx, r.Body.Email, r.Body.Password, clientAddr(ctx))
	if err != nil {
		return nil, err
	}
	cookie := h.sessionCookie(res.Token, int(h.opts.SessionLifetime.Seconds()))
	out := gen.SignIn200JSONResponse{Body: gen.SessionEnvelope{Data: sessionOf(res.Principal, occ.FormatTime(res.ExpiresAt)), Meta: meta(ctx)},
		Headers: gen.SignIn200ResponseHeaders{SetCookie: &cookie}}
	if res.SharedToken != "" && h.opts.NativeAdminCookieDomain != "" {
		return signInResponse{out, []string{h.sharedCookie(res.SharedToken, int(h.opts.SessionLifetime.Seconds()))}}, nil
	}
	return out, nil
}

func (h *handlers) SignOut(ctx context.Context, _ gen.SignOutRequestObject) (gen.SignOutResponseObject, error) {
	if err := h.app.SignOut(ctx, callerFrom(ctx)); err != nil {
		return nil, err
	}
	cookie := h.sessionCookie("", -1)
	out := gen.SignOut200JSONResponse{Body: gen.SessionEnvelope{Data: gen.Session{Authenticated: false}, Meta: meta(ctx)},
		Headers: gen.SignOut200ResponseHeaders{SetCookie: &cookie}}
	if h.opts.NativeAdminCookieDomain != "" {
		return signOutResponse{out, []string{h.sharedCookie("", -1)}}, nil
	}
	return out, nil
}

func (h *handlers) GetSession(ctx context.Context, _ gen.GetSessionRequestObject) (gen.GetSessionResponseObject, error) {
	c := callerFrom(ctx)
	if c.Method != occ.AuthSession {
		return gen.GetSession200JSONResponse{Data: gen.Session{Authenticated: false}, Meta: meta(ctx)}, nil
	}
	p, err := h.app.Whoami(ctx, c)
	if err != nil {
		return nil, err
	}
	return gen.GetSession200JSONResponse{Data: sessionOf(p, ""), Meta: meta(ctx)}, nil
}
