package console

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/openclaw/occ/internal/httpapi"
	"github.com/openclaw/occ/internal/httpapi/limit"
	"github.com/openclaw/occ/internal/occ"
)

// session is the signed-in person of a request.
type session struct {
	caller occ.Caller
	who    occ.Principal
	csrf   string // the token every form of this session carries
}

type sessionKey struct{}

func sessionFrom(ctx context.Context) *session {
	s, _ := ctx.Value(sessionKey{}).(*session)
	return s
}

// csrfToken derives the forms' token from the session token: only someone
// holding the (HttpOnly) session cookie can compute it, and every occ
// replica computes the same one.
func csrfToken(sessionToken string) string {
	sum := sha256.Sum256([]byte("occ console csrf\x00" + sessionToken))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// signedIn wraps a page that needs a session. Without a valid one (none,
// expired, revoked) a GET goes to the sign-in page, which comes back to
// it; a POST is refused with the sign-in page. A POST must carry the
// session's CSRF token and come from the public origin.
func (c *Console) signedIn(next func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, err := c.session(r)
		if err != nil {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				http.Redirect(w, r, Prefix+"sign-in?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			c.renderSignInKeeping(w, r)
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, c.opts.BodyLimit)
			if err := c.checkWrite(r, s); err != nil {
				c.fail(w, r, s, err)
				return
			}
		}
		next(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, s)), s)
	}
}

const msgSessionEnded = "Your session has ended. Sign in again to continue."

// session authenticates the request's session cookie, as the API does.
func (c *Console) session(r *http.Request) (*session, error) {
	cookies := r.CookiesNamed(httpapi.SessionCookieName(c.opts.PublicOrigin))
	if len(cookies) != 1 {
		return nil, occ.ErrUnauthenticated
	}
	caller, err := c.opts.Authn.Session(r.Context(), cookies[0].Value)
	if err != nil {
		return nil, err
	}
	who, err := c.app.Whoami(r.Context(), caller)
	if err != nil {
		return nil, err
	}
	return &session{caller: caller, who: who, csrf: csrfToken(cookies[0].Value)}, nil
}

var errForgedWrite = occ.E(occ.CodeForbidden, "This form did not come from this console page: reload the page and try again.")

// checkWrite refuses a cookie-authenticated write that lacks the session's
// CSRF token or comes from another origin.
func (c *Console) checkWrite(r *http.Request, s *session) error {
	if err := c.checkOrigin(r); err != nil {
		return err
	}
	if err := r.ParseForm(); err != nil {
		return occ.E(occ.CodeInvalidRequest, "The form could not be read.")
	}
	got := r.PostForm.Get("csrf")
	if subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) != 1 {
		return errForgedWrite
	}
	return nil
}

// checkOrigin refuses a write whose Origin is not the public origin or
// whose Sec-Fetch-Site says another site sent it.
func (c *Console) checkOrigin(r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" && o != c.opts.PublicOrigin {
		return errForgedWrite
	}
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" && s != "none" {
		return errForgedWrite
	}
	return nil
}

// signInPage shows the sign-in form (or, signed in, goes on).
func (c *Console) signInPage(w http.ResponseWriter, r *http.Request) {
	if _, err := c.session(r); err == nil {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	c.renderSignIn(w, r, http.StatusOK, "", "")
}

// signIn checks the password through the API's sign-in use case and sets
// the same cookies the API's sign-in sets.
func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, c.opts.BodyLimit)
	if err := c.checkOrigin(r); err != nil {
		c.renderSignIn(w, r, http.StatusForbidden, occ.AsError(err).Message, "")
		return
	}
	if err := r.ParseForm(); err != nil {
		c.renderSignIn(w, r, http.StatusBadRequest, "The form could not be read.", "")
		return
	}
	email := r.PostForm.Get("email")
	res, err := c.app.SignIn(r.Context(), email, r.PostForm.Get("password"), limit.ClientAddr(r))
	if err != nil {
		oe := occ.AsError(err)
		if oe == nil {
			c.log.ErrorContext(r.Context(), "console sign-in", "error", err)
			oe = occ.Unavailable(err)
		}
		if oe.RetryAfter > 0 {
			w.Header().Set("Retry-After", itoa(oe.RetryAfter))
		}
		c.renderSignIn(w, r, statusOf(oe.Code), oe.Message, email)
		return
	}
	age := int(c.opts.SessionLifetime.Seconds())
	http.SetCookie(w, httpapi.SessionCookie(c.opts.PublicOrigin, res.Token, age))
	if res.SharedToken != "" && c.opts.NativeAdminCookieDomain != "" {
		http.SetCookie(w, httpapi.SharedCookie(c.opts.PublicOrigin, c.opts.NativeAdminCookieDomain, res.SharedToken, age))
	}
	http.Redirect(w, r, safeNext(r.PostForm.Get("next")), http.StatusSeeOther)
}

