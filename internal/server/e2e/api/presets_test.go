package api_test

import (
	"testing"

	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// withInstallationSettings configures a Backend and one installation Preset.
func withInstallationSettings(m *server.Main) {
	m.Config.Backends = []config.Backend{{ID: "chatgpt-main", Type: "chatgpt", URL: "http://127.0.0.1:9/"}}
	m.Config.Presets = []config.Preset{{Name: "standard-openclaw", ExecutionMode: "embedded",
		Plugins: map[string]config.PluginSelection{"google-calendar@openai-curated-remote": {ApprovalPolicy: "write_actions"}}}}
}

func TestPresets(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := servertest.Boot(t, url, nil, withInstallationSettings)
		ns := e.CreateNamespace("presets")
		base := "/namespaces/" + ns + "/presets"

		// The installation Preset was seeded into the new Namespace (and the default one at start).
		seeded := e.Call("GET", base, e.Admin, nil).List()
		if len(seeded) != 1 || seeded[0].(map[string]any)["source"] != "installation" || seeded[0].(map[string]any)["executionMode"] != "embedded" {
			t.Fatalf("seeded presets = %v", seeded)
		}
		def := e.Call("GET", "/namespaces", e.Admin, nil).List()[0].(map[string]any)["id"].(string)
		if l := e.Call("GET", "/namespaces/"+def+"/presets", e.Admin, nil).List(); len(l) != 1 {
			t.Fatalf("default namespace presets at start = %v", l)
		}

		cfg := e.Call("POST", "/namespaces/"+ns+"/configurations", e.Admin, map[string]any{"name": "c", "kind": "agent", "values": map[string]any{}}).Data()["id"].(string)
		r := e.Call("POST", base, e.Admin, map[string]any{"name": "codex", "executionMode": "dedicated", "backendId": "chatgpt-main",
			"harnessAuth":     map[string]any{"method": "chatgpt_service_account", "serviceAccountId": "sa_00000000-0000-4000-8000-000000000000"},
			"configurationId": cfg, "plugins": map[string]any{"github@openai-curated-remote": map[string]any{}}})
		if r.Status != 201 || r.Data()["backendId"] != "chatgpt-main" || r.Data()["configurationId"] != cfg {
			t.Fatalf("create = %d %v", r.Status, r.Body)
		}
		id := r.Data()["id"].(string)

		// Tri-state PATCH: absent keeps, null clears, {} clears plugins.
		r = e.Call("PATCH", base+"/"+id, e.Admin, map[string]any{"backendId": nil, "plugins": map[string]any{}})
		if r.Status != 200 || r.Data()["backendId"] != nil || r.Data()["executionMode"] != "dedicated" || len(r.Data()["plugins"].(map[string]any)) != 0 ||
			r.Data()["harnessAuth"] == nil {
			t.Fatalf("patch = %d %v", r.Status, r.Body)
		}
		r = e.Call("PATCH", base+"/"+id, e.Admin, map[string]any{"harnessAuth": nil, "executionMode": "embedded"}, "If-Match", `"2"`)
		if r.Status != 200 || r.Data()["harnessAuth"] != nil || r.Data()["executionMode"] != "embedded" {
			t.Fatalf("patch 2 = %d %v", r.Status, r.Body)
		}

		for name, body := range map[string]map[string]any{
			"unknown backend":          {"name": "b1", "backendId": "nope"},
			"bad plugin id":            {"name": "b2", "plugins": map[string]any{"NoCatalog": map[string]any{}}},
			"pat in embedded mode":     {"name": "b3", "executionMode": "embedded", "harnessAuth": map[string]any{"method": "codex_pat", "source": map[string]any{"kind": "secret", "id": "sec_00000000-0000-4000-8000-000000000000"}}},
			"method without reference": {"name": "b4", "harnessAuth": map[string]any{"method": "api_key"}},
			"extra reference":          {"name": "b5", "harnessAuth": map[string]any{"method": "runtime", "sourceId": "cs_00000000-0000-4000-8000-000000000000"}},
			"secret of another ns":     {"name": "b6", "harnessAuth": map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "namespaceId": def, "id": "sec_00000000-0000-4000-8000-000000000000"}}},
			"missing configuration":    {"name": "b7", "configurationId": "cfg_00000000-0000-4000-8000-000000000000"},
		} {
			if r := e.Call("POST", base, e.Admin, body); r.Status != 400 {
				t.Errorf("%s: %d %v", name, r.Status, r.Body)
			}
		}

		// A changed installation Preset blocks Namespace deletion; an unchanged one goes with it.
		if r := e.Call("DELETE", base+"/"+id, e.Admin, nil); r.Status != 204 {
			t.Fatalf("delete preset = %d", r.Status)
		}
		e.Call("DELETE", "/namespaces/"+ns+"/configurations/"+cfg, e.Admin, nil)
		seededID := seeded[0].(map[string]any)["id"].(string)
		e.Call("PATCH", base+"/"+seededID, e.Admin, map[string]any{"executionMode": "dedicated"})
		if r := e.Call("DELETE", "/namespaces/"+ns, e.Admin, nil); r.Status != 409 {
			t.Fatalf("delete with a changed seeded preset = %d %v", r.Status, r.Body)
		}
		other := e.CreateNamespace("presets-2")
		if r := e.Call("DELETE", "/namespaces/"+other, e.Admin, nil); r.Status != 202 {
			t.Fatalf("delete with an unchanged seeded preset = %d %v", r.Status, r.Body)
		}
		e.WaitStatus(other, "gone")
	})
}
