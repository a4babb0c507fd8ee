package gateway_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
)

func sentinel(i int) string { return fmt.Sprintf("occ-refused-value-%03d", i) }

// TestKeyRulesRefuseTheirExamples: each row of the table refuses its
// example key, whatever the value (null included), names it by JSON
// Pointer and never repeats the value in its message.
func TestKeyRulesRefuseTheirExamples(t *testing.T) {
	t.Parallel()
	rules := gateway.KeyRules()
	if len(rules) < 50 {
		t.Fatalf("%d rules; the table lost rows", len(rules))
	}
	for i, rule := range rules {
		segs := strings.Split(rule.Pattern, ".")
		if last := segs[len(segs)-1]; last == "*" || last == "**" || rule.Reason == "" ||
			(rule.Class != gateway.KeyOwned && rule.Class != gateway.KeyForbidden) {
			t.Errorf("rule %q: malformed (%+v)", rule.Pattern, rule)
		}
		for _, v := range []any{sentinel(i), nil, map[string]any{"x": sentinel(i)}} {
			r := gateway.RefusedKey(gatewaytest.DocAt(rule.Example, v))
			want := refusedPrefix(rule)
			if r == nil || r.Rule.Pattern != rule.Pattern || r.Pointer != want {
				t.Errorf("example %s (%v) refused as %+v; want %s by rule %q", rule.Example, v, r, want, rule.Pattern)
				continue
			}
			msg := r.Message()
			if !strings.Contains(msg, strings.TrimPrefix(rule.Pattern, "**.")) || strings.Contains(msg, sentinel(i)) {
				t.Errorf("message %q: want the key named and no value", msg)
			}
		}
	}
}

// refusedPrefix is the pointer of the key of rule.Example that the rule
// names: the example up to the first segment equal to the pattern's last.
func refusedPrefix(rule gateway.KeyRule) string {
	pat := strings.Split(rule.Pattern, ".")
	ex := strings.Split(rule.Example, ".")
	for i, s := range ex {
		if s == pat[len(pat)-1] {
			return "/" + strings.Join(ex[:i+1], "/")
		}
	}
	return "(the example does not name the pattern's key)"
}

func TestRefusedKeyAllowsNeighbours(t *testing.T) {
	t.Parallel()
	for path, v := range gatewaytest.AllowedKeys() {
		if r := gateway.RefusedKey(gatewaytest.DocAt(path, v)); r != nil {
			t.Errorf("%s refused (%s)", path, r.Message())
		}
	}
	if r := gateway.RefusedKey(gatewaytest.AllowedDocument()); r != nil {
		t.Errorf("neighbours together refused at %s", r.Pointer)
	}
	if r := gateway.RefusedKey(nil); r != nil {
		t.Errorf("empty document refused at %s", r.Pointer)
	}
}

// TestRefusedKeyOrderAndPointer: the first key in sorted order is named,
// through arrays, with RFC 6901 escaping.
func TestRefusedKeyOrderAndPointer(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		doc  string
		want string
	}{
		{`{"zeta":{"env":{}},"gateway":{"port":1,"bind":"lan"}}`, "/gateway/bind"},
		{`{"bindings":[{"agentId":"a"},{"acp":{"cwd":"/"}}]}`, "/bindings/1/acp/cwd"},
		{`{"mcp":{"servers":{"a/b~c":{"env":{"LD_PRELOAD":"x"}}}}}`, "/mcp/servers/a~1b~0c/env"},
		{`{"agents":{"list":[{"id":"x","workspace":"/"}]}}`, "/agents/list/0/workspace"},
		{`{"x":[[{"$include":"./a.json5"}]]}`, "/x/0/0/$include"},
	} {
		var doc map[string]any
		if err := json.Unmarshal([]byte(tt.doc), &doc); err != nil {
			t.Fatal(err)
		}
		if r := gateway.RefusedKey(doc); r == nil || r.Pointer != tt.want {
			t.Errorf("%s: refused %+v; want %s", tt.doc, r, tt.want)
		}
	}
}

// TestRenderConfigRemovesRefusedKeys: a document that slipped past every
// check still renders without any refused key's value (the second line of
// defence), neighbours kept.
func TestRenderConfigRemovesRefusedKeys(t *testing.T) {
	t.Parallel()
	doc := map[string]any{}
	for i, rule := range gateway.KeyRules() {
		gatewaytest.Merge(doc, gatewaytest.DocAt(rule.Example, sentinel(i)))
	}
	gatewaytest.Merge(doc, gatewaytest.AllowedDocument())
	out, err := gateway.RenderConfig(gateway.RenderInput{Document: doc, Port: 19401, WorkspaceDir: "/data/agt/workspace", LogFile: "/data/agt/openclaw.log"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "occ-refused-value") {
		t.Errorf("openclaw.json holds a refused value:\n%s", out)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	for path, v := range gatewaytest.AllowedKeys() {
		segs := strings.Split(path, ".")
		var cur any = got
		for _, s := range segs {
			if n, err := strconv.Atoi(s); err == nil {
				cur = cur.([]any)[n]
			} else {
				cur = cur.(map[string]any)[s]
			}
		}
		if fmt.Sprint(cur) != fmt.Sprint(v) {
			t.Errorf("%s = %v after rendering; want %v", path, cur, v)
		}
	}
}
