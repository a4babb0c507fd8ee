package api_test

import (
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

func newAgentWorld(t *testing.T, url string) *servertest.AgentWorld {
	e := servertest.Boot(t, url, nil, withInstallationSettings)
	w := &servertest.AgentWorld{E: e, Ns: e.CreateNamespace("agents")}
	w.Cfg = e.Call("POST", w.Path("/configurations"), e.Admin, map[string]any{"name": "c", "kind": "agent", "values": map[string]any{}}).Data()["id"].(string)
	w.Secret = e.Call("POST", w.Path("/secrets"), e.Admin, map[string]any{"name": "openai", "value": "sk-test-value"}).Data()["id"].(string)
	ns2 := e.CreateNamespace("agents-2")
	w.Other = e.Call("POST", "/namespaces/"+ns2+"/configurations", e.Admin, map[string]any{"name": "c", "kind": "agent", "values": map[string]any{}}).Data()["id"].(string)
	return w
}

// TestAgentCreateRules walks the seed's Agent creation, Backend association,
// Harness authentication, Plugin selections, initial Workspace files and
// Namespace ownership rules, one case per rule.
func TestAgentCreateRules(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		w := newAgentWorld(t, url)
		e := w.E
		secretRef := map[string]any{"kind": "secret", "id": w.Secret}
		cases := []struct {
			name   string
			body   map[string]any
			status int
			check  func(t *testing.T, r servertest.Resp)
		}{
			{"saves active, desired stopped, no revision, own service principal", map[string]any{"name": "a1"}, 201, func(t *testing.T, r servertest.Resp) {
				d := r.Data()
				if d["status"] != "active" || d["desiredRuntimeState"] != "stopped" || d["activeRevisionId"] != nil ||
					!strings.HasPrefix(d["servicePrincipalId"].(string), "spn_") || strings.Contains(d["servicePrincipalId"].(string), strings.TrimPrefix(d["id"].(string), "agt_")) {
					t.Fatalf("created agent = %v", d)
				}
				if l := e.Call("GET", w.Path("/agents/"+d["id"].(string)+"/revisions"), e.Admin, nil).List(); len(l) != 0 {
					t.Fatalf("revisions after create: %v", l)
				}
			}},
			{"omitted backend is null; omitted plugins are none; default embedded", map[string]any{"name": "a2"}, 201, func(t *testing.T, r servertest.Resp) {
				d := r.Data()
				if d["backendId"] != nil || len(d["plugins"].(map[string]any)) != 0 || d["executionMode"] != "embedded" || d["harnessAuth"] != nil {
					t.Fatalf("defaults = %v", d)
				}
			}},
			{"names are unique per Namespace", map[string]any{"name": "a1"}, 409, nil},
			{"the Namespace comes only from the URL", map[string]any{"name": "x1", "namespaceId": w.Ns}, 400, nil},
			{"no caller-supplied service principal", map[string]any{"name": "x2", "servicePrincipalId": "spn_00000000-0000-4000-8000-000000000000"}, 400, nil},
			{"no inline configuration document", map[string]any{"name": "x3", "values": map[string]any{}}, 400, nil},
			{"no competing gateway settings", map[string]any{"name": "x4", "gateway": map[string]any{"port": 1}}, 400, nil},
			{"a Configuration of another Namespace is refused", map[string]any{"name": "x5", "configurationId": w.Other}, 400, nil},
			{"a configured Backend is kept", map[string]any{"name": "a3", "backendId": "chatgpt-main"}, 201, func(t *testing.T, r servertest.Resp) {
				if r.Data()["backendId"] != "chatgpt-main" {
					t.Fatalf("backend = %v", r.Data()["backendId"])
				}
			}},
			{"an unconfigured Backend is refused", map[string]any{"name": "x6", "backendId": "nope"}, 400, nil},
			{"api_key binds a Secret of the Namespace", map[string]any{"name": "a4", "harnessAuth": map[string]any{"method": "api_key", "source": secretRef}}, 201, func(t *testing.T, r servertest.Resp) {
				h := r.Data()["harnessAuth"].(map[string]any)
				if h["method"] != "api_key" || h["source"].(map[string]any)["namespaceId"] != w.Ns || strings.Contains(servertest.ToJSON(r.Body), "sk-test-value") {
					t.Fatalf("harnessAuth = %v", h)
				}
			}},
			{"codex_pat needs dedicated mode", map[string]any{"name": "x7", "executionMode": "embedded", "harnessAuth": map[string]any{"method": "codex_pat", "source": secretRef}}, 400, nil},
			{"codex_pat in dedicated mode", map[string]any{"name": "a5", "executionMode": "dedicated", "harnessAuth": map[string]any{"method": "codex_pat", "source": secretRef}}, 201, nil},
			{"runtime only on the SSH driver", map[string]any{"name": "x8", "harnessAuth": map[string]any{"method": "runtime"}}, 400, nil},
			{"a missing Secret is refused", map[string]any{"name": "x9", "harnessAuth": map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "id": "sec_00000000-0000-4000-8000-000000000000"}}}, 400, nil},
			{"plugins keyed name@catalog", map[string]any{"name": "a6", "plugins": map[string]any{"google-calendar@openai-curated-remote": map[string]any{}}}, 201, nil},
			{"a plugin key without catalog is refused", map[string]any{"name": "x10", "plugins": map[string]any{"calendar": map[string]any{}}}, 400, nil},
			{"initial files: a partial map, empty strings allowed, never returned", map[string]any{"name": "a7", "initialWorkspaceFiles": map[string]any{"AGENTS.md": "Answer support questions.\n", "USER.md": ""}}, 201, func(t *testing.T, r servertest.Resp) {
				if strings.Contains(servertest.ToJSON(r.Body), "Answer support") || r.Data()["initialWorkspaceFiles"] != nil {
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
				r := w.Create(e.Admin, c.body)
				if r.Status != c.status {
					t.Fatalf("create %v = %d %v, want %d", c.body, r.Status, r.Body, c.status)
				}
				if c.check != nil {
					c.check(t, r)
				}
			})
		}
		t.Run("lone surrogate in a file is refused", func(t *testing.T) {
			body := `{"name":"x16","configurationId":"` + w.Cfg + `","initialWorkspaceFiles":{"AGENTS.md":"\ud800"}}`
			if r := e.Call("POST", w.Path("/agents"), e.Admin, body); r.Status != 400 {
				t.Fatalf("= %d %v", r.Status, r.Body)
			}
		})
		t.Run("create bodies up to 448 KiB are accepted", func(t *testing.T) {
			files := map[string]any{}
			for _, n := range occ.WorkspaceFileNames {
				files[n] = strings.Repeat("\x01", 16384) // six bytes each once escaped
			}
			if r := w.Create(e.Admin, map[string]any{"name": "big", "initialWorkspaceFiles": files}); r.Status != 201 {
				t.Fatalf("four 16 KiB files escaped six-fold = %d %v", r.Status, r.Body)
			}
			huge := `{"name":"huge","configurationId":"` + w.Cfg + `","initialWorkspaceFiles":{"AGENTS.md":"` + strings.Repeat("a", 460000) + `"}}`
			if r := e.Call("POST", w.Path("/agents"), e.Admin, huge); r.Status != 413 {
				t.Fatalf("over 448 KiB = %d", r.Status)
			}
		})
		t.Run("a failed or deleting Namespace rejects new Agents", func(t *testing.T) {
			empty := e.CreateNamespace("agents-doomed")
			cfg := e.Call("POST", "/namespaces/"+empty+"/configurations", e.Admin, map[string]any{"name": "c", "kind": "agent", "values": map[string]any{}}).Data()["id"].(string)
			if _, err := e.M.Store().DB().Exec(`UPDATE namespaces SET status = 'failed' WHERE id = $1`, empty); err != nil {
				t.Fatal(err)
			}
			if r := e.Call("POST", "/namespaces/"+empty+"/agents", e.Admin, map[string]any{"name": "z", "configurationId": cfg}); r.Status != 409 {
				t.Fatalf("failed namespace = %d %v", r.Status, r.Body)
			}
		})
	})
}

