package audit

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRedactHidesCredentialKeysAndValues(t *testing.T) {
	t.Parallel()
	const canary = "canary-7f3a9"
	in := map[string]any{
		"password":     canary,
		"apiKey":       canary,
		"sessionToken": canary,
		"nested":       map[string]any{"clientSecret": canary, "note": "Bearer abcdefghijkl"},
		"list":         []any{"sk-abcdefghijklmnop", "ok"},
		"occKey":       "occ_abcdefghijklmnopqrstuvwxyz012345",
		"keyId":        "key_1",
		"namespaceId":  "ns_1",
		"name":         "visible",
		"count":        3,
	}
	out := Redact(in)
	raw, _ := json.Marshal(out)
	for _, leak := range []string{canary, "Bearer abc", "sk-abc", "occ_abc"} {
		if strings.Contains(string(raw), leak) {
			t.Errorf("redacted details still contain %q: %s", leak, raw)
		}
	}
	for _, keep := range []string{`"keyId":"key_1"`, `"namespaceId":"ns_1"`, `"name":"visible"`, `"count":3`, `"ok"`} {
		if !strings.Contains(string(raw), keep) {
			t.Errorf("redaction removed %s: %s", keep, raw)
		}
	}
}
