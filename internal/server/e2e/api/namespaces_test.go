package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

func TestNamespaceLifecycle(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := servertest.Boot(t, url, nil)

		// The default Namespace exists and becomes ready.
		r := e.Call("GET", "/namespaces", e.Admin, nil)
		if r.Status != 200 || len(r.List()) != 1 || r.List()[0].(map[string]any)["name"] != "default" {
			t.Fatalf("GET /namespaces = %d %v", r.Status, r.Body)
		}
		e.WaitStatus(r.List()[0].(map[string]any)["id"].(string), "ready")

		// Create → provisioning → ready.
		r = e.Call("POST", "/namespaces", e.Admin, map[string]any{"name": "team-blue"})
		if r.Status != 201 || r.Data()["status"] != "provisioning" || r.Header.Get("ETag") != `"1"` {
			t.Fatalf("create = %d %v %v", r.Status, r.Body, r.Header)
		}
		id := r.Data()["id"].(string)
		e.WaitStatus(id, "ready")

		// Names are unique; bad names and bodies are 400 and keep nothing.
		if r := e.Call("POST", "/namespaces", e.Admin, map[string]any{"name": "team-blue"}); r.Status != 409 || r.Code() != "RESOURCE_CONFLICT" {
			t.Fatalf("duplicate name = %d %v", r.Status, r.Body)
		}
		for _, body := range []any{map[string]any{"name": " padded"}, map[string]any{"name": ""}, map[string]any{"name": 3},
			map[string]any{}, map[string]any{"name": "x", "id": "ns_1"}, `{"name":"a","__proto__":{}}`, `{"name":`, `{"name":"a\udc00"}`} {
			if r := e.Call("POST", "/namespaces", e.Admin, body); r.Status != 400 || r.Code() != "INVALID_REQUEST" {
				t.Fatalf("bad body %v = %d %v", body, r.Status, r.Body)
			}
		}
		if r := e.Call("POST", "/namespaces", e.Admin, "name=x", "Content-Type", "text/plain"); r.Status != 415 {
			t.Fatalf("text body = %d %v", r.Status, r.Body)
		}

		// Rename with If-Match: a stale tag is 412, the current one works.
		if r := e.Call("PATCH", "/namespaces/"+id, e.Admin, map[string]any{"name": "team-green"}, "If-Match", `"7"`); r.Status != 412 {
			t.Fatalf("stale If-Match = %d %v", r.Status, r.Body)
		}
		r = e.Call("PATCH", "/namespaces/"+id, e.Admin, map[string]any{"name": "team-green"}, "If-Match", `"2"`)
		if r.Status != 200 || r.Data()["name"] != "team-green" || r.Header.Get("ETag") != `"3"` {
			t.Fatalf("rename = %d %v", r.Status, r.Body)
		}

		// A Namespace-scoped service principal blocks deletion.
		_, spn := e.Principal(servertest.Grant{})
		if err := e.M.Store().InTx(context.Background(), func(tx *storeTx) error { return scopePrincipal(tx, spn, id) }); err != nil {
			t.Fatal(err)
		}
		if r := e.Call("DELETE", "/namespaces/"+id, e.Admin, nil); r.Status != 409 || r.Code() != "NAMESPACE_NOT_EMPTY" {
			t.Fatalf("delete non-empty = %d %v", r.Status, r.Body)
		}
		if _, err := e.M.Store().DB().Exec(`DELETE FROM principals WHERE id = $1`, spn); err != nil {
			t.Fatal(err)
		}

		// Delete → deleting → gone; the directory is gone and the name is
		// free again, for a new Namespace with a new ID.
		r = e.Call("DELETE", "/namespaces/"+id, e.Admin, nil)
		if r.Status != 202 || r.Data()["status"] != "deleting" {
			t.Fatalf("delete = %d %v", r.Status, r.Body)
		}
		e.WaitStatus(id, "gone")
		if r := e.Call("GET", "/namespaces", e.Admin, nil); len(r.List()) != 1 {
			t.Fatalf("deleted namespace still listed: %v", r.Body)
		}
		r = e.Call("POST", "/namespaces", e.Admin, map[string]any{"name": "team-green"})
		if r.Status != 201 || r.Data()["id"] == id {
			t.Fatalf("reuse of a deleted name = %d %v", r.Status, r.Body)
		}
		again := r.Data()["id"].(string)
		e.WaitStatus(again, "ready")
		if r := e.Call("GET", "/namespaces/"+id, e.Admin, nil); r.Status != 404 {
			t.Fatalf("the deleted Namespace's ID = %d, want 404", r.Status)
		}
		if r := e.Call("POST", "/namespaces", e.Admin, map[string]any{"name": "team-green"}); r.Status != 409 {
			t.Fatalf("a live name taken twice = %d %v", r.Status, r.Body)
		}

		// Every change left an audit event, with the request ID.
		r = e.Call("GET", "/audit-events?resourceId="+id, e.Admin, nil)
		actions := map[string]bool{}
		for _, ev := range r.List() {
			actions[ev.(map[string]any)["action"].(string)] = true
		}
		for _, want := range []string{"namespaces.create", "namespaces.lifecycle.ensure", "namespaces.update", "namespaces.delete", "namespaces.lifecycle.delete"} {
			if !actions[want] {
				t.Errorf("audit log lacks %s: %v", want, actions)
			}
		}
	})
}

