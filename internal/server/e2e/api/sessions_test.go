package api_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

func TestSessionsAndCSRF(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := servertest.Boot(t, url, nil)
		const admin = "admin@occ.local"

		if r := e.Call("GET", "/api/auth/session", "", nil); r.Status != 200 || r.Data()["authenticated"] != false {
			t.Fatalf("anonymous session = %d %v", r.Status, r.Body)
		}
		if r := e.Call("POST", "/api/auth/sign-in", "", map[string]any{"email": admin, "password": "wrong password"}); r.Status != 401 {
			t.Fatalf("wrong password = %d", r.Status)
		}
		if r := e.Call("POST", "/api/auth/sign-in", "", map[string]any{"email": admin, "password": servertest.AdminPassword}, "Origin", "https://evil.example"); r.Status != 403 {
			t.Fatalf("sign-in from a foreign origin = %d", r.Status)
		}

		r := e.Call("POST", "/api/auth/sign-in", "", map[string]any{"email": "ADMIN@occ.local", "password": servertest.AdminPassword})
		setCookie := r.Header.Get("Set-Cookie")
		if r.Status != 200 || !strings.Contains(setCookie, "HttpOnly") || !strings.Contains(setCookie, "SameSite=Lax") {
			t.Fatalf("sign-in = %d %v %q", r.Status, r.Body, setCookie)
		}
		if strings.Contains(servertest.ToJSON(r.Body), strings.TrimPrefix(strings.Split(setCookie, ";")[0], "occ_session=")) {
			t.Fatal("the session token appears in the response body")
		}
		cookie := strings.Split(setCookie, ";")[0]

		// Reads need no Origin; writes need the public Origin.
		if r := e.Call("GET", "/namespaces", "", nil, "Cookie", cookie); r.Status != 200 {
			t.Fatalf("session read = %d", r.Status)
		}
		if r := e.Call("GET", "/api/auth/session", "", nil, "Cookie", cookie); r.Data()["authenticated"] != true {
			t.Fatalf("session = %v", r.Body)
		}
		for _, h := range [][]string{
			{"Cookie", cookie},
			{"Cookie", cookie, "Origin", "https://evil.example"},
			{"Cookie", cookie, "Origin", servertest.Origin, "Sec-Fetch-Site", "cross-site"},
		} {
			if r := e.Call("POST", "/namespaces", "", map[string]any{"name": "csrf"}, h...); r.Status != 403 {
				t.Fatalf("cookie write with %v = %d %v", h, r.Status, r.Body)
			}
		}
		if r := e.Call("POST", "/namespaces", "", map[string]any{"name": "csrf-ok"}, "Cookie", cookie, "Origin", servertest.Origin, "Sec-Fetch-Site", "same-origin"); r.Status != 201 {
			t.Fatalf("same-origin cookie write = %d %v", r.Status, r.Body)
		}
		// A key and a cookie together: the key alone counts (here a bad key).
		if r := e.Call("GET", "/namespaces", "occ_"+strings.Repeat("x", 40), nil, "Cookie", cookie); r.Status != 401 {
			t.Fatalf("bad key with a good cookie = %d", r.Status)
		}

		// Sign-out ends the session.
		if r := e.Call("POST", "/api/auth/sign-out", "", nil, "Cookie", cookie, "Origin", servertest.Origin); r.Status != 200 {
			t.Fatalf("sign-out = %d %v", r.Status, r.Body)
		}
		if r := e.Call("GET", "/namespaces", "", nil, "Cookie", cookie); r.Status != 401 {
			t.Fatalf("after sign-out = %d", r.Status)
		}

		// Ten failures in a minute lock the account out with 429 and Retry-After.
		var last servertest.Resp
		for i := 0; i < 11; i++ {
			last = e.Call("POST", "/api/auth/sign-in", "", map[string]any{"email": admin, "password": "wrong password"})
		}
		if last.Status != 429 || last.Header.Get("Retry-After") == "" || last.Code() != "RATE_LIMITED" {
			t.Fatalf("throttled sign-in = %d %v %v", last.Status, last.Body, last.Header)
		}
		if r := e.Call("POST", "/api/auth/sign-in", "", map[string]any{"email": admin, "password": servertest.AdminPassword}); r.Status != 429 {
			t.Fatalf("right password while throttled = %d", r.Status)
		}
	})
}

// TestSignInBurst: a stranger fires parallel wrong sign-ins at the admin's
// email from one address. At most the per-account-and-client limit of them
// is checked (charged before hashing, so concurrency does not slip past
// it); every other gets 429 RATE_LIMITED with Retry-After (over the limit,
// or no hashing slot free in time). Once locked out, the stranger's address
// stays locked out of that account even with the right password, and the
// owner, from another address, signs in.
func TestSignInBurst(t *testing.T) {
	t.Parallel()
	const burst, limit = 24, 10 // limit: auth.signInFailuresPerAccount's default
	e := servertest.Boot(t, storetest.Migrated(t, "sqlite"), nil)
	const admin = "admin@occ.local"
	answers := make([]servertest.Resp, burst)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() { answers[i] = e.SignInFrom("127.0.0.1", admin, "wrong password") })
	}
	wg.Wait()
	checked := 0
	for _, r := range answers {
		switch {
		case r.Status == 401:
			checked++
		case r.Status != 429 || r.Code() != "RATE_LIMITED" || r.Header.Get("Retry-After") == "":
			t.Fatalf("answer to a wrong sign-in in a burst = %d %v %v", r.Status, r.Body, r.Header)
		}
	}
	if checked > limit {
		t.Fatalf("%d of %d parallel wrong sign-ins were checked, want at most %d", checked, burst, limit)
	}
	// Attempts refused for lack of a hashing slot were not charged: guess
	// on until the address is locked out of the account.
	for i := 0; ; i++ {
		if r := e.SignInFrom("127.0.0.1", admin, "wrong password"); r.Status == 429 {
			break
		} else if r.Status != 401 || i == limit {
			t.Fatalf("wrong sign-in %d after the burst = %d %v", i, r.Status, r.Body)
		}
	}
	if r := e.SignInFrom("127.0.0.1", admin, servertest.AdminPassword); r.Status != 429 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("right password from the locked-out address = %d %v", r.Status, r.Body)
	}
	if r := e.SignInFrom("127.0.0.2", admin, servertest.AdminPassword); r.Status != 200 {
		t.Fatalf("the owner from another address = %d %v", r.Status, r.Body)
	}
}