// TestAgentPermissions: create needs Namespace agent:create and exact
// configuration:read; binding a Secret needs the caller's exact operate.
func TestAgentPermissions(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		w := newAgentWorld(t, url)
		e := w.E
		nsRead := occ.P(occ.KindNamespace, occ.ActionRead)
		create := occ.P(occ.KindAgent, occ.ActionCreate)
		cfgRead := occ.P(occ.KindConfiguration, occ.ActionRead)
		noCfg, _ := e.Principal(servertest.Grant{Perms: []occ.Permission{nsRead, create}, Namespace: w.Ns})
		if r := w.Create(noCfg, map[string]any{"name": "p1"}); r.Status != 403 {
			t.Fatalf("without configuration:read = %d", r.Status)
		}
		both, _ := e.Principal(servertest.Grant{Perms: []occ.Permission{nsRead, create, cfgRead}, Namespace: w.Ns})
		if r := w.Create(both, map[string]any{"name": "p2"}); r.Status != 201 {
			t.Fatalf("with create + configuration read = %d %v", r.Status, r.Body)
		}
		secretRef := map[string]any{"kind": "secret", "id": w.Secret}
		if r := w.Create(both, map[string]any{"name": "p3", "harnessAuth": map[string]any{"method": "api_key", "source": secretRef}}); r.Status != 403 {
			t.Fatalf("binding a Secret without operate = %d", r.Status)
		}
		operator, _ := e.Principal(servertest.Grant{Perms: []occ.Permission{nsRead, create, cfgRead, occ.P(occ.KindSecret, occ.ActionOperate)}, Namespace: w.Ns})
		if r := w.Create(operator, map[string]any{"name": "p4", "harnessAuth": map[string]any{"method": "api_key", "source": secretRef}}); r.Status != 201 {
			t.Fatalf("binding a Secret with operate = %d %v", r.Status, r.Body)
		}
		// Lists show only Agents with exact read.
		a := w.Create(e.Admin, map[string]any{"name": "p5"}).Data()["id"].(string)
		role := e.Call("POST", w.Path("/iam/roles"), e.Admin, map[string]any{"name": "agent-reader", "permissions": []string{"agent:read"}}).Data()["id"].(string)
		key, spn := e.Principal(servertest.Grant{Perms: []occ.Permission{nsRead}, Namespace: w.Ns})
		if r := e.Call("POST", w.Path("/iam/bindings"), e.Admin, map[string]any{"principalId": spn, "roleId": role, "target": map[string]any{"kind": "agent", "id": a}}); r.Status != 201 {
			t.Fatalf("exact agent binding = %d %v", r.Status, r.Body)
		}
		l := e.Call("GET", w.Path("/agents"), key, nil).List()
		if len(l) != 1 || l[0].(map[string]any)["id"] != a {
			t.Fatalf("list with one exact read = %v", l)
		}
		// An Agent's service principal cannot get a key.
		sp := e.Call("GET", w.Path("/agents/"+a), e.Admin, nil).Data()["servicePrincipalId"]
		if r := e.Call("POST", "/api/auth/service-keys", e.Admin, map[string]any{"servicePrincipalId": sp, "name": "x"}); r.Status != 400 {
			t.Fatalf("key for an Agent principal = %d", r.Status)
		}
	})
}

