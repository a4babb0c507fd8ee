package server_test

import (
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store/storetest"
)

// agentWorld is a Namespace with a Configuration and a Secret to build Agents from.
type agentWorld struct {
	e              *env
	ns, cfg, other string // other: a Configuration of another Namespace
	secret         string
}

func newAgentWorld(t *testing.T, url string) *agentWorld {
	e := boot(t, url, nil, withInstallationSettings)
	w := &agentWorld{e: e, ns: e.createNamespace("agents")}
	w.cfg = e.call("POST", w.path("/configurations"), e.admin, map[string]any{"name": "c", "kind": "agent", "values": map[string]any{}}).data()["id"].(string)
	w.secret = e.call("POST", w.path("/secrets"), e.admin, map[string]any{"name": "openai", "value": "sk-test-value"}).data()["id"].(string)
	ns2 := e.createNamespace("agents-2")
	w.other = e.call("POST", "/namespaces/"+ns2+"/configurations", e.admin, map[string]any{"name": "c", "kind": "agent", "values": map[string]any{}}).data()["id"].(string)
	return w
}

func (w *agentWorld) path(p string) string { return "/namespaces/" + w.ns + p }

func (w *agentWorld) create(key string, body map[string]any) resp {
	if _, ok := body["configurationId"]; !ok {
		body["configurationId"] = w.cfg
	}
	return w.e.call("POST", w.path("/agents"), key, body)
}

