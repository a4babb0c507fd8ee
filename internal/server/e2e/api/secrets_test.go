package api_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// metadataKeys are the only fields a Secret ever carries on the contract.
var metadataKeys = []string{"createdAt", "etag", "id", "name", "namespaceId", "updatedAt", "version"}

func checkMetadata(t *testing.T, s map[string]any) {
	t.Helper()
	var keys []string
	for k := range s {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, metadataKeys) {
		t.Fatalf("secret fields = %v, want exactly %v", keys, metadataKeys)
	}
}

func TestSecretLifecycle(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := servertest.Boot(t, url, nil)
		ns := e.CreateNamespace("vault")
		other := e.CreateNamespace("elsewhere")

		// Create: 201, version 1, ETag, metadata only.
		r := e.Call("POST", servertest.SecretsPath(ns), e.Admin, map[string]any{"name": "slack-bot-token", "value": "xoxb-lifecycle"})
		if r.Status != 201 || r.Header.Get("ETag") != `"1"` || r.Data()["version"] != float64(1) || r.Data()["namespaceId"] != ns {
			t.Fatalf("create = %d %v %v", r.Status, r.Body, r.Header)
		}
		checkMetadata(t, r.Data())
		id := r.Data()["id"].(string)
		if !occ.ValidID(occ.PrefixSecret, id) {
			t.Fatalf("id %q is not a sec_ ID", id)
		}
		// Names are unique per Namespace, not across them.
		if r := e.Call("POST", servertest.SecretsPath(ns), e.Admin, map[string]any{"name": "slack-bot-token", "value": "x"}); r.Status != 409 || r.Code() != "RESOURCE_CONFLICT" {
			t.Fatalf("duplicate name = %d %v", r.Status, r.Body)
		}
		e.CreateSecret(other, "slack-bot-token", "xoxb-other")

		// Get and list; another Namespace's path hides it (404).
		r = e.Call("GET", servertest.SecretsPath(ns)+"/"+id, e.Admin, nil)
		if r.Status != 200 || r.Data()["name"] != "slack-bot-token" || r.Header.Get("ETag") != `"1"` {
			t.Fatalf("get = %d %v", r.Status, r.Body)
		}
		checkMetadata(t, r.Data())
		for _, m := range []string{"GET", "PATCH", "DELETE"} {
			var body any
			if m == "PATCH" {
				body = map[string]any{"value": "v"}
			}
			if r := e.Call(m, servertest.SecretsPath(other)+"/"+id, e.Admin, body); r.Status != 404 || r.Code() != "NOT_FOUND" {
				t.Fatalf("%s across Namespaces = %d %v", m, r.Status, r.Body)
			}
		}
		if r := e.Call("GET", servertest.SecretsPath(ns)+"/"+occ.NewID(occ.PrefixSecret), e.Admin, nil); r.Status != 404 {
			t.Fatalf("missing secret = %d", r.Status)
		}
		if r := e.Call("GET", servertest.SecretsPath(ns)+"/cfg_"+occ.NewUUID(), e.Admin, nil); r.Status != 400 {
			t.Fatalf("wrong prefix = %d", r.Status)
		}

		// PATCH with If-Match: stale 412, current 200 with version 2.
		if r := e.Call("PATCH", servertest.SecretsPath(ns)+"/"+id, e.Admin, map[string]any{"value": "xoxb-2"}, "If-Match", `"7"`); r.Status != 412 || r.Code() != "PRECONDITION_FAILED" {
			t.Fatalf("stale If-Match = %d %v", r.Status, r.Body)
		}
		r = e.Call("PATCH", servertest.SecretsPath(ns)+"/"+id, e.Admin, map[string]any{"value": "xoxb-2"}, "If-Match", `"1"`)
		if r.Status != 200 || r.Data()["version"] != float64(2) || r.Header.Get("ETag") != `"2"` {
			t.Fatalf("patch = %d %v", r.Status, r.Body)
		}
		checkMetadata(t, r.Data())
		if r := e.Call("PATCH", servertest.SecretsPath(ns)+"/"+id, e.Admin, map[string]any{"value": "x", "name": "renamed"}); r.Status != 400 {
			t.Fatalf("patch with a name = %d %v (names are immutable)", r.Status, r.Body)
		}
		if v, err := e.M.App().ResolveSecret(context.Background(), ns, id); err != nil || string(v) != "xoxb-2" {
			t.Fatalf("resolve after patch: %q, %v", v, err)
		}

		// A Configuration binding the Secret blocks its deletion (kinds, not IDs).
		cfgBody := map[string]any{"name": "bot", "kind": "agent", "values": map[string]any{},
			"secretBindings": map[string]any{"SLACK_BOT_TOKEN": map[string]any{"source": map[string]any{"kind": "secret", "namespaceId": ns, "id": id}, "delivery": "env"}}}
		r = e.Call("POST", "/namespaces/"+ns+"/configurations", e.Admin, cfgBody)
		if r.Status != 201 {
			t.Fatalf("create binding configuration = %d %v", r.Status, r.Body)
		}
		cfgID := r.Data()["id"].(string)
		r = e.Call("DELETE", servertest.SecretsPath(ns)+"/"+id, e.Admin, nil)
		if r.Status != 409 || r.Code() != "RESOURCE_CONFLICT" || !strings.Contains(r.Body["error"].(map[string]any)["message"].(string), "configuration") {
			t.Fatalf("delete of a bound secret = %d %v", r.Status, r.Body)
		}
		if r := e.Call("DELETE", "/namespaces/"+ns+"/configurations/"+cfgID, e.Admin, nil); r.Status != 204 {
			t.Fatalf("delete configuration = %d %v", r.Status, r.Body)
		}

		// A Namespace holding a Secret cannot be deleted.
		r = e.Call("DELETE", "/namespaces/"+ns, e.Admin, nil)
		if r.Status != 409 || r.Code() != "NAMESPACE_NOT_EMPTY" || !strings.Contains(r.Body["error"].(map[string]any)["message"].(string), "secret "+id) {
			t.Fatalf("delete namespace with a secret = %d %v", r.Status, r.Body)
		}

		// DELETE with If-Match: stale 412, current 204; then gone and the name is free.
		if r := e.Call("DELETE", servertest.SecretsPath(ns)+"/"+id, e.Admin, nil, "If-Match", `"1"`); r.Status != 412 {
			t.Fatalf("stale delete = %d %v", r.Status, r.Body)
		}
		if r := e.Call("DELETE", servertest.SecretsPath(ns)+"/"+id, e.Admin, nil, "If-Match", `"2"`); r.Status != 204 {
			t.Fatalf("delete = %d %v", r.Status, r.Body)
		}
		if r := e.Call("GET", servertest.SecretsPath(ns)+"/"+id, e.Admin, nil); r.Status != 404 {
			t.Fatalf("get after delete = %d", r.Status)
		}
		if _, err := e.M.App().ResolveSecret(context.Background(), ns, id); err == nil {
			t.Fatal("a deleted Secret still resolves")
		}
		e.CreateSecret(ns, "slack-bot-token", "again")

		// Every change was audited with the name and version only.
		r = e.Call("GET", "/audit-events?resourceId="+id, e.Admin, nil)
		actions := map[string]bool{}
		for _, ev := range r.List() {
			ev := ev.(map[string]any)
			actions[ev["action"].(string)] = true
			if ev["outcome"] != "success" {
				continue
			}
			for k := range ev["details"].(map[string]any) {
				if k != "name" && k != "version" {
					t.Errorf("%s audit details carry %q", ev["action"], k)
				}
			}
		}
		for _, want := range []string{"secrets.create", "secrets.update", "secrets.delete"} {
			if !actions[want] {
				t.Errorf("audit log lacks %s: %v", want, actions)
			}
		}
	})
}

