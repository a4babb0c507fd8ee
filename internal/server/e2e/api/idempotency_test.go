package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := servertest.Boot(t, url, nil)
		first := e.Call("POST", "/namespaces", e.Admin, map[string]any{"name": "idem"}, "Idempotency-Key", "k-1")
		again := e.Call("POST", "/namespaces", e.Admin, map[string]any{"name": "idem"}, "Idempotency-Key", "k-1")
		if first.Status != 201 || again.Status != 201 || again.Data()["id"] != first.Data()["id"] || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: first %d %v, again %d %v", first.Status, first.Body, again.Status, again.Body)
		}
		if n, _ := e.M.Store().CountNamespaces(context.Background()); n != 2 {
			t.Fatalf("%d namespaces after a replayed create, want 2 (default + idem)", n)
		}
		if r := e.Call("POST", "/namespaces", e.Admin, map[string]any{"name": "other"}, "Idempotency-Key", "k-1"); r.Status != 400 {
			t.Fatalf("same key, other body = %d %v", r.Status, r.Body)
		}
		// A failed request releases its key: fix the body and retry with it.
		if r := e.Call("POST", "/namespaces", e.Admin, map[string]any{"name": "idem"}, "Idempotency-Key", "k-2"); r.Status != 409 {
			t.Fatalf("duplicate name = %d", r.Status)
		}
		if r := e.Call("POST", "/namespaces", e.Admin, map[string]any{"name": "idem"}, "Idempotency-Key", "k-2"); r.Status != 409 {
			t.Fatalf("retry after failure = %d, want the real answer again", r.Status)
		}
		// Keys belong to their caller.
		other, _ := e.Principal(servertest.Grant{Perms: nsCreate})
		if r := e.Call("POST", "/namespaces", other, map[string]any{"name": "idem-other"}, "Idempotency-Key", "k-1"); r.Status != 201 {
			t.Fatalf("another caller's key = %d %v", r.Status, r.Body)
		}
		if r := e.Call("POST", "/namespaces", e.Admin, map[string]any{"name": "x"}, "Idempotency-Key", strings.Repeat("k", 256)); r.Status != 400 {
			t.Fatalf("bad key = %d", r.Status)
		}
	})
}

// TestIdempotencyKeyRefusedWhereNotReplayed: a POST that cannot replay its
// first response (a service key is shown once; an account, a sign-in)
// refuses an Idempotency-Key with 400 naming the header and changes
// nothing, instead of ignoring it and letting the client's retry create a
// second key (found by TestMutationSoak on PostgreSQL). Without the header
// the same request succeeds.
func TestIdempotencyKeyRefusedWhereNotReplayed(t *testing.T) {
	t.Parallel()
	e := servertest.Boot(t, storetest.Migrated(t, "sqlite"), nil)
	sp := e.Call("POST", "/iam/service-principals", e.Admin, map[string]any{"name": "keyed"})
	if sp.Status != 201 {
		t.Fatalf("service principal = %d %v", sp.Status, sp.Body)
	}
	keyBody := map[string]any{"servicePrincipalId": sp.Data()["id"], "name": "k"}
	human := map[string]any{"email": "idem@occ.test", "name": "Idem", "password": "a long enough password"}
	for _, c := range []struct {
		path string
		body map[string]any
	}{{"/api/auth/service-keys", keyBody}, {"/iam/principals", human}} {
		r := e.Call("POST", c.path, e.Admin, c.body, "Idempotency-Key", "k-1")
		if path, code := r.Detail(); r.Status != 400 || path != "/Idempotency-Key" || code != "INVALID_VALUE" {
			t.Fatalf("POST %s with a key = %d %v; want 400 naming /Idempotency-Key", c.path, r.Status, r.Body)
		}
		if r := e.Call("POST", c.path, e.Admin, c.body); r.Status != 201 {
			t.Fatalf("POST %s without a key = %d %v", c.path, r.Status, r.Body)
		}
	}
	if r := e.Call("GET", "/api/auth/service-keys", e.Admin, nil); countNamed(r.List(), "k") != 1 {
		t.Fatalf("service keys named k: %v; want one", r.List())
	}
}

func countNamed(items []any, name string) int {
	n := 0
	for _, it := range items {
		if it.(map[string]any)["name"] == name {
			n++
		}
	}
	return n
}

// TestIdempotencyDigestIsKeyed: the stored request digest is an HMAC with an
// installation key, not a plain hash a database reader could test guesses
// of a Secret's value against.
func TestIdempotencyDigestIsKeyed(t *testing.T) {
	t.Parallel()
	e := servertest.Boot(t, storetest.Migrated(t, "sqlite"), nil)
	ns := e.CreateNamespace("idem-secret")
	body := `{"name":"tok","value":"short"}`
	if r := e.Call("POST", "/namespaces/"+ns+"/secrets", e.Admin, body, "Idempotency-Key", "s-1"); r.Status != 201 {
		t.Fatalf("create = %d %v", r.Status, r.Body)
	}
	var digest string
	if err := e.M.Store().DB().QueryRow(`SELECT request_digest FROM idempotency_keys WHERE idem_key = 's-1'`).Scan(&digest); err != nil {
		t.Fatal(err)
	}
	plain := sha256.Sum256([]byte("createSecret\n/namespaces/" + ns + "/secrets\n" + body))
	if digest == hex.EncodeToString(plain[:]) || len(digest) != 64 {
		t.Fatalf("stored digest %q is the unkeyed hash", digest)
	}
	if r := e.Call("POST", "/namespaces/"+ns+"/secrets", e.Admin, body, "Idempotency-Key", "s-1"); r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay = %d %v", r.Status, r.Body)
	}
}