// TestAgentCreateRules walks the seed's Agent creation, Backend association,
// Harness authentication, Plugin selections, initial Workspace files and
// Namespace ownership rules, one case per rule.
func TestAgentCreateRules(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, url string) {
		w := newAgentWorld(t, url)
		e := w.e
		secretRef := map[string]any{"kind": "secret", "id": w.secret}
		cases := []struct {
			name   string
			body   map[string]any
			status int
			check  func(t *testing.T, r resp)
		}{
			{"saves active, desired stopped, no revision, own service principal", map[string]any{"name": "a1"}, 201, func(t *testing.T, r resp) {
				d := r.data()
				if d["status"] != "active" || d["desiredRuntimeState"] != "stopped" || d["activeRevisionId"] != nil ||
					!strings.HasPrefix(d["servicePrincipalId"].(string), "spn_") || strings.Contains(d["servicePrincipalId"].(string), strings.TrimPrefix(d["id"].(string), "agt_")) {
					t.Fatalf("created agent = %v", d)
				}
				if l := e.call("GET", w.path("/agents/"+d["id"].(string)+"/revisions"), e.admin, nil).list(); len(l) != 0 {
					t.Fatalf("revisions after create: %v", l)
				}
			}},
			{"omitted backend is null; omitted plugins are none; default embedded", map[string]any{"name": "a2"}, 201, func(t *testing.T, r resp) {
				d := r.data()
				if d["backendId"] != nil || len(d["plugins"].(map[string]any)) != 0 || d["executionMode"] != "embedded" || d["harnessAuth"] != nil {
					t.Fatalf("defaults = %v", d)
				}
			}},
			{"names are unique per Namespace", map[string]any{"name": "a1"}, 409, nil},
			{"the Namespace comes only from the URL", map[string]any{"name": "x1", "namespaceId": w.ns}, 400, nil},
			{"no caller-supplied service principal", map[string]any{"name": "x2", "servicePrincipalId": "spn_00000000-0000-4000-8000-000000000000"}, 400, nil},
			{"no inline configuration document", map[string]any{"name": "x3", "values": map[string]any{}}, 400, nil},
			{"no competing gateway settings", map[string]any{"name": "x4", "gateway": map[string]any{"port": 1}}, 400, nil},
			{"a Configuration of another Namespace is refused", map[string]any{"name": "x5", "configurationId": w.other}, 400, nil},
			{"a configured Backend is kept", map[string]any{"name": "a3", "backendId": "chatgpt-main"}, 201, func(t *testing.T, r resp) {
				if r.data()["backendId"] != "chatgpt-main" {
					t.Fatalf("backend = %v", r.data()["backendId"])
				}
			}},
			{"an unconfigured Backend is refused", map[string]any{"name": "x6", "backendId": "nope"}, 400, nil},
			{"api_key binds a Secret of the Namespace", map[string]any{"name": "a4", "harnessAuth": map[string]any{"method": "api_key", "source": secretRef}}, 201, func(t *testing.T, r resp) {
				h := r.data()["harnessAuth"].(map[string]any)
				if h["method"] != "api_key" || h["source"].(map[string]any)["namespaceId"] != w.ns || strings.Contains(toJSON(r.Body), "sk-test-value") {
					t.Fatalf("harnessAuth = %v", h)
				}
			}},
			{"codex_pat needs dedicated mode", map[string]any{"name": "x7", "executionMode": "embedded", "harnessAuth": map[string]any{"method": "codex_pat", "source": secretRef}}, 400, nil},
			{"codex_pat in dedicated mode", map[string]any{"name": "a5", "executionMode": "dedicated", "harnessAuth": map[string]any{"method": "codex_pat", "source": secretRef}}, 201, nil},
			{"runtime only on the SSH driver", map[string]any{"name": "x8", "harnessAuth": map[string]any{"method": "runtime"}}, 400, nil},
			{"a missing Secret is refused", map[string]any{"name": "x9", "harnessAuth": map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "id": "sec_00000000-0000-4000-8000-000000000000"}}}, 400, nil},
			{"plugins keyed name@catalog", map[string]any{"name": "a6", "plugins": map[string]any{"google-calendar@openai-curated-remote": map[string]any{}}}, 201, nil},
			{"a plugin key without catalog is refused", map[string]any{"name": "x10", "plugins": map[string]any{"calendar": map[string]any{}}}, 400, nil},
			{"initial files: a partial map, empty strings allowed, never returned", map[string]any{"name": "a7", "initialWorkspaceFiles": map[string]any{"AGENTS.md": "Answer support questions.\n", "USER.md": ""}}, 201, func(t *testing.T, r resp) {
				if strings.Contains(toJSON(r.Body), "Answer support") || r.data()["initialWorkspaceFiles"] != nil {
					t.Fatalf("staged files leaked: %v", r.Body)
				}
			}},
			{"initial files: other names refused", map[string]any{"name": "x11", "initialWorkspaceFiles": map[string]any{"TOOLS.md": "x"}}, 400, nil},
			{"initial files: non-strings refused", map[string]any{"name": "x12", "initialWorkspaceFiles": map[string]any{"AGENTS.md": 3}}, 400, nil},
			{"initial files: NUL refused", map[string]any{"name": "x13", "initialWorkspaceFiles": map[string]any{"SOUL.md": "a\x00b"}}, 400, nil},
			{"initial files: 16 KiB accepted", map[string]any{"name": "a8", "initialWorkspaceFiles": map[string]any{"SOUL.md": strings.Repeat("é", 8192)}}, 201, nil},
			{"initial files: over 16 KiB refused", map[string]any{"name": "x14", "initialWorkspaceFiles": map[string]any{"SOUL.md": strings.Repeat("a", 16385)}}, 400, nil},
			{"a malformed defaults identity is refused", map[string]any{"name": "x15", "workspaceDefaultsId": "abc"}, 400, nil},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := w.create(e.admin, c.body)
				if r.Status != c.status {
					t.Fatalf("create %v = %d %v, want %d", c.body, r.Status, r.Body, c.status)
				}
				if c.check != nil {
					c.check(t, r)
				}
			})
		}
		t.Run("lone surrogate in a file is refused", func(t *testing.T) {
			body := `{"name":"x16","configurationId":"` + w.cfg + `","initialWorkspaceFiles":{"AGENTS.md":"\ud800"}}`
			if r := e.call("POST", w.path("/agents"), e.admin, body); r.Status != 400 {
				t.Fatalf("= %d %v", r.Status, r.Body)
			}
		})
		t.Run("create bodies up to 448 KiB are accepted", func(t *testing.T) {
			files := map[string]any{}
			for _, n := range occ.WorkspaceFileNames {
				files[n] = strings.Repeat("\x01", 16384) // six bytes each once escaped
			}
			if r := w.create(e.admin, map[string]any{"name": "big", "initialWorkspaceFiles": files}); r.Status != 201 {
				t.Fatalf("four 16 KiB files escaped six-fold = %d %v", r.Status, r.Body)
			}
			huge := `{"name":"huge","configurationId":"` + w.cfg + `","initialWorkspaceFiles":{"AGENTS.md":"` + strings.Repeat("a", 460000) + `"}}`
			if r := e.call("POST", w.path("/agents"), e.admin, huge); r.Status != 413 {
				t.Fatalf("over 448 KiB = %d", r.Status)
			}
		})
		t.Run("a failed or deleting Namespace rejects new Agents", func(t *testing.T) {
			empty := e.createNamespace("agents-doomed")
			cfg := e.call("POST", "/namespaces/"+empty+"/configurations", e.admin, map[string]any{"name": "c", "kind": "agent", "values": map[string]any{}}).data()["id"].(string)
			if _, err := e.m.Store().DB().Exec(`UPDATE namespaces SET status = 'failed' WHERE id = $1`, empty); err != nil {
				t.Fatal(err)
			}
			if r := e.call("POST", "/namespaces/"+empty+"/agents", e.admin, map[string]any{"name": "z", "configurationId": cfg}); r.Status != 409 {
				t.Fatalf("failed namespace = %d %v", r.Status, r.Body)
			}
		})
	})
}