func TestAgentUpdateAndPresets(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		w := newAgentWorld(t, url)
		e := w.E
		preset := e.Call("POST", w.Path("/presets"), e.Admin, map[string]any{"name": "p", "executionMode": "dedicated", "backendId": "chatgpt-main",
			"plugins": map[string]any{"github@openai-curated-remote": map[string]any{}}}).Data()["id"].(string)
		r := w.Create(e.Admin, map[string]any{"name": "from-preset", "presetId": preset, "backendId": nil})
		d := r.Data()
		if r.Status != 201 || d["executionMode"] != "dedicated" || d["backendId"] != nil || d["plugins"].(map[string]any)["github@openai-curated-remote"] == nil {
			t.Fatalf("preset copy with an explicit null = %d %v", r.Status, r.Body)
		}
		id := d["id"].(string)
		e.Call("PATCH", w.Path("/presets/"+preset), e.Admin, map[string]any{"executionMode": "embedded"})
		if g := e.Call("GET", w.Path("/agents/"+id), e.Admin, nil).Data(); g["executionMode"] != "dedicated" {
			t.Fatalf("a Preset edit changed the Agent: %v", g)
		}

		cfg2 := e.Call("POST", w.Path("/configurations"), e.Admin, map[string]any{"name": "c2", "kind": "agent", "values": map[string]any{}}).Data()["id"].(string)
		if r := e.Call("PATCH", w.Path("/agents/"+id), e.Admin, map[string]any{"backendId": "chatgpt-main"}); r.Status != 400 {
			t.Fatalf("PATCH without configurationId = %d", r.Status)
		}
		r = e.Call("PATCH", w.Path("/agents/"+id), e.Admin, map[string]any{"configurationId": cfg2, "backendId": "chatgpt-main"})
		if r.Status != 200 || r.Data()["configurationId"] != cfg2 || r.Data()["backendId"] != "chatgpt-main" || r.Data()["executionMode"] != "dedicated" {
			t.Fatalf("PATCH = %d %v", r.Status, r.Body)
		}
		r = e.Call("PATCH", w.Path("/agents/"+id), e.Admin, map[string]any{"configurationId": cfg2, "plugins": map[string]any{}})
		if len(r.Data()["plugins"].(map[string]any)) != 0 || r.Data()["backendId"] != "chatgpt-main" {
			t.Fatalf("plugins {} clears, backend kept: %v", r.Body)
		}
		r = e.Call("PATCH", w.Path("/agents/"+id), e.Admin, map[string]any{"configurationId": cfg2, "backendId": nil})
		if r.Data()["backendId"] != nil {
			t.Fatalf("null clears: %v", r.Body)
		}
		// Reference change needs configuration:read on the new one.
		updater, _ := e.Principal(servertest.Grant{Perms: []occ.Permission{occ.P(occ.KindNamespace, occ.ActionRead), occ.P(occ.KindAgent, occ.ActionRead), occ.P(occ.KindAgent, occ.ActionUpdate)}, Namespace: w.Ns})
		if r := e.Call("PATCH", w.Path("/agents/"+id), updater, map[string]any{"configurationId": w.Cfg}); r.Status != 403 {
			t.Fatalf("PATCH without configuration:read = %d", r.Status)
		}
		// The Configuration is now referenced: deleting it is 409.
		if r := e.Call("DELETE", w.Path("/configurations/"+cfg2), e.Admin, nil); r.Status != 409 {
			t.Fatalf("delete referenced configuration = %d", r.Status)
		}
		// Unreadable saved settings: metadata kept, the setting omitted and named.
		if _, err := e.M.Store().DB().Exec(`UPDATE agents SET harness_auth = '{"meth' WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		g := e.Call("GET", w.Path("/agents/"+id), e.Admin, nil)
		re, _ := g.Data()["configurationReadError"].(map[string]any)
		if _, present := g.Data()["harnessAuth"]; present || re["field"] != "harnessAuth" || g.Data()["name"] != "from-preset" {
			t.Fatalf("unreadable agent = %v", g.Body)
		}
		if l := e.Call("GET", w.Path("/agents"), e.Admin, nil).List(); len(l) != 1 {
			t.Fatalf("list with an unreadable agent = %v", l)
		}
	})
}

func TestAgentChatGPTServiceAccount(t *testing.T) {
	t.Parallel()
	w := newAgentWorld(t, storetest.Migrated(t, "sqlite"))
	e := w.E
	sa := e.Call("POST", w.Path("/service-accounts"), e.Admin, map[string]any{"name": "acct", "backendId": "chatgpt-main"})
	if sa.Status != 201 {
		t.Fatalf("service account = %d %v", sa.Status, sa.Body)
	}
	h := map[string]any{"method": "chatgpt_service_account", "serviceAccountId": sa.Data()["id"]}
	if r := w.Create(e.Admin, map[string]any{"name": "s1", "executionMode": "dedicated", "harnessAuth": h}); r.Status != 400 {
		t.Fatalf("without the matching backendId = %d %v", r.Status, r.Body)
	}
	r := w.Create(e.Admin, map[string]any{"name": "s2", "executionMode": "dedicated", "backendId": "chatgpt-main", "harnessAuth": h})
	if r.Status != 201 {
		t.Fatalf("with the matching backendId = %d %v", r.Status, r.Body)
	}
	// Clearing the binding needs service_account:read on the account being removed.
	id := r.Data()["id"].(string)
	nsRead := occ.P(occ.KindNamespace, occ.ActionRead)
	updater, _ := e.Principal(servertest.Grant{Perms: []occ.Permission{nsRead, occ.P(occ.KindAgent, occ.ActionRead), occ.P(occ.KindAgent, occ.ActionUpdate), occ.P(occ.KindConfiguration, occ.ActionRead)}, Namespace: w.Ns})
	if r := e.Call("PATCH", w.Path("/agents/"+id), updater, map[string]any{"configurationId": w.Cfg, "harnessAuth": nil}); r.Status != 403 {
		t.Fatalf("clearing an account binding without its read = %d %v", r.Status, r.Body)
	}
	if r := e.Call("PATCH", w.Path("/agents/"+id), e.Admin, map[string]any{"configurationId": w.Cfg, "harnessAuth": nil}); r.Status != 200 || r.Data()["harnessAuth"] != nil {
		t.Fatalf("clearing as admin = %d %v", r.Status, r.Body)
	}
}

// TestAgentBindingsBlockDeletion: a Secret, service account or credential
// source an Agent's harness binding names cannot be deleted.
func TestAgentBindingsBlockDeletion(t *testing.T) {
	t.Parallel()
	w := newAgentWorld(t, storetest.Migrated(t, "sqlite"))
	e := w.E
	sa := e.Call("POST", w.Path("/service-accounts"), e.Admin, map[string]any{"name": "acct", "backendId": "chatgpt-main"}).Data()["id"].(string)
	a1 := w.Create(e.Admin, map[string]any{"name": "k", "harnessAuth": map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "id": w.Secret}}})
	a2 := w.Create(e.Admin, map[string]any{"name": "s", "executionMode": "dedicated", "backendId": "chatgpt-main",
		"harnessAuth": map[string]any{"method": "chatgpt_service_account", "serviceAccountId": sa}})
	if a1.Status != 201 || a2.Status != 201 {
		t.Fatalf("agents = %d %d", a1.Status, a2.Status)
	}
	if r := e.Call("DELETE", w.Path("/secrets/"+w.Secret), e.Admin, nil); r.Status != 409 {
		t.Fatalf("delete a bound Secret = %d %v", r.Status, r.Body)
	}
	if r := e.Call("DELETE", w.Path("/service-accounts/"+sa), e.Admin, nil); r.Status != 409 {
		t.Fatalf("delete a bound service account = %d %v", r.Status, r.Body)
	}
}

// TestWorkspaceDefaultsIdentity: GET /installation publishes the pinned
// defaults identity; a create that sends it passes, a stale one is 409.
func TestWorkspaceDefaultsIdentity(t *testing.T) {
	t.Parallel()
	w := newAgentWorld(t, storetest.Migrated(t, "sqlite"))
	e := w.E
	id, _ := e.Call("GET", "/installation", e.Admin, nil).Data()["workspaceDefaultsId"].(string)
	if len(id) != 64 {
		t.Fatalf("workspaceDefaultsId = %q", id)
	}
	files := map[string]any{"AGENTS.md": "Answer support questions.\n"}
	if r := w.Create(e.Admin, map[string]any{"name": "fresh", "initialWorkspaceFiles": files, "workspaceDefaultsId": id}); r.Status != 201 {
		t.Fatalf("current identity = %d %v", r.Status, r.Body)
	}
	stale := strings.Repeat("0", 64)
	if r := w.Create(e.Admin, map[string]any{"name": "stale", "initialWorkspaceFiles": files, "workspaceDefaultsId": stale}); r.Status != 409 || r.Code() != "RESOURCE_CONFLICT" {
		t.Fatalf("stale identity = %d %v", r.Status, r.Body)
	}
}
