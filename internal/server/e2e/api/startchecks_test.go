package api_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestDeployPluginChecks: a revision starts only with plugins of the
// installation's catalogs that the compute driver can run with their
// approval policy; otherwise the deployment fails before any effect, with
// a fixed code, and the Agent keeps its selections. Warnings name admitted
// plugins only.
func TestDeployPluginChecks(t *testing.T) {
	t.Parallel()
	catalogs := func(m *server.Main) {
		m.Config.PluginCatalogs = []config.PluginCatalog{{ID: "curated", Plugins: []string{"acme@curated", "beta@curated"}}}
	}
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		d := newDeployWorld(t, url, catalogs)
		e := d.E
		withPlugins := func(name string, plugins map[string]any) string {
			agent, _ := d.NewAgent(t, name, true)
			if r := e.Call("PATCH", d.Path("/agents/"+agent), e.Admin, map[string]any{"configurationId": d.Cfg, "plugins": plugins}); r.Status != 200 {
				t.Fatalf("PATCH plugins = %d %v", r.Status, r.Body)
			}
			return agent
		}
		for _, c := range []struct {
			name    string
			plugins map[string]any
			code    string
		}{
			{"outside", map[string]any{"acme@curated": map[string]any{}, "ghost@curated": map[string]any{}}, "PLUGIN_NOT_IN_CATALOG"},
			{"other-catalog", map[string]any{"acme@elsewhere": map[string]any{}}, "PLUGIN_NOT_IN_CATALOG"},
			{"policy", map[string]any{"acme@curated": map[string]any{"approvalPolicy": "all_actions"}}, "PLUGIN_SELECTION_UNSUPPORTED"},
		} {
			agent := withPlugins(c.name, c.plugins)
			st := d.WaitDeployment(t, agent, d.Deploy(t, agent))
			er, _ := st["error"].(map[string]any)
			if st["status"] != "failed" || er["code"] != c.code || er["message"] == "Deployment reconciliation failed." || er["data"] != nil {
				t.Fatalf("%s: deployment = %v, want failed %s", c.name, servertest.ToJSON(st), c.code)
			}
			d.Fake.Get(func(f *servertest.FakeCompute) {
				if f.Running[agent] != "" {
					t.Fatalf("%s: a gateway started for a revision with unsupported plugins", c.name)
				}
			})
			got, _ := e.Call("GET", d.Path("/agents/"+agent), e.Admin, nil).Data()["plugins"].(map[string]any)
			if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(c.plugins))) {
				t.Fatalf("%s: the Agent's plugins changed to %v", c.name, got)
			}
		}

		// Admitted plugins start; only their warnings are reported.
		agent := withPlugins("admitted", map[string]any{"acme@curated": map[string]any{"approvalPolicy": "provider_default"}, "beta@curated": map[string]any{"approvalPolicy": "none"}})
		d.Fake.Set(func(f *servertest.FakeCompute) {
			f.Warnings[agent] = []compute.Warning{{Code: "PLUGIN_AUTH_REQUIRED", PluginID: "acme@curated"}, {Code: "PLUGIN_INSTALL_FAILED", PluginID: "zzz@curated"}}
		})
		st := d.WaitDeployment(t, agent, d.Deploy(t, agent))
		if st["status"] != "succeeded" || servertest.ToJSON(st["warnings"]) != `[{"code":"PLUGIN_AUTH_REQUIRED","pluginId":"acme@curated"}]` {
			t.Fatalf("admitted plugins: deployment = %v", servertest.ToJSON(st))
		}
	})
}

// TestLocalDriverRunsNoPlugins: the local driver cannot run plugin
// selections yet, so a revision selecting one (even from a catalog) fails
// with PLUGIN_SELECTION_UNSUPPORTED instead of starting without it.
func TestLocalDriverRunsNoPlugins(t *testing.T) {
	t.Parallel()
	e := servertest.Boot(t, storetest.Migrated(t, "sqlite"), nil, func(m *server.Main) {
		m.Config.PluginCatalogs = []config.PluginCatalog{{ID: "curated", Plugins: []string{"acme@curated"}}}
	})
	d := &servertest.DeployWorld{AgentWorld: &servertest.AgentWorld{E: e, Ns: e.CreateNamespace("plugins")}}
	d.Secret = e.Call("POST", d.Path("/secrets"), e.Admin, map[string]any{"name": "k", "value": "sk-x"}).Data()["id"].(string)
	d.Cfg = e.Call("POST", d.Path("/configurations"), e.Admin, map[string]any{"name": "c", "kind": "agent", "values": map[string]any{}}).Data()["id"].(string)
	agent, _ := d.NewAgent(t, "plugged", true)
	if r := e.Call("PATCH", d.Path("/agents/"+agent), e.Admin, map[string]any{"configurationId": d.Cfg, "plugins": map[string]any{"acme@curated": map[string]any{}}}); r.Status != 200 {
		t.Fatalf("PATCH plugins = %d %v", r.Status, r.Body)
	}
	st := d.WaitDeployment(t, agent, d.Deploy(t, agent))
	if er, _ := st["error"].(map[string]any); st["status"] != "failed" || er["code"] != "PLUGIN_SELECTION_UNSUPPORTED" {
		t.Fatalf("deployment = %v", servertest.ToJSON(st))
	}
}