// TestAgentPermissions: create needs Namespace agent:create and exact
// configuration:read; binding a Secret needs the caller's exact operate.
func TestAgentPermissions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, url string) {
		w := newAgentWorld(t, url)
		e := w.e
		nsRead := occ.P(occ.KindNamespace, occ.ActionRead)
		create := occ.P(occ.KindAgent, occ.ActionCreate)
		cfgRead := occ.P(occ.KindConfiguration, occ.ActionRead)
		noCfg, _ := e.principal(grant{perms: []occ.Permission{nsRead, create}, namespace: w.ns})
		if r := w.create(noCfg, map[string]any{"name": "p1"}); r.Status != 403 {
			t.Fatalf("without configuration:read = %d", r.Status)
		}
		both, _ := e.principal(grant{perms: []occ.Permission{nsRead, create, cfgRead}, namespace: w.ns})
		if r := w.create(both, map[string]any{"name": "p2"}); r.Status != 201 {
			t.Fatalf("with create + configuration read = %d %v", r.Status, r.Body)
		}
		secretRef := map[string]any{"kind": "secret", "id": w.secret}
		if r := w.create(both, map[string]any{"name": "p3", "harnessAuth": map[string]any{"method": "api_key", "source": secretRef}}); r.Status != 403 {
			t.Fatalf("binding a Secret without operate = %d", r.Status)
		}
		operator, _ := e.principal(grant{perms: []occ.Permission{nsRead, create, cfgRead, occ.P(occ.KindSecret, occ.ActionOperate)}, namespace: w.ns})
		if r := w.create(operator, map[string]any{"name": "p4", "harnessAuth": map[string]any{"method": "api_key", "source": secretRef}}); r.Status != 201 {
			t.Fatalf("binding a Secret with operate = %d %v", r.Status, r.Body)
		}
		// Lists show only Agents with exact read.
		a := w.create(e.admin, map[string]any{"name": "p5"}).data()["id"].(string)
		role := e.call("POST", w.path("/iam/roles"), e.admin, map[string]any{"name": "agent-reader", "permissions": []string{"agent:read"}}).data()["id"].(string)
		key, spn := e.principal(grant{perms: []occ.Permission{nsRead}, namespace: w.ns})
		if r := e.call("POST", w.path("/iam/bindings"), e.admin, map[string]any{"principalId": spn, "roleId": role, "target": map[string]any{"kind": "agent", "id": a}}); r.Status != 201 {
			t.Fatalf("exact agent binding = %d %v", r.Status, r.Body)
		}
		l := e.call("GET", w.path("/agents"), key, nil).list()
		if len(l) != 1 || l[0].(map[string]any)["id"] != a {
			t.Fatalf("list with one exact read = %v", l)
		}
		// An Agent's service principal cannot get a key.
		sp := e.call("GET", w.path("/agents/"+a), e.admin, nil).data()["servicePrincipalId"]
		if r := e.call("POST", "/api/auth/service-keys", e.admin, map[string]any{"servicePrincipalId": sp, "name": "x"}); r.Status != 400 {
			t.Fatalf("key for an Agent principal = %d", r.Status)
		}
	})
}

