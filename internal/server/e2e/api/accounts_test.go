package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/backends"
	"github.com/openclaw/occ/internal/backends/backendstest"
	"github.com/openclaw/occ/internal/credgateway/credgatewaytest"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// canaryCheck fails the test when a response carries the canary.
type canaryCheck struct {
	t      *testing.T
	canary string
}

func (c canaryCheck) clean(where string, r servertest.Resp) servertest.Resp {
	c.t.Helper()
	if strings.Contains(servertest.ToJSON(r.Body), c.canary) || strings.Contains(servertest.ToJSON(r.Header), c.canary) {
		c.t.Fatalf("%s: the response carries the canary: %v", where, r.Body)
	}
	return r
}

// auditActions lists the actions of the events about a resource.
func auditActions(e *servertest.Env, resourceID string) map[string]int {
	e.T.Helper()
	r := e.Call("GET", "/audit-events?pageSize=1000&resourceId="+resourceID, e.Admin, nil)
	if r.Status != 200 {
		e.T.Fatalf("audit query = %d %v", r.Status, r.Body)
	}
	out := map[string]int{}
	for _, ev := range r.List() {
		m := ev.(map[string]any)
		out[m["action"].(string)+"/"+m["outcome"].(string)]++
	}
	return out
}

func TestBackendsList(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := servertest.Boot(t, url, nil, servertest.WithBackend(backends.Backend{ID: "gh", Type: backends.TypeGitHub, URL: "https://github.internal.example"}),
			servertest.WithBackend(backends.Backend{ID: "chatgpt-main", Type: backends.TypeChatGPT, URL: "https://chatgpt.internal.example"}),
			servertest.WithBackend(backends.Backend{ID: "os", Type: backends.TypeOpenShell}))
		r := e.Call("GET", "/backends", e.Admin, nil)
		if r.Status != 200 || servertest.ToJSON(r.List()) != `[{"id":"chatgpt-main","type":"chatgpt"},{"id":"gh","type":"github"},{"id":"os","type":"openshell"}]` {
			t.Fatalf("GET /backends = %d %v", r.Status, r.Body)
		}
		if strings.Contains(servertest.ToJSON(r.Body), "internal.example") {
			t.Fatalf("a Backend URL leaked: %v", r.Body)
		}
		// Pages of one, in ID order.
		var ids []string
		path := "/backends?pageSize=1"
		for range 4 {
			r := e.Call("GET", path, e.Admin, nil)
			if r.Status != 200 || len(r.List()) > 1 {
				t.Fatalf("page = %d %v", r.Status, r.Body)
			}
			for _, b := range r.List() {
				ids = append(ids, b.(map[string]any)["id"].(string))
			}
			next, _ := r.Body["meta"].(map[string]any)["nextPageToken"].(string)
			if next == "" {
				break
			}
			path = "/backends?pageSize=1&pageToken=" + next
		}
		if strings.Join(ids, ",") != "chatgpt-main,gh,os" {
			t.Fatalf("paged %v", ids)
		}
		// Installation administrators only.
		viewer, _ := e.Principal(servertest.Grant{Perms: []occ.Permission{occ.P(occ.KindInstallation, occ.ActionRead)}})
		if r := e.Call("GET", "/backends", viewer, nil); r.Status != 403 {
			t.Fatalf("GET /backends without administer = %d", r.Status)
		}

		// No Backends configured: an empty list.
		bare := servertest.Boot(t, storetest.Migrated(t, "sqlite"), nil)
		if r := bare.Call("GET", "/backends", bare.Admin, nil); r.Status != 200 || len(r.List()) != 0 || r.Body["data"] == nil {
			t.Fatalf("GET /backends without Backends = %d %v", r.Status, r.Body)
		}
	})
}

