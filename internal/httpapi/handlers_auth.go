package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/openclaw/occ/internal/httpapi/gen"
	"github.com/openclaw/occ/internal/occ"
)

// sessionCookie renders the Set-Cookie value; maxAge < 0 clears it.
func (h *handlers) sessionCookie(token string, maxAge int) string {
	c := &http.Cookie{Name: SessionCookieName(h.opts.PublicOrigin), Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: strings.HasPrefix(h.opts.PublicOrigin, "https://"), MaxAge: maxAge}
	return c.String()
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
	return gen.SignIn200JSONResponse{Body: gen.SessionEnvelope{Data: sessionOf(res.Principal, occ.FormatTime(res.ExpiresAt)), Meta: meta(ctx)},
		Headers: gen.SignIn200ResponseHeaders{SetCookie: &cookie}}, nil
}

func (h *handlers) SignOut(ctx context.Context, _ gen.SignOutRequestObject) (gen.SignOutResponseObject, error) {
	if err := h.app.SignOut(ctx, callerFrom(ctx)); err != nil {
		return nil, err
	}
	cookie := h.sessionCookie("", -1)
	return gen.SignOut200JSONResponse{Body: gen.SessionEnvelope{Data: gen.Session{Authenticated: false}, Meta: meta(ctx)},
		Headers: gen.SignOut200ResponseHeaders{SetCookie: &cookie}}, nil
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
