package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestConfigurationKeysOccOwns: every key of the owned-keys table
// (gateway.KeyRules) is refused when a Configuration is created, when a
// PATCH's result holds it, and when an Agent is deployed with a
// Configuration stored before the rule existed: 400 INVALID_REQUEST naming
// the key under /values, never its value, and nothing written. The keys
// beside them are accepted at all three.
func TestConfigurationKeysOccOwns(t *testing.T) {
	t.Parallel()
	d := newDeployWorld(t, storetest.Migrated(t, "sqlite"))
	e := d.E
	base := d.Path("/configurations")
	allowed := gatewaytest.AllowedDocument()
	r := e.Call("POST", base, e.Admin, map[string]any{"name": "neighbours", "kind": "agent", "values": allowed})
	if r.Status != 201 || servertest.ToJSON(r.Data()["values"]) != servertest.ToJSON(allowed) {
		t.Fatalf("create with the allowed neighbours = %d %v", r.Status, r.Body)
	}
	neighbours := r.Data()["id"].(string)

	refused := func(what string, r servertest.Resp, doc map[string]any, value string) {
		t.Helper()
		want := gateway.RefusedKey(doc)
		errBody, _ := r.Body["error"].(map[string]any)
		details, _ := errBody["details"].([]any)
		if r.Status != 400 || r.Code() != "INVALID_REQUEST" || len(details) != 1 || errBody["message"] != want.Message() ||
			servertest.ToJSON(details[0]) != servertest.ToJSON(map[string]any{"code": "INVALID_VALUE", "path": "/values" + want.Pointer}) {
			t.Errorf("%s: %d %v; want 400 naming /values%s", what, r.Status, r.Body, want.Pointer)
		}
		if strings.Contains(servertest.ToJSON(r.Body), value) {
			t.Errorf("%s: the answer repeats the value: %v", what, r.Body)
		}
	}
	for i, rule := range gateway.KeyRules() {
		value := fmt.Sprintf("occ-refused-%03d", i)
		doc := gatewaytest.DocAt(rule.Example, value)
		refused("create with "+rule.Example, e.Call("POST", base, e.Admin, map[string]any{"name": "r", "kind": "agent", "values": doc}), doc, value)
		refused("patch with "+rule.Example, e.Call("PATCH", base+"/"+neighbours, e.Admin, map[string]any{"values": doc}), doc, value)

		// A row stored before the rule: deploy admission checks the
		// snapshot it would take.
		old := gatewaytest.DocAt(rule.Example, value)
		gatewaytest.Merge(old, gatewaytest.DocAt("agents.defaults.model", "openai/gpt-5"))
		if _, err := e.M.Store().DB().Exec(`UPDATE configurations SET doc_values = $1 WHERE id = $2`, servertest.ToJSON(old), d.Cfg); err != nil {
			t.Fatal(err)
		}
		refused("deploy with "+rule.Example, e.Call("POST", d.Path("/agents/"+d.Agent+"/deploy"), e.Admin, nil), doc, value)
	}
	if l := e.Call("GET", base, e.Admin, nil).List(); len(l) != 2 {
		t.Fatalf("%d Configurations after the refused creates; want 2", len(l))
	}
	if r := e.Call("GET", base+"/"+neighbours, e.Admin, nil); r.Data()["generation"] != float64(1) || servertest.ToJSON(r.Data()["values"]) != servertest.ToJSON(allowed) {
		t.Fatalf("Configuration after the refused patches = %v; want it untouched", r.Body)
	}
	if l := e.Call("GET", d.Path("/agents/"+d.Agent+"/revisions"), e.Admin, nil).List(); len(l) != 0 {
		t.Fatalf("refused deploys admitted %d revisions", len(l))
	}

	// The old row holds the last rule's key: a PATCH that keeps it is
	// refused, one that removes it (and adds the neighbours) is accepted,
	// and the Agent deploys.
	last := gateway.KeyRules()[len(gateway.KeyRules())-1]
	if r := e.Call("PATCH", base+"/"+d.Cfg, e.Admin, map[string]any{"values": map[string]any{"logging": map[string]any{"level": "info"}}}); r.Status != 400 {
		t.Fatalf("patch keeping %s = %d %v", last.Example, r.Status, r.Body)
	}
	fix := gatewaytest.AllowedDocument()
	gatewaytest.Merge(fix, gatewaytest.DocAt(last.Example, nil))
	if r := e.Call("PATCH", base+"/"+d.Cfg, e.Admin, map[string]any{"values": fix}); r.Status != 200 || gateway.RefusedKey(r.Data()["values"].(map[string]any)) != nil {
		t.Fatalf("patch removing %s = %d %v", last.Example, r.Status, r.Body)
	}
	if dep := d.WaitDeployment(t, d.Agent, d.Deploy(t, d.Agent)); dep["status"] != "succeeded" {
		t.Fatalf("deployment with the allowed neighbours = %v", dep)
	}
}