func TestAccountsServiceAccounts(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		fake := backendstest.New(t)
		gone := unreachableURL(t)
		logs := &servertest.LockedBuffer{}
		e := servertest.Boot(t, url, nil, servertest.RecordLogs(logs), servertest.WithBackend(fake.Backend("chatgpt-main")),
			servertest.WithBackend(backends.Backend{ID: "chatgpt-gone", Type: backends.TypeChatGPT, URL: gone}),
			servertest.WithBackend(backends.Backend{ID: "gh", Type: backends.TypeGitHub}),
			servertest.WithBackendClient(&backends.HTTP{Timeout: time.Second}))
		cc := canaryCheck{t: t, canary: fake.Canary}
		call := func(method, path string, body any, headers ...string) servertest.Resp {
			t.Helper()
			return cc.clean(method+" "+path, e.Call(method, path, e.Admin, body, headers...))
		}
		ns := e.CreateNamespace("accounts")
		other := e.CreateNamespace("accounts-other")
		base := "/namespaces/" + ns + "/service-accounts"

		// Create: no credential yet; the ETag is the version.
		r := call("POST", base, map[string]any{"name": "codex-bot", "backendId": "chatgpt-main"})
		if r.Status != 201 || r.Header.Get("ETag") != `"1"` || r.Data()["credential"] != nil || r.Data()["backendId"] != "chatgpt-main" ||
			r.Data()["namespaceId"] != ns || r.Data()["etag"] != `"1"` {
			t.Fatalf("create = %d %v %v", r.Status, r.Body, r.Header)
		}
		if _, present := r.Data()["credential"]; !present {
			t.Fatalf("credential is not null but absent: %v", r.Body)
		}
		sa := r.Data()["id"].(string)
		if !occ.ValidID(occ.PrefixServiceAccount, sa) {
			t.Fatalf("id %q", sa)
		}

		// Validation: an unconfigured Backend, names, duplicates, other Namespaces.
		r = call("POST", base, map[string]any{"name": "x", "backendId": "nope"})
		if r.Status != 400 || r.Code() != "INVALID_REQUEST" || !strings.Contains(servertest.ToJSON(r.Body), `{"code":"INVALID_VALUE","path":"/backendId"}`) {
			t.Fatalf("unknown backend = %d %v", r.Status, r.Body)
		}
		for _, body := range []any{map[string]any{"name": " x", "backendId": "gh"}, map[string]any{"name": "x"},
			map[string]any{"name": "x", "backendId": "gh", "credential": "abc"}, map[string]any{"name": "x", "backendId": ""}} {
			if r := call("POST", base, body); r.Status != 400 {
				t.Fatalf("bad body %v = %d %v", body, r.Status, r.Body)
			}
		}
		if r := call("POST", base, map[string]any{"name": "codex-bot", "backendId": "gh"}); r.Status != 409 || r.Code() != "RESOURCE_CONFLICT" {
			t.Fatalf("duplicate name = %d %v", r.Status, r.Body)
		}
		if r := call("POST", "/namespaces/"+other+"/service-accounts", map[string]any{"name": "codex-bot", "backendId": "gh"}); r.Status != 201 {
			t.Fatalf("same name in another Namespace = %d %v", r.Status, r.Body)
		}
		if r := call("GET", "/namespaces/"+other+"/service-accounts/"+sa, nil); r.Status != 404 {
			t.Fatalf("account read through another Namespace = %d", r.Status)
		}
		if r := call("GET", base+"/"+occ.NewID(occ.PrefixServiceAccount), nil); r.Status != 404 {
			t.Fatalf("missing account = %d", r.Status)
		}
		if r := call("GET", base+"/cs_"+occ.NewUUID(), nil); r.Status != 400 {
			t.Fatalf("wrong ID prefix = %d", r.Status)
		}

		// A Namespace that is not ready takes no accounts.
		if _, err := e.M.Store().DB().Exec(`UPDATE namespaces SET status = 'provisioning' WHERE id = $1`, other); err != nil {
			t.Fatal(err)
		}
		if r := call("POST", "/namespaces/"+other+"/service-accounts", map[string]any{"name": "later", "backendId": "gh"}); r.Status != 409 || r.Code() != "NAMESPACE_NOT_READY" {
			t.Fatalf("create in a provisioning Namespace = %d %v", r.Status, r.Body)
		}
		if _, err := e.M.Store().DB().Exec(`UPDATE namespaces SET status = 'ready' WHERE id = $1`, other); err != nil {
			t.Fatal(err)
		}

		// Idempotent create: the same key and body replay the first answer.
		first := call("POST", base, map[string]any{"name": "idem", "backendId": "gh"}, "Idempotency-Key", "sa-1")
		again := call("POST", base, map[string]any{"name": "idem", "backendId": "gh"}, "Idempotency-Key", "sa-1")
		if first.Status != 201 || again.Status != 201 || again.Data()["id"] != first.Data()["id"] || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %v / %d %v", first.Status, first.Body, again.Status, again.Body)
		}
		if r := call("POST", base, map[string]any{"name": "idem-2", "backendId": "gh"}, "Idempotency-Key", "sa-1"); r.Status != 400 {
			t.Fatalf("same key, other body = %d", r.Status)
		}

		// Pagination: five accounts, pages of two, each seen once.
		for i := range 2 {
			call("POST", base, map[string]any{"name": "page-" + string(rune('a'+i)), "backendId": "gh"})
		}
		seen := map[string]bool{}
		path := base + "?pageSize=2"
		for pages := 0; ; pages++ {
			r := call("GET", path, nil)
			if r.Status != 200 || len(r.List()) > 2 || pages > 5 {
				t.Fatalf("page = %d %v", r.Status, r.Body)
			}
			for _, it := range r.List() {
				seen[it.(map[string]any)["id"].(string)] = true
			}
			next, _ := r.Body["meta"].(map[string]any)["nextPageToken"].(string)
			if next == "" {
				break
			}
			path = base + "?pageSize=2&pageToken=" + next
		}
		if len(seen) != 4 || !seen[sa] {
			t.Fatalf("paged %d accounts, want 4: %v", len(seen), seen)
		}

		// Issue: the Backend's credential is kept encrypted; the account shows kind and time only.
		r = call("POST", base+"/"+sa+"/credentials", nil)
		cred, _ := r.Data()["credential"].(map[string]any)
		if r.Status != 201 || r.Header.Get("ETag") != `"2"` || cred["kind"] != "access_token" || cred["issuedAt"] == nil || len(cred) != 2 {
			t.Fatalf("issue = %d %v", r.Status, r.Body)
		}
		if r := call("POST", base+"/"+sa+"/credentials", nil); r.Status != 409 || r.Code() != "RESOURCE_CONFLICT" {
			t.Fatalf("second issue = %d %v", r.Status, r.Body)
		}
		if fake.Issued() != 1 {
			t.Fatalf("the Backend issued %d credentials, want 1", fake.Issued())
		}
		reqs := fake.Requests()
		if len(reqs) != 1 || reqs[0].IdempotencyKey != sa || reqs[0].Body["namespaceId"] != ns || reqs[0].Body["name"] != "codex-bot" {
			t.Fatalf("Backend requests = %+v", reqs)
		}
		if r := call("GET", base+"/"+sa, nil); r.Status != 200 || r.Header.Get("ETag") != `"2"` || r.Data()["credential"] == nil {
			t.Fatalf("get after issue = %d %v", r.Status, r.Body)
		}
		ctx := context.Background()
		plain, err := e.M.App().ServiceAccountCredential(ctx, ns, sa)
		if err != nil || !strings.HasPrefix(string(plain), fake.Canary) {
			t.Fatalf("stored credential does not decrypt to the issued one: %v", err)
		}
		stored, err := e.M.Store().ServiceAccountCiphertext(ctx, ns, sa)
		if err != nil || strings.Contains(stored, fake.Canary) {
			t.Fatalf("stored ciphertext: %v", err)
		}
		if raw, _ := base64.StdEncoding.DecodeString(stored); bytes.Contains(raw, []byte(fake.Canary)) {
			t.Fatal("the credential is stored in the clear")
		}

		// The ciphertext is bound to its row: copied to another account it does not decrypt.
		copyTo := call("POST", base, map[string]any{"name": "copy-target", "backendId": "chatgpt-main"}).Data()["id"].(string)
		if _, err := e.M.Store().DB().Exec(`UPDATE service_accounts SET credential_ciphertext = $1, credential_kind = 'access_token',
			credential_issued_at = 1 WHERE id = $2`, stored, copyTo); err != nil {
			t.Fatal(err)
		}
		if _, err := e.M.App().ServiceAccountCredential(ctx, ns, copyTo); err == nil {
			t.Fatal("a ciphertext copied into another account decrypted")
		}

		// Backend failure modes: nothing is kept, the account can be issued later.
		failing := call("POST", base, map[string]any{"name": "failing", "backendId": "chatgpt-main"}).Data()["id"].(string)
		for _, tt := range []struct {
			mode   backendstest.Mode
			status int
			code   string
		}{
			{backendstest.Fail, 503, "DEPENDENCY_UNAVAILABLE"},
			{backendstest.Reject, 409, "RESOURCE_CONFLICT"},
			{backendstest.Slow, 503, "DEPENDENCY_UNAVAILABLE"},
			{backendstest.Oversized, 503, "DEPENDENCY_UNAVAILABLE"},
			{backendstest.Malformed, 503, "DEPENDENCY_UNAVAILABLE"},
		} {
			fake.SetMode(tt.mode)
			if r := call("POST", base+"/"+failing+"/credentials", nil); r.Status != tt.status || r.Code() != tt.code {
				t.Fatalf("Backend mode %d: issue = %d %v, want %d %s", tt.mode, r.Status, r.Body, tt.status, tt.code)
			}
			if r := call("GET", base+"/"+failing, nil); r.Data()["credential"] != nil || r.Data()["etag"] != `"1"` {
				t.Fatalf("Backend mode %d: something was kept: %v", tt.mode, r.Body)
			}
		}
		fake.SetMode(backendstest.Reject)
		rejected := call("POST", base+"/"+failing+"/credentials", nil)
		if msg := rejected.Body["error"].(map[string]any)["message"]; msg != "The Backend refused to issue a credential for this service account." {
			t.Fatalf("refusal message = %q", msg)
		}
		fake.SetMode(backendstest.OK)
		if r := call("POST", base+"/"+failing+"/credentials", nil); r.Status != 201 {
			t.Fatalf("issue after the Backend recovered = %d %v", r.Status, r.Body)
		}
		unreachable := call("POST", base, map[string]any{"name": "unreachable", "backendId": "chatgpt-gone"}).Data()["id"].(string)
		if r := call("POST", base+"/"+unreachable+"/credentials", nil); r.Status != 503 || r.Code() != "DEPENDENCY_UNAVAILABLE" {
			t.Fatalf("unreachable Backend = %d %v", r.Status, r.Body)
		}
		github := call("POST", base, map[string]any{"name": "gh-account", "backendId": "gh"}).Data()["id"].(string)
		if r := call("POST", base+"/"+github+"/credentials", nil); r.Status != 409 || r.Code() != "RESOURCE_CONFLICT" {
			t.Fatalf("issue through a github Backend = %d %v", r.Status, r.Body)
		}
		if r := call("POST", "/namespaces/"+other+"/service-accounts/"+sa+"/credentials", nil); r.Status != 404 {
			t.Fatalf("issue through another Namespace = %d", r.Status)
		}
		if r := call("POST", base+"/"+github+"/credentials", map[string]any{}); r.Status != 400 {
			t.Fatalf("issue with a body = %d", r.Status)
		}

		// Exact permissions: read without update is 403, nothing at all 404.
		reader, _ := e.Principal(servertest.Grant{Perms: []occ.Permission{occ.P(occ.KindServiceAccount, occ.ActionRead), occ.P(occ.KindNamespace, occ.ActionRead)},
			Namespace: ns, Target: &occ.Target{Kind: occ.KindServiceAccount, ID: unreachable}})
		if r := e.Call("POST", base+"/"+unreachable+"/credentials", reader, nil); r.Status != 403 {
			t.Fatalf("issue with read only = %d", r.Status)
		}
		if r := e.Call("GET", base+"/"+github, reader, nil); r.Status != 404 {
			t.Fatalf("read of an account outside the exact grant = %d", r.Status)
		}

		// The account blocks its Namespace's deletion.
		r = call("DELETE", "/namespaces/"+ns, nil)
		if r.Status != 409 || r.Code() != "NAMESPACE_NOT_EMPTY" || !strings.Contains(servertest.ToJSON(r.Body), "service_account") {
			t.Fatalf("delete a Namespace with accounts = %d %v", r.Status, r.Body)
		}

		// Delete: If-Match, 204, then gone.
		if r := call("DELETE", base+"/"+sa, nil, "If-Match", `"1"`); r.Status != 412 {
			t.Fatalf("stale If-Match = %d", r.Status)
		}
		if r := call("DELETE", "/namespaces/"+other+"/service-accounts/"+sa, nil); r.Status != 404 {
			t.Fatalf("delete through another Namespace = %d", r.Status)
		}
		if r := call("DELETE", base+"/"+sa, nil, "If-Match", `"2"`); r.Status != 204 {
			t.Fatalf("delete = %d %v", r.Status, r.Body)
		}
		if r := call("GET", base+"/"+sa, nil); r.Status != 404 {
			t.Fatalf("deleted account = %d", r.Status)
		}
		if r := call("DELETE", base+"/"+sa, nil); r.Status != 404 {
			t.Fatalf("second delete = %d", r.Status)
		}
		for _, it := range call("GET", base+"?pageSize=1000", nil).List() {
			if r := call("DELETE", base+"/"+it.(map[string]any)["id"].(string), nil); r.Status != 204 {
				t.Fatalf("delete = %d", r.Status)
			}
		}
		if r := call("DELETE", "/namespaces/"+ns, nil); r.Status != 202 {
			t.Fatalf("delete the emptied Namespace = %d %v", r.Status, r.Body)
		}

		// Every mutation was audited; no credential anywhere.
		got := auditActions(e, sa)
		for _, want := range []string{"service_accounts.create/success", "service_accounts.credentials.issue/success", "service_accounts.delete/success"} {
			if got[want] != 1 {
				t.Errorf("audit of %s lacks %s: %v", sa, want, got)
			}
		}
		if got := auditActions(e, failing); got["service_accounts.credentials.issue/success"] != 1 {
			t.Errorf("audit of %s: %v", failing, got)
		}
		servertest.NoCanaryAtRest(t, e, logs, fake.Canary)
	})
}