func TestAgentUpdateAndPresets(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, url string) {
		w := newAgentWorld(t, url)
		e := w.e
		preset := e.call("POST", w.path("/presets"), e.admin, map[string]any{"name": "p", "executionMode": "dedicated", "backendId": "chatgpt-main",
			"plugins": map[string]any{"github@openai-curated-remote": map[string]any{}}}).data()["id"].(string)
		r := w.create(e.admin, map[string]any{"name": "from-preset", "presetId": preset, "backendId": nil})
		d := r.data()
		if r.Status != 201 || d["executionMode"] != "dedicated" || d["backendId"] != nil || d["plugins"].(map[string]any)["github@openai-curated-remote"] == nil {
			t.Fatalf("preset copy with an explicit null = %d %v", r.Status, r.Body)
		}
		id := d["id"].(string)
		e.call("PATCH", w.path("/presets/"+preset), e.admin, map[string]any{"executionMode": "embedded"})
		if g := e.call("GET", w.path("/agents/"+id), e.admin, nil).data(); g["executionMode"] != "dedicated" {
			t.Fatalf("a Preset edit changed the Agent: %v", g)
		}

		cfg2 := e.call("POST", w.path("/configurations"), e.admin, map[string]any{"name": "c2", "kind": "agent", "values": map[string]any{}}).data()["id"].(string)
		if r := e.call("PATCH", w.path("/agents/"+id), e.admin, map[string]any{"backendId": "chatgpt-main"}); r.Status != 400 {
			t.Fatalf("PATCH without configurationId = %d", r.Status)
		}
		r = e.call("PATCH", w.path("/agents/"+id), e.admin, map[string]any{"configurationId": cfg2, "backendId": "chatgpt-main"})
		if r.Status != 200 || r.data()["configurationId"] != cfg2 || r.data()["backendId"] != "chatgpt-main" || r.data()["executionMode"] != "dedicated" {
			t.Fatalf("PATCH = %d %v", r.Status, r.Body)
		}
		r = e.call("PATCH", w.path("/agents/"+id), e.admin, map[string]any{"configurationId": cfg2, "plugins": map[string]any{}})
		if len(r.data()["plugins"].(map[string]any)) != 0 || r.data()["backendId"] != "chatgpt-main" {
			t.Fatalf("plugins {} clears, backend kept: %v", r.Body)
		}
		r = e.call("PATCH", w.path("/agents/"+id), e.admin, map[string]any{"configurationId": cfg2, "backendId": nil})
		if r.data()["backendId"] != nil {
			t.Fatalf("null clears: %v", r.Body)
		}
		// Reference change needs configuration:read on the new one.
		updater, _ := e.principal(grant{perms: []occ.Permission{occ.P(occ.KindNamespace, occ.ActionRead), occ.P(occ.KindAgent, occ.ActionRead), occ.P(occ.KindAgent, occ.ActionUpdate)}, namespace: w.ns})
		if r := e.call("PATCH", w.path("/agents/"+id), updater, map[string]any{"configurationId": w.cfg}); r.Status != 403 {
			t.Fatalf("PATCH without configuration:read = %d", r.Status)
		}
		// The Configuration is now referenced: deleting it is 409.
		if r := e.call("DELETE", w.path("/configurations/"+cfg2), e.admin, nil); r.Status != 409 {
			t.Fatalf("delete referenced configuration = %d", r.Status)
		}
		// Unreadable saved settings: metadata kept, the setting omitted and named.
		if _, err := e.m.Store().DB().Exec(`UPDATE agents SET harness_auth = '{"meth' WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		g := e.call("GET", w.path("/agents/"+id), e.admin, nil)
		re, _ := g.data()["configurationReadError"].(map[string]any)
		if _, present := g.data()["harnessAuth"]; present || re["field"] != "harnessAuth" || g.data()["name"] != "from-preset" {
			t.Fatalf("unreadable agent = %v", g.Body)
		}
		if l := e.call("GET", w.path("/agents"), e.admin, nil).list(); len(l) != 1 {
			t.Fatalf("list with an unreadable agent = %v", l)
		}
	})
}

func TestAgentChatGPTServiceAccount(t *testing.T) {
	t.Parallel()
	w := newAgentWorld(t, storetest.URL(t, "sqlite"))
	e := w.e
	sa := e.call("POST", w.path("/service-accounts"), e.admin, map[string]any{"name": "acct", "backendId": "chatgpt-main"})
	if sa.Status != 201 {
		t.Fatalf("service account = %d %v", sa.Status, sa.Body)
	}
	h := map[string]any{"method": "chatgpt_service_account", "serviceAccountId": sa.data()["id"]}
	if r := w.create(e.admin, map[string]any{"name": "s1", "executionMode": "dedicated", "harnessAuth": h}); r.Status != 400 {
		t.Fatalf("without the matching backendId = %d %v", r.Status, r.Body)
	}
	r := w.create(e.admin, map[string]any{"name": "s2", "executionMode": "dedicated", "backendId": "chatgpt-main", "harnessAuth": h})
	if r.Status != 201 {
		t.Fatalf("with the matching backendId = %d %v", r.Status, r.Body)
	}
	// Clearing the binding needs service_account:read on the account being removed.
	id := r.data()["id"].(string)
	nsRead := occ.P(occ.KindNamespace, occ.ActionRead)
	updater, _ := e.principal(grant{perms: []occ.Permission{nsRead, occ.P(occ.KindAgent, occ.ActionRead), occ.P(occ.KindAgent, occ.ActionUpdate), occ.P(occ.KindConfiguration, occ.ActionRead)}, namespace: w.ns})
	if r := e.call("PATCH", w.path("/agents/"+id), updater, map[string]any{"configurationId": w.cfg, "harnessAuth": nil}); r.Status != 403 {
		t.Fatalf("clearing an account binding without its read = %d %v", r.Status, r.Body)
	}
	if r := e.call("PATCH", w.path("/agents/"+id), e.admin, map[string]any{"configurationId": w.cfg, "harnessAuth": nil}); r.Status != 200 || r.data()["harnessAuth"] != nil {
		t.Fatalf("clearing as admin = %d %v", r.Status, r.Body)
	}
}

// TestAgentBindingsBlockDeletion: a Secret, service account or credential
// source an Agent's harness binding names cannot be deleted.
func TestAgentBindingsBlockDeletion(t *testing.T) {
	t.Parallel()
	w := newAgentWorld(t, storetest.URL(t, "sqlite"))
	e := w.e
	sa := e.call("POST", w.path("/service-accounts"), e.admin, map[string]any{"name": "acct", "backendId": "chatgpt-main"}).data()["id"].(string)
	a1 := w.create(e.admin, map[string]any{"name": "k", "harnessAuth": map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "id": w.secret}}})
	a2 := w.create(e.admin, map[string]any{"name": "s", "executionMode": "dedicated", "backendId": "chatgpt-main",
		"harnessAuth": map[string]any{"method": "chatgpt_service_account", "serviceAccountId": sa}})
	if a1.Status != 201 || a2.Status != 201 {
		t.Fatalf("agents = %d %d", a1.Status, a2.Status)
	}
	if r := e.call("DELETE", w.path("/secrets/"+w.secret), e.admin, nil); r.Status != 409 {
		t.Fatalf("delete a bound Secret = %d %v", r.Status, r.Body)
	}
	if r := e.call("DELETE", w.path("/service-accounts/"+sa), e.admin, nil); r.Status != 409 {
		t.Fatalf("delete a bound service account = %d %v", r.Status, r.Body)
	}
}

// TestWorkspaceDefaultsIdentity: GET /installation publishes the pinned
// defaults identity; a create that sends it passes, a stale one is 409.
func TestWorkspaceDefaultsIdentity(t *testing.T) {
	t.Parallel()
	w := newAgentWorld(t, storetest.URL(t, "sqlite"))
	e := w.e
	id, _ := e.call("GET", "/installation", e.admin, nil).data()["workspaceDefaultsId"].(string)
	if len(id) != 64 {
		t.Fatalf("workspaceDefaultsId = %q", id)
	}
	files := map[string]any{"AGENTS.md": "Answer support questions.\n"}
	if r := w.create(e.admin, map[string]any{"name": "fresh", "initialWorkspaceFiles": files, "workspaceDefaultsId": id}); r.Status != 201 {
		t.Fatalf("current identity = %d %v", r.Status, r.Body)
	}
	stale := strings.Repeat("0", 64)
	if r := w.create(e.admin, map[string]any{"name": "stale", "initialWorkspaceFiles": files, "workspaceDefaultsId": stale}); r.Status != 409 || r.code() != "RESOURCE_CONFLICT" {
		t.Fatalf("stale identity = %d %v", r.Status, r.Body)
	}
}
