package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/store/storetest"
)

func TestIdempotencyKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, url string) {
		e := boot(t, url, nil)
		first := e.call("POST", "/namespaces", e.admin, map[string]any{"name": "idem"}, "Idempotency-Key", "k-1")
		again := e.call("POST", "/namespaces", e.admin, map[string]any{"name": "idem"}, "Idempotency-Key", "k-1")
		if first.Status != 201 || again.Status != 201 || again.data()["id"] != first.data()["id"] || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: first %d %v, again %d %v", first.Status, first.Body, again.Status, again.Body)
		}
		if n, _ := e.m.Store().CountNamespaces(context.Background()); n != 2 {
			t.Fatalf("%d namespaces after a replayed create, want 2 (default + idem)", n)
		}
		if r := e.call("POST", "/namespaces", e.admin, map[string]any{"name": "other"}, "Idempotency-Key", "k-1"); r.Status != 400 {
			t.Fatalf("same key, other body = %d %v", r.Status, r.Body)
		}
		// A failed request releases its key: fix the body and retry with it.
		if r := e.call("POST", "/namespaces", e.admin, map[string]any{"name": "idem"}, "Idempotency-Key", "k-2"); r.Status != 409 {
			t.Fatalf("duplicate name = %d", r.Status)
		}
		if r := e.call("POST", "/namespaces", e.admin, map[string]any{"name": "idem"}, "Idempotency-Key", "k-2"); r.Status != 409 {
			t.Fatalf("retry after failure = %d, want the real answer again", r.Status)
		}
		// Keys belong to their caller.
		other, _ := e.principal(grant{perms: nsCreate})
		if r := e.call("POST", "/namespaces", other, map[string]any{"name": "idem-other"}, "Idempotency-Key", "k-1"); r.Status != 201 {
			t.Fatalf("another caller's key = %d %v", r.Status, r.Body)
		}
		if r := e.call("POST", "/namespaces", e.admin, map[string]any{"name": "x"}, "Idempotency-Key", strings.Repeat("k", 256)); r.Status != 400 {
			t.Fatalf("bad key = %d", r.Status)
		}
	})
}
