package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
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
	d := newDeployWorld(t, storetest.URL(t, "sqlite"))
	e := d.e
	base := d.path("/configurations")
	allowed := gatewaytest.AllowedDocument()
	r := e.call("POST", base, e.admin, map[string]any{"name": "neighbours", "kind": "agent", "values": allowed})
	if r.Status != 201 || toJSON(r.data()["values"]) != toJSON(allowed) {
		t.Fatalf("create with the allowed neighbours = %d %v", r.Status, r.Body)
	}
	neighbours := r.data()["id"].(string)

	refused := func(what string, r resp, doc map[string]any, value string) {
		t.Helper()
		want := gateway.RefusedKey(doc)
		errBody, _ := r.Body["error"].(map[string]any)
		details, _ := errBody["details"].([]any)
		if r.Status != 400 || r.code() != "INVALID_REQUEST" || len(details) != 1 || errBody["message"] != want.Message() ||
			toJSON(details[0]) != toJSON(map[string]any{"code": "INVALID_VALUE", "path": "/values" + want.Pointer}) {
			t.Errorf("%s: %d %v; want 400 naming /values%s", what, r.Status, r.Body, want.Pointer)
		}
		if strings.Contains(toJSON(r.Body), value) {
			t.Errorf("%s: the answer repeats the value: %v", what, r.Body)
		}
	}
	for i, rule := range gateway.KeyRules() {
		value := fmt.Sprintf("occ-refused-%03d", i)
		doc := gatewaytest.DocAt(rule.Example, value)
		refused("create with "+rule.Example, e.call("POST", base, e.admin, map[string]any{"name": "r", "kind": "agent", "values": doc}), doc, value)
		refused("patch with "+rule.Example, e.call("PATCH", base+"/"+neighbours, e.admin, map[string]any{"values": doc}), doc, value)

		// A row stored before the rule: deploy admission checks the
		// snapshot it would take.
		old := gatewaytest.DocAt(rule.Example, value)
		gatewaytest.Merge(old, gatewaytest.DocAt("agents.defaults.model", "openai/gpt-5"))
		if _, err := e.m.Store().DB().Exec(`UPDATE configurations SET doc_values = $1 WHERE id = $2`, toJSON(old), d.cfg); err != nil {
			t.Fatal(err)
		}
		refused("deploy with "+rule.Example, e.call("POST", d.path("/agents/"+d.agent+"/deploy"), e.admin, nil), doc, value)
	}
	if l := e.call("GET", base, e.admin, nil).list(); len(l) != 2 {
		t.Fatalf("%d Configurations after the refused creates; want 2", len(l))
	}
	if r := e.call("GET", base+"/"+neighbours, e.admin, nil); r.data()["generation"] != float64(1) || toJSON(r.data()["values"]) != toJSON(allowed) {
		t.Fatalf("Configuration after the refused patches = %v; want it untouched", r.Body)
	}
	if l := e.call("GET", d.path("/agents/"+d.agent+"/revisions"), e.admin, nil).list(); len(l) != 0 {
		t.Fatalf("refused deploys admitted %d revisions", len(l))
	}

	// The old row holds the last rule's key: a PATCH that keeps it is
	// refused, one that removes it (and adds the neighbours) is accepted,
	// and the Agent deploys.
	last := gateway.KeyRules()[len(gateway.KeyRules())-1]
	if r := e.call("PATCH", base+"/"+d.cfg, e.admin, map[string]any{"values": map[string]any{"logging": map[string]any{"level": "info"}}}); r.Status != 400 {
		t.Fatalf("patch keeping %s = %d %v", last.Example, r.Status, r.Body)
	}
	fix := gatewaytest.AllowedDocument()
	gatewaytest.Merge(fix, gatewaytest.DocAt(last.Example, nil))
	if r := e.call("PATCH", base+"/"+d.cfg, e.admin, map[string]any{"values": fix}); r.Status != 200 || gateway.RefusedKey(r.data()["values"].(map[string]any)) != nil {
		t.Fatalf("patch removing %s = %d %v", last.Example, r.Status, r.Body)
	}
	if dep := d.waitDeployment(t, d.agent, d.deploy(t, d.agent)); dep["status"] != "succeeded" {
		t.Fatalf("deployment with the allowed neighbours = %v", dep)
	}
}