func TestSecretValidation(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := servertest.Boot(t, url, nil)
		ns := e.CreateNamespace("rules")
		id := e.CreateSecret(ns, "target", "v")
		for _, tc := range []struct {
			name string
			body any
			path string
			code string
		}{
			{"empty", map[string]any{"name": "s", "value": ""}, "/value", "INVALID_VALUE"},
			{"NUL", map[string]any{"name": "s", "value": "ab\x00cd"}, "/value", "INVALID_VALUE"},
			{"65,537 ASCII bytes", map[string]any{"name": "s", "value": strings.Repeat("a", 65537)}, "/value", "TOO_LONG"},
			{"65,538 bytes in 32,769 characters", map[string]any{"name": "s", "value": strings.Repeat("é", 32769)}, "/value", "TOO_LONG"},
			{"lone surrogate escape", `{"name":"s","value":"ok\udc00"}`, "/value", "INVALID_VALUE"},
			{"high surrogate without its pair", `{"name":"s","value":"\ud83dx"}`, "/value", "INVALID_VALUE"},
			{"number", map[string]any{"name": "s", "value": 42}, "/value", "INVALID_TYPE"},
			{"missing value", map[string]any{"name": "s"}, "/value", "REQUIRED"},
			{"unknown field", map[string]any{"name": "s", "value": "v", "id": "sec_x"}, "/id", "UNKNOWN_FIELD"},
			{"bad name", map[string]any{"name": " padded", "value": "v"}, "/name", "INVALID_VALUE"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := e.WithT(t)
				r := e.Call("POST", servertest.SecretsPath(ns), e.Admin, tc.body)
				if p, c := r.Detail(); r.Status != 400 || r.Code() != "INVALID_REQUEST" || p != tc.path || c != tc.code {
					t.Fatalf("create = %d %v, want 400 %s %s", r.Status, r.Body, tc.path, tc.code)
				}
				// The same value rules apply to PATCH.
				if b, ok := tc.body.(map[string]any); ok && tc.path == "/value" {
					patch := map[string]any{}
					if v, ok := b["value"]; ok {
						patch["value"] = v
					}
					r := e.Call("PATCH", servertest.SecretsPath(ns)+"/"+id, e.Admin, patch)
					if p, c := r.Detail(); r.Status != 400 || p != tc.path || c != tc.code {
						t.Fatalf("patch = %d %v, want 400 %s %s", r.Status, r.Body, tc.path, tc.code)
					}
				}
			})
		}
		if r := e.Call("PATCH", servertest.SecretsPath(ns)+"/"+id, e.Admin, `{"value":"\udc00"}`); r.Status != 400 {
			t.Fatalf("patch with a lone surrogate = %d %v", r.Status, r.Body)
		}
		// Nothing was stored by the refused writes.
		if r := e.Call("GET", servertest.SecretsPath(ns), e.Admin, nil); len(r.List()) != 1 {
			t.Fatalf("secrets after refused creates: %v", r.Body)
		}
		if r := e.Call("GET", servertest.SecretsPath(ns)+"/"+id, e.Admin, nil); r.Data()["version"] != float64(1) {
			t.Fatalf("version after refused patches: %v", r.Body)
		}
		// The limits themselves are accepted: 65,536 bytes, any valid text,
		// escaped or not, and a surrogate pair.
		for i, v := range []string{strings.Repeat("a", 65536), strings.Repeat("é", 32768), "tab\tnewline\n😀 \u2028", `"quoted" \ back`} {
			name := fmt.Sprintf("ok-%d", i)
			sid := e.CreateSecret(ns, name, v)
			if got, err := e.M.App().ResolveSecret(context.Background(), ns, sid); err != nil || string(got) != v {
				t.Fatalf("%s resolves to %d bytes (%v), want %d", name, len(got), err, len(v))
			}
		}
		r := e.Call("POST", servertest.SecretsPath(ns), e.Admin, `{"name":"pair","value":"\ud83d\ude00"}`)
		if r.Status != 201 {
			t.Fatalf("surrogate pair = %d %v", r.Status, r.Body)
		}
		if got, _ := e.M.App().ResolveSecret(context.Background(), ns, r.Data()["id"].(string)); string(got) != "😀" {
			t.Fatalf("surrogate pair stored as %q", got)
		}

		// A Namespace that is not ready refuses new Secrets (409), and
		// nothing is kept.
		st := e.M.Store()
		n, err := st.GetNamespace(context.Background(), ns)
		if err != nil {
			t.Fatal(err)
		}
		n.Status = occ.NamespaceProvisioning
		if _, err := st.UpdateNamespace(context.Background(), n); err != nil {
			t.Fatal(err)
		}
		if r := e.Call("POST", servertest.SecretsPath(ns), e.Admin, map[string]any{"name": "early", "value": "v"}); r.Status != 409 || r.Code() != "NAMESPACE_NOT_READY" {
			t.Fatalf("create in a provisioning namespace = %d %v", r.Status, r.Body)
		}
	})
}