// TestDeployWorkspaceDefaultsCheck: staged initial files prepared for other
// workspace defaults than the runtime's (as after a runtime upgrade between
// create and the first deploy) fail the startup with WORKSPACE_SETUP_FAILED
// before any gateway starts; files prepared for the current defaults start.
func TestDeployWorkspaceDefaultsCheck(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		d := newDeployWorld(t, url)
		e := d.E
		create := func(name string) string {
			r := d.Create(e.Admin, map[string]any{"name": name, "workspaceDefaultsId": gateway.PinnedDefaultsID,
				"harnessAuth":           map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "id": d.Secret}},
				"initialWorkspaceFiles": map[string]any{"SOUL.md": "Calm.\n"}})
			if r.Status != 201 {
				t.Fatalf("create = %d %v", r.Status, r.Body)
			}
			id := r.Data()["id"].(string)
			d.GrantSecrets(t, name, r.Data()["servicePrincipalId"].(string))
			return id
		}
		current, stale := create("current"), create("stale")
		if _, err := e.M.Store().DB().Exec(`UPDATE agent_staged_files SET defaults_id = $1 WHERE agent_id = $2`, strings.Repeat("0", 64), stale); err != nil {
			t.Fatal(err)
		}
		st := d.WaitDeployment(t, stale, d.Deploy(t, stale))
		if er, _ := st["error"].(map[string]any); st["status"] != "failed" || er["code"] != "WORKSPACE_SETUP_FAILED" || strings.Contains(servertest.ToJSON(st), "Calm") {
			t.Fatalf("stale defaults: deployment = %v", servertest.ToJSON(st))
		}
		d.Fake.Get(func(f *servertest.FakeCompute) {
			if f.Running[stale] != "" || f.Files[stale] != nil {
				t.Fatalf("a gateway started with stale initial files: %v", f.Files[stale])
			}
		})
		if st := d.WaitDeployment(t, current, d.Deploy(t, current)); st["status"] != "succeeded" {
			t.Fatalf("current defaults: deployment = %v", servertest.ToJSON(st))
		}
		d.Fake.Get(func(f *servertest.FakeCompute) {
			if f.Files[current]["SOUL.md"] != "Calm.\n" {
				t.Fatalf("initial files given to the driver = %v", f.Files[current])
			}
		})
	})
}

// TestLocalDriverRefusesDedicated: a local driver without the Codex
// harness (here: one running a configured gateway command, the fake
// gateway) runs embedded OpenClaw only, so deploying a dedicated Agent (the seed's first example) answers
// 400 naming /executionMode with EXECUTION_MODE_UNSUPPORTED: no revision
// is admitted and no gateway starts. The same Agent switched to embedded
// deploys.
func TestLocalDriverRefusesDedicated(t *testing.T) {
	t.Parallel()
	e := servertest.Boot(t, storetest.Migrated(t, "sqlite"), nil)
	d := &servertest.DeployWorld{AgentWorld: &servertest.AgentWorld{E: e, Ns: e.CreateNamespace("dedicated")}}
	d.Secret = e.Call("POST", d.Path("/secrets"), e.Admin, map[string]any{"name": "k", "value": "sk-x"}).Data()["id"].(string)
	d.Cfg = e.Call("POST", d.Path("/configurations"), e.Admin, map[string]any{"name": "c", "kind": "agent", "values": map[string]any{}}).Data()["id"].(string)
	r := d.Create(e.Admin, map[string]any{"name": "ticket-triage", "executionMode": "dedicated",
		"harnessAuth": map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "id": d.Secret}}})
	if r.Status != 201 {
		t.Fatalf("create = %d %v", r.Status, r.Body)
	}
	agent := r.Data()["id"].(string)
	d.GrantSecrets(t, "triage", r.Data()["servicePrincipalId"].(string))
	refused := e.Call("POST", d.Path("/agents/"+agent+"/deploy"), e.Admin, nil)
	if path, code := refused.Detail(); refused.Status != 400 || refused.Code() != "INVALID_REQUEST" ||
		path != "/executionMode" || code != "EXECUTION_MODE_UNSUPPORTED" {
		t.Fatalf("deploy of a dedicated Agent = %d %v", refused.Status, servertest.ToJSON(refused.Body))
	}
	if revs := e.Call("GET", d.Path("/agents/"+agent+"/revisions"), e.Admin, nil); len(revs.List()) != 0 {
		t.Fatalf("revisions after the refusal = %v", servertest.ToJSON(revs.Body))
	}
	if _, err := os.Stat(filepath.Join(e.M.Config.DataDir, "compute", "namespaces", d.Ns, "agents", agent)); !os.IsNotExist(err) {
		t.Fatalf("the local driver made a directory for the refused Agent: %v", err)
	}
	if r := e.Call("PATCH", d.Path("/agents/"+agent), e.Admin, map[string]any{"configurationId": d.Cfg, "executionMode": "embedded"}); r.Status != 200 {
		t.Fatalf("PATCH executionMode = %d %v", r.Status, r.Body)
	}
	if st := d.WaitDeployment(t, agent, d.Deploy(t, agent)); st["status"] != "succeeded" {
		t.Fatalf("embedded deployment = %v", servertest.ToJSON(st))
	}
}