func TestCredentialSources(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		gw := credgatewaytest.New(t)
		logs := &servertest.LockedBuffer{}
		e := servertest.Boot(t, url, nil, servertest.RecordLogs(logs), servertest.WithGateway(gw.URL))
		canary := "canary-secret-" + strings.ReplaceAll(occ.NewUUID(), "-", "")
		cc := canaryCheck{t: t, canary: canary}
		call := func(method, path string, body any, headers ...string) servertest.Resp {
			t.Helper()
			return cc.clean(method+" "+path, e.Call(method, path, e.Admin, body, headers...))
		}
		ns := e.CreateNamespace("sources")
		other := e.CreateNamespace("sources-other")
		sec := e.CreateSecret(ns, "openai-key", canary)
		otherSec := e.CreateSecret(other, "openai-key", canary+"-other")
		base := "/namespaces/" + ns + "/credential-sources"
		ref := func(nsID, id string) map[string]any {
			return map[string]any{"kind": "secret", "namespaceId": nsID, "id": id}
		}

		// Create: committed registering, registered with the gateway (values included), then ready.
		r := call("POST", base, map[string]any{"name": "openai-team", "type": "openai", "config": map[string]any{"organization": "acme"},
			"secrets": map[string]any{"apiKey": ref(ns, sec)}})
		if r.Status != 201 || r.Data()["state"] != "ready" || r.Header.Get("ETag") != `"2"` || r.Data()["type"] != "openai" ||
			servertest.ToJSON(r.Data()["config"]) != `{"organization":"acme"}` || servertest.ToJSON(r.Data()["secrets"]) != servertest.ToJSON(map[string]any{"apiKey": ref(ns, sec)}) {
			t.Fatalf("create = %d %v %v", r.Status, r.Body, r.Header)
		}
		cs := r.Data()["id"].(string)
		reg, ok := gw.Source(cs)
		if !ok || reg.NamespaceID != ns || reg.Type != "openai" || reg.Secrets["apiKey"].Value != canary || reg.Secrets["apiKey"].ID != sec ||
			reg.InstallationID != e.M.App().InstallationID() {
			t.Fatalf("gateway registration = %v (%v)", reg, ok)
		}

		// Validation.
		for _, tt := range []struct {
			body   map[string]any
			status int
			detail string
		}{
			{map[string]any{"name": "x", "type": "openai", "secrets": map[string]any{"apiKey": ref(other, otherSec)}}, 400, `"path":"/secrets/apiKey/namespaceId"`},
			{map[string]any{"name": "x", "type": "openai", "secrets": map[string]any{"apiKey": ref(ns, occ.NewID(occ.PrefixSecret))}}, 400, `"path":"/secrets/apiKey/id"`},
			{map[string]any{"name": "x", "type": "openai", "secrets": map[string]any{"api-key": ref(ns, sec)}}, 400, `"path":"/secrets/api-key"`},
			{map[string]any{"name": "x", "type": "openai", "config": map[string]any{"auth": map[string]any{"apiToken": "sk-live"}}}, 400, `"path":"/config/auth/apiToken"`},
			{map[string]any{"name": "x", "type": "Open AI"}, 400, `"path":"/type"`},
			{map[string]any{"name": "x", "type": "openai", "secrets": map[string]any{"apiKey": map[string]any{"kind": "secret", "id": sec}}}, 400, `"path":"/secrets/apiKey/namespaceId"`},
			{map[string]any{"name": "x", "type": "openai", "state": "ready"}, 400, `"path":"/state"`},
			{map[string]any{"name": "openai-team", "type": "openai"}, 409, ``},
		} {
			r := call("POST", base, tt.body)
			if r.Status != tt.status || !strings.Contains(servertest.ToJSON(r.Body), tt.detail) {
				t.Fatalf("create %v = %d %v, want %d with %s", tt.body, r.Status, r.Body, tt.status, tt.detail)
			}
		}
		// Referencing a Secret needs the caller's exact secret:operate.
		creator := []occ.Permission{occ.P(occ.KindCredentialSource, occ.ActionCreate), occ.P(occ.KindNamespace, occ.ActionRead)}
		noOperate, _ := e.Principal(servertest.Grant{Perms: creator, Namespace: ns})
		body := map[string]any{"name": "by-creator", "type": "openai", "secrets": map[string]any{"apiKey": ref(ns, sec)}}
		if r := e.Call("POST", base, noOperate, body); r.Status != 403 {
			t.Fatalf("create without secret:operate = %d %v", r.Status, r.Body)
		}
		withOperate, _ := e.Principal(servertest.Grant{Perms: append(creator, occ.P(occ.KindSecret, occ.ActionOperate)), Namespace: ns})
		if r := e.Call("POST", base, withOperate, body); r.Status != 201 {
			t.Fatalf("create with secret:operate = %d %v", r.Status, r.Body)
		}

		// Gateway failures remove the record: 503 when unavailable, 409 when refused.
		for _, tt := range []struct {
			mode   credgatewaytest.Mode
			status int
			code   string
			reason string
		}{
			{credgatewaytest.Fail, 503, "DEPENDENCY_UNAVAILABLE", "GATEWAY_UNAVAILABLE"},
			{credgatewaytest.Reject, 409, "RESOURCE_CONFLICT", "GATEWAY_REJECTED"},
		} {
			gw.SetMode(tt.mode)
			r := call("POST", base, map[string]any{"name": "doomed", "type": "openai"})
			if r.Status != tt.status || r.Code() != tt.code {
				t.Fatalf("gateway mode %d: create = %d %v", tt.mode, r.Status, r.Body)
			}
			ev := call("GET", "/audit-events?action=credential_sources.register&outcome=failure&pageSize=1", nil)
			if len(ev.List()) != 1 || ev.List()[0].(map[string]any)["reasonCode"] != tt.reason {
				t.Fatalf("failure audit = %v", ev.Body)
			}
		}
		gw.SetMode(credgatewaytest.OK)
		for _, it := range call("GET", base, nil).List() {
			if it.(map[string]any)["name"] == "doomed" {
				t.Fatalf("a failed registration was kept: %v", it)
			}
		}
		if r := call("POST", base, map[string]any{"name": "doomed", "type": "openai"}, "Idempotency-Key", "cs-1"); r.Status != 201 {
			t.Fatalf("create after the gateway recovered = %d %v", r.Status, r.Body)
		} else if again := call("POST", base, map[string]any{"name": "doomed", "type": "openai"}, "Idempotency-Key", "cs-1"); again.Status != 201 ||
			again.Data()["id"] != r.Data()["id"] || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("idempotent replay = %d %v", again.Status, again.Body)
		}

		// Get, list, pages, other Namespaces.
		if r := call("GET", base+"/"+cs, nil); r.Status != 200 || r.Header.Get("ETag") != `"2"` {
			t.Fatalf("get = %d %v", r.Status, r.Body)
		}
		if r := call("GET", "/namespaces/"+other+"/credential-sources/"+cs, nil); r.Status != 404 {
			t.Fatalf("get through another Namespace = %d", r.Status)
		}
		page1 := call("GET", base+"?pageSize=2", nil)
		next, _ := page1.Body["meta"].(map[string]any)["nextPageToken"].(string)
		page2 := call("GET", base+"?pageSize=2&pageToken="+next, nil)
		if len(page1.List()) != 2 || next == "" || len(page2.List()) != 1 {
			t.Fatalf("pages: %v / %v", page1.Body, page2.Body)
		}

		// The Secret cannot be deleted while the source references it.
		if r := call("DELETE", servertest.SecretsPath(ns)+"/"+sec, nil); r.Status != 409 || r.Code() != "RESOURCE_CONFLICT" ||
			!strings.Contains(servertest.ToJSON(r.Body), "credential_source") {
			t.Fatalf("delete a referenced Secret = %d %v", r.Status, r.Body)
		}

		// PATCH replaces the Secrets at the gateway, then here.
		if r := call("PATCH", base+"/"+cs, map[string]any{"secrets": map[string]any{}}, "If-Match", `"1"`); r.Status != 412 {
			t.Fatalf("stale If-Match = %d", r.Status)
		}
		gw.SetMode(credgatewaytest.Fail)
		if r := call("PATCH", base+"/"+cs, map[string]any{"secrets": map[string]any{}}); r.Status != 503 {
			t.Fatalf("patch with the gateway down = %d", r.Status)
		}
		if r := call("GET", base+"/"+cs, nil); r.Data()["etag"] != `"2"` || len(r.Data()["secrets"].(map[string]any)) != 1 {
			t.Fatalf("a failed patch changed the source: %v", r.Body)
		}
		gw.SetMode(credgatewaytest.OK)
		if r := call("PATCH", base+"/"+cs, map[string]any{}); r.Status != 400 {
			t.Fatalf("empty patch = %d", r.Status)
		}
		r = call("PATCH", base+"/"+cs, map[string]any{"secrets": map[string]any{}}, "If-Match", `"2"`)
		if r.Status != 200 || r.Header.Get("ETag") != `"3"` || len(r.Data()["secrets"].(map[string]any)) != 0 || r.Data()["state"] != "ready" {
			t.Fatalf("patch = %d %v", r.Status, r.Body)
		}
		if reg, _ := gw.Source(cs); len(reg.Secrets) != 0 {
			t.Fatalf("the gateway still has %v", reg)
		}
		if r := call("PATCH", base+"/"+cs, map[string]any{"secrets": map[string]any{"apiKey": ref(ns, sec)}}); r.Status != 200 {
			t.Fatalf("patch back = %d %v", r.Status, r.Body)
		}

		// The source blocks its Namespace's deletion.
		if r := call("DELETE", "/namespaces/"+ns, nil); r.Status != 409 || r.Code() != "NAMESPACE_NOT_EMPTY" || !strings.Contains(servertest.ToJSON(r.Body), "credential_source") {
			t.Fatalf("delete a Namespace with sources = %d %v", r.Status, r.Body)
		}

		// DELETE: a gateway failure keeps the record deleting; a repeat finishes.
		gw.SetMode(credgatewaytest.Fail)
		if r := call("DELETE", base+"/"+cs, nil); r.Status != 503 {
			t.Fatalf("delete with the gateway down = %d", r.Status)
		}
		if r := call("GET", base+"/"+cs, nil); r.Data()["state"] != "deleting" {
			t.Fatalf("after a failed removal: %v", r.Body)
		}
		if r := call("PATCH", base+"/"+cs, map[string]any{"secrets": map[string]any{}}); r.Status != 409 {
			t.Fatalf("patch while deleting = %d", r.Status)
		}
		gw.SetMode(credgatewaytest.OK)
		if r := call("DELETE", base+"/"+cs, nil); r.Status != 204 {
			t.Fatalf("delete = %d %v", r.Status, r.Body)
		}
		if r := call("GET", base+"/"+cs, nil); r.Status != 404 {
			t.Fatalf("deleted source = %d", r.Status)
		}
		if _, ok := gw.Source(cs); ok {
			t.Fatal("the gateway still holds the deleted source")
		}
		// The source "by-creator" still references the Secret.
		if r := call("DELETE", servertest.SecretsPath(ns)+"/"+sec, nil); r.Status != 409 {
			t.Fatalf("delete a Secret still referenced by another source = %d %v", r.Status, r.Body)
		}

		got := auditActions(e, cs)
		for _, want := range []string{"credential_sources.create/success", "credential_sources.register/success", "credential_sources.update/success",
			"credential_sources.delete/success", "credential_sources.remove/success"} {
			if got[want] == 0 {
				t.Errorf("audit of %s lacks %s: %v", cs, want, got)
			}
		}
		servertest.NoCanaryAtRest(t, e, logs, canary)
	})
}