func TestNamespaceReadyWithinTwoSeconds(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := servertest.Boot(t, url, nil)
		r := e.Call("POST", "/namespaces", e.Admin, map[string]any{"name": "quick"})
		id := r.Data()["id"].(string)
		start := time.Now()
		e.WaitStatus(id, "ready")
		t.Logf("ready after %v", time.Since(start))
	})
}

// TestAuditFailsClosed: when the audit event cannot be written the
// mutation fails with 503 and nothing is kept.
func TestAuditFailsClosed(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := servertest.Boot(t, url, nil)
		breakAudit(t, e)
		r := e.Call("POST", "/namespaces", e.Admin, map[string]any{"name": "unaudited"})
		if r.Status != 503 || r.Code() != "DEPENDENCY_UNAVAILABLE" {
			t.Fatalf("create with a broken audit log = %d %v", r.Status, r.Body)
		}
		n, err := e.M.Store().CountNamespaces(context.Background())
		if err != nil || n != 1 {
			t.Fatalf("namespaces after failed create = %d, %v; want only default", n, err)
		}
		// A denial that cannot be audited is 503 too, not 403.
		key, _ := e.Principal(servertest.Grant{})
		if r := e.Call("POST", "/namespaces", key, map[string]any{"name": "denied"}); r.Status != 503 {
			t.Fatalf("unauditable denial = %d %v", r.Status, r.Body)
		}
	})
}

// TestTeardownRetryAndTakeover: a failed teardown stays deleting; only the
// initiator may refill it while it holds delete; once it lost delete,
// another permitted caller takes over.
func TestTeardownRetryAndTakeover(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		faulty := computetest.NewFaulty(mustLocal(t))
		e := servertest.Boot(t, url, faulty)
		id := e.CreateNamespace("doomed")
		del := []occ.Permission{occ.P(occ.KindNamespace, occ.ActionDelete), occ.P(occ.KindNamespace, occ.ActionRead)}
		alice, aliceID := e.Principal(servertest.Grant{Perms: del})
		bob, _ := e.Principal(servertest.Grant{Perms: del})

		faulty.FailTimes(id, -1)
		if r := e.Call("DELETE", "/namespaces/"+id, alice, nil); r.Status != 202 {
			t.Fatalf("delete = %d %v", r.Status, r.Body)
		}
		waitTeardown(t, e, id, occ.TeardownFailed)
		if r := e.Call("GET", "/namespaces/"+id, e.Admin, nil); r.Data()["status"] != "deleting" {
			t.Fatalf("after exhausted teardown: %v", r.Body)
		}
		// Bob may not retry while Alice still holds delete.
		if r := e.Call("DELETE", "/namespaces/"+id, bob, nil); r.Status != 403 {
			t.Fatalf("retry by another caller = %d %v", r.Status, r.Body)
		}
		// Alice refills the budget; it fails again.
		if r := e.Call("DELETE", "/namespaces/"+id, alice, nil); r.Status != 202 {
			t.Fatalf("retry by initiator = %d %v", r.Status, r.Body)
		}
		waitTeardown(t, e, id, occ.TeardownFailed)
		// Alice loses delete; Bob takes over and, healed, it completes.
		if _, err := e.M.Store().DB().Exec(`DELETE FROM bindings WHERE principal_id = $1`, aliceID); err != nil {
			t.Fatal(err)
		}
		faulty.Heal(id)
		if r := e.Call("DELETE", "/namespaces/"+id, bob, nil); r.Status != 202 {
			t.Fatalf("takeover = %d %v", r.Status, r.Body)
		}
		e.WaitStatus(id, "gone")
		r := e.Call("GET", "/audit-events?resourceId="+id, e.Admin, nil)
		seen := map[string]int{}
		for _, ev := range r.List() {
			seen[ev.(map[string]any)["action"].(string)]++
		}
		if seen["namespaces.delete.retry"] != 2 || seen["namespaces.delete.takeover"] != 1 {
			t.Fatalf("retry/takeover audit: %v", seen)
		}
	})
}

func mustLocal(t *testing.T) *local.Driver {
	d, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func waitTeardown(t *testing.T, e *servertest.Env, id string, want occ.TeardownState) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		td, err := e.M.Store().GetTeardown(context.Background(), id)
		if err == nil && td.State == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("teardown of %s = %+v, %v; want %s", id, td, err, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
