package httpapi

import (
	"net/http"
	"strings"
)

// SessionCookie is the session cookie of a sign-in (maxAge < 0 clears it):
// the one place its flags are decided, for the API and the console.
func SessionCookie(origin, token string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: SessionCookieName(origin), Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: strings.HasPrefix(origin, "https://"), MaxAge: maxAge}
}

// SharedCookie is the second cookie of a session when the native admin UI
// is enabled: the shared token, scoped to the shared cookie parent domain
// so that every Agent host receives it; maxAge < 0 clears it.
func SharedCookie(origin, domain, token string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: SharedCookieName(origin), Value: token, Path: "/", Domain: domain,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: strings.HasPrefix(origin, "https://"), MaxAge: maxAge}
}