// signOut ends the session through the API's sign-out use case and clears
// the cookies.
func (c *Console) signOut(w http.ResponseWriter, r *http.Request, s *session) {
	if err := c.app.SignOut(r.Context(), s.caller); err != nil {
		c.fail(w, r, s, err)
		return
	}
	http.SetCookie(w, httpapi.SessionCookie(c.opts.PublicOrigin, "", -1))
	if c.opts.NativeAdminCookieDomain != "" {
		http.SetCookie(w, httpapi.SharedCookie(c.opts.PublicOrigin, c.opts.NativeAdminCookieDomain, "", -1))
	}
	http.Redirect(w, r, Prefix+"sign-in", http.StatusSeeOther)
}

// safeNext keeps a sign-in's return path inside the console (never another
// host: "//evil" and "/\evil" are refused).
func safeNext(next string) string {
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.Contains(next, "\\") ||
		!Owns(strings.SplitN(strings.SplitN(next, "?", 2)[0], "#", 2)[0]) {
		return Prefix
	}
	return next
}

func (c *Console) renderSignIn(w http.ResponseWriter, r *http.Request, status int, message, email string) {
	next := r.URL.Query().Get("next")
	if r.Method == http.MethodPost {
		next = r.PostFormValue("next")
	}
	c.render(w, r, status, "sign-in", &view{Title: "Sign in", Error: message, Data: signInData{Email: email, Next: safeNext(next)}})
}

type signInData struct {
	Email string
	Next  string
	Kept  []keptField // what a form sent after its session ended
}

// keptField is one field of a form whose session ended, shown back so it
// is not lost; secret values and tokens are never among them.
type keptField struct{ Name, Value string }

// notKept are the fields never shown back: the form token, passwords,
// Secret values and the hidden fields a person did not type.
var notKept = map[string]bool{"csrf": true, "password": true, "value": true, "version": true, "workspaceDefaultsId": true}

// renderSignInKeeping answers a write whose session ended: the sign-in
// page, returning to the page the form was on, with the form's text shown
// back read-only to copy.
func (c *Console) renderSignInKeeping(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, c.opts.BodyLimit)
	d := signInData{Next: safeNext(formPage(r.URL.Path))}
	if err := r.ParseForm(); err == nil {
		names := make([]string, 0, len(r.PostForm))
		for name := range r.PostForm {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if v := r.PostForm.Get(name); !notKept[name] && strings.TrimSpace(v) != "" && v != "1" {
				d.Kept = append(d.Kept, keptField{Name: name, Value: formText(v)})
			}
		}
	}
	c.render(w, r, http.StatusUnauthorized, "sign-in", &view{Title: "Sign in", Error: msgSessionEnded, Data: d})
}

// formPage is the page a form posting to path was on: the path without a
// trailing action ("/deploy", "/delete"…), and a Secret's or an IAM
// form's list page; a form that posts to its own page (a file, a
// Configuration) stays.
func formPage(path string) string {
	for _, suffix := range []string{"/deploy", "/stop", "/delete", "/diagnostics", "/roles", "/bindings"} {
		if p, ok := strings.CutSuffix(path, suffix); ok {
			path = p
			break
		}
	}
	for _, list := range []string{"/secrets/", "/iam/"} {
		if before, _, ok := strings.Cut(path, list); ok {
			return before + strings.TrimSuffix(list, "/")
		}
	}
	return path
}