// TestCredentialSourcesWithoutGateway: with no Credential Gateway every
// credential source route answers 409 CREDENTIAL_GATEWAY_NOT_CONFIGURED,
// reads included.
func TestCredentialSourcesWithoutGateway(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := servertest.Boot(t, url, nil)
		ns := e.CreateNamespace("no-gateway")
		base := "/namespaces/" + ns + "/credential-sources"
		id := occ.NewID(occ.PrefixCredentialSource)
		viewer, _ := e.Principal(servertest.Grant{Perms: []occ.Permission{occ.P(occ.KindNamespace, occ.ActionRead)}, Namespace: ns})
		for _, key := range []string{e.Admin, viewer} {
			for _, c := range []struct {
				method, path string
				body         any
			}{
				{"GET", base, nil},
				{"POST", base, map[string]any{"name": "openai-team", "type": "openai"}},
				{"GET", base + "/" + id, nil},
				{"PATCH", base + "/" + id, map[string]any{"secrets": map[string]any{}}},
				{"DELETE", base + "/" + id, nil},
			} {
				if r := e.Call(c.method, c.path, key, c.body); r.Status != 409 || r.Code() != "CREDENTIAL_GATEWAY_NOT_CONFIGURED" {
					t.Fatalf("%s %s = %d %v", c.method, c.path, r.Status, r.Body)
				}
			}
		}
		if n, err := countRows(e, "credential_sources"); err != nil || n != 0 {
			t.Fatalf("%d credential sources stored, %v", n, err)
		}
	})
}

func countRows(e *servertest.Env, table string) (int, error) {
	var n int
	err := e.M.Store().DB().QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n)
	return n, err
}

// unreachableURL is the URL of a port that this test holds (so no other
// test's server can take it, as one did the port of a closed
// httptest.Server) and whose every connection is closed before a byte of
// an answer: a Backend there is unreachable.
func unreachableURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return "http://" + l.Addr().String()
}