func TestSecretListPagingAndVisibility(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := servertest.Boot(t, url, nil)
		ns := e.CreateNamespace("many")
		var ids []string
		for i := range 5 {
			ids = append(ids, e.CreateSecret(ns, fmt.Sprintf("s-%d", i), fmt.Sprintf("value-%d", i)))
		}
		// Pages of 2 visit every Secret once, in creation order.
		var seen []string
		token := ""
		for pages := 0; ; pages++ {
			q := "?pageSize=2"
			if token != "" {
				q += "&pageToken=" + token
			}
			r := e.Call("GET", servertest.SecretsPath(ns)+q, e.Admin, nil)
			if r.Status != 200 || pages > 5 {
				t.Fatalf("page %d = %d %v", pages, r.Status, r.Body)
			}
			for _, it := range r.List() {
				checkMetadata(t, it.(map[string]any))
				seen = append(seen, it.(map[string]any)["id"].(string))
			}
			next, _ := r.Body["meta"].(map[string]any)["nextPageToken"].(string)
			if next == "" {
				break
			}
			token = next
		}
		if !slices.Equal(seen, ids) {
			t.Fatalf("paged %v, want %v", seen, ids)
		}

		// A caller with namespace:read and an exact secret:read on one Secret
		// lists exactly that one, also when paging by one.
		key, pid := e.Principal(servertest.Grant{Perms: []occ.Permission{occ.P(occ.KindNamespace, occ.ActionRead)}, Namespace: ns})
		r := e.Call("POST", "/namespaces/"+ns+"/iam/roles", e.Admin, map[string]any{"name": "secret-reader", "permissions": []string{"secret:read"}})
		if r.Status != 201 {
			t.Fatalf("role = %d %v", r.Status, r.Body)
		}
		r = e.Call("POST", "/namespaces/"+ns+"/iam/bindings", e.Admin, map[string]any{"principalId": pid, "roleId": r.Data()["id"],
			"target": map[string]any{"kind": "secret", "id": ids[3]}})
		if r.Status != 201 {
			t.Fatalf("binding = %d %v", r.Status, r.Body)
		}
		r = e.Call("GET", servertest.SecretsPath(ns)+"?pageSize=1", key, nil)
		if r.Status != 200 || len(r.List()) != 1 || r.List()[0].(map[string]any)["id"] != ids[3] || r.Body["meta"].(map[string]any)["nextPageToken"] != nil {
			t.Fatalf("filtered list = %d %v", r.Status, r.Body)
		}
		if r := e.Call("GET", servertest.SecretsPath(ns)+"/"+ids[3], key, nil); r.Status != 200 {
			t.Fatalf("exact read = %d", r.Status)
		}
		if r := e.Call("GET", servertest.SecretsPath(ns)+"/"+ids[2], key, nil); r.Status != 404 {
			t.Fatalf("read without the grant = %d, want 404", r.Status)
		}
		if r := e.Call("PATCH", servertest.SecretsPath(ns)+"/"+ids[3], key, map[string]any{"value": "x"}); r.Status != 403 {
			t.Fatalf("patch with read only = %d, want 403", r.Status)
		}
		// Without namespace:read the list itself is hidden.
		none, _ := e.Principal(servertest.Grant{})
		if r := e.Call("GET", servertest.SecretsPath(ns), none, nil); r.Status != 404 {
			t.Fatalf("list without namespace read = %d", r.Status)
		}
	})
}

func TestSecretIdempotentCreate(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := servertest.Boot(t, url, nil)
		ns := e.CreateNamespace("idem")
		body := map[string]any{"name": "token", "value": "xoxb-idem"}
		first := e.Call("POST", servertest.SecretsPath(ns), e.Admin, body, "Idempotency-Key", "sec-1")
		again := e.Call("POST", servertest.SecretsPath(ns), e.Admin, body, "Idempotency-Key", "sec-1")
		if first.Status != 201 || again.Status != 201 || again.Data()["id"] != first.Data()["id"] || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: first %d %v, again %d %v", first.Status, first.Body, again.Status, again.Body)
		}
		checkMetadata(t, again.Data())
		// The same key with another value is another request.
		if r := e.Call("POST", servertest.SecretsPath(ns), e.Admin, map[string]any{"name": "token", "value": "other"}, "Idempotency-Key", "sec-1"); r.Status != 400 {
			t.Fatalf("same key, other value = %d %v", r.Status, r.Body)
		}
		if r := e.Call("GET", servertest.SecretsPath(ns), e.Admin, nil); len(r.List()) != 1 {
			t.Fatalf("secrets after a replayed create: %v", r.Body)
		}
	})
}
