package server_test

import (
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/store/storetest"
)

func TestSessionsAndCSRF(t *testing.T) {
	storetest.Each(t, func(t *testing.T, url string) {
		e := boot(t, url, nil)
		const admin = "admin@occ.local"

		if r := e.call("GET", "/api/auth/session", "", nil); r.Status != 200 || r.data()["authenticated"] != false {
			t.Fatalf("anonymous session = %d %v", r.Status, r.Body)
		}
		if r := e.call("POST", "/api/auth/sign-in", "", map[string]any{"email": admin, "password": "wrong password"}); r.Status != 401 {
			t.Fatalf("wrong password = %d", r.Status)
		}
		if r := e.call("POST", "/api/auth/sign-in", "", map[string]any{"email": admin, "password": adminPassword}, "Origin", "https://evil.example"); r.Status != 403 {
			t.Fatalf("sign-in from a foreign origin = %d", r.Status)
		}

		r := e.call("POST", "/api/auth/sign-in", "", map[string]any{"email": "ADMIN@occ.local", "password": adminPassword})
		setCookie := r.Header.Get("Set-Cookie")
		if r.Status != 200 || !strings.Contains(setCookie, "HttpOnly") || !strings.Contains(setCookie, "SameSite=Lax") {
			t.Fatalf("sign-in = %d %v %q", r.Status, r.Body, setCookie)
		}
		if strings.Contains(toJSON(r.Body), strings.TrimPrefix(strings.Split(setCookie, ";")[0], "occ_session=")) {
			t.Fatal("the session token appears in the response body")
		}
		cookie := strings.Split(setCookie, ";")[0]

		// Reads need no Origin; writes need the public Origin.
		if r := e.call("GET", "/namespaces", "", nil, "Cookie", cookie); r.Status != 200 {
			t.Fatalf("session read = %d", r.Status)
		}
		if r := e.call("GET", "/api/auth/session", "", nil, "Cookie", cookie); r.data()["authenticated"] != true {
			t.Fatalf("session = %v", r.Body)
		}
		for _, h := range [][]string{
			{"Cookie", cookie},
			{"Cookie", cookie, "Origin", "https://evil.example"},
			{"Cookie", cookie, "Origin", origin, "Sec-Fetch-Site", "cross-site"},
		} {
			if r := e.call("POST", "/namespaces", "", map[string]any{"name": "csrf"}, h...); r.Status != 403 {
				t.Fatalf("cookie write with %v = %d %v", h, r.Status, r.Body)
			}
		}
		if r := e.call("POST", "/namespaces", "", map[string]any{"name": "csrf-ok"}, "Cookie", cookie, "Origin", origin, "Sec-Fetch-Site", "same-origin"); r.Status != 201 {
			t.Fatalf("same-origin cookie write = %d %v", r.Status, r.Body)
		}
		// A key and a cookie together: the key alone counts (here a bad key).
		if r := e.call("GET", "/namespaces", "occ_"+strings.Repeat("x", 40), nil, "Cookie", cookie); r.Status != 401 {
			t.Fatalf("bad key with a good cookie = %d", r.Status)
		}

		// Sign-out ends the session.
		if r := e.call("POST", "/api/auth/sign-out", "", nil, "Cookie", cookie, "Origin", origin); r.Status != 200 {
			t.Fatalf("sign-out = %d %v", r.Status, r.Body)
		}
		if r := e.call("GET", "/namespaces", "", nil, "Cookie", cookie); r.Status != 401 {
			t.Fatalf("after sign-out = %d", r.Status)
		}

		// Ten failures in a minute lock the account out with 429 and Retry-After.
		var last resp
		for i := 0; i < 11; i++ {
			last = e.call("POST", "/api/auth/sign-in", "", map[string]any{"email": admin, "password": "wrong password"})
		}
		if last.Status != 429 || last.Header.Get("Retry-After") == "" || last.code() != "RATE_LIMITED" {
			t.Fatalf("throttled sign-in = %d %v %v", last.Status, last.Body, last.Header)
		}
		if r := e.call("POST", "/api/auth/sign-in", "", map[string]any{"email": admin, "password": adminPassword}); r.Status != 429 {
			t.Fatalf("right password while throttled = %d", r.Status)
		}
	})
}
