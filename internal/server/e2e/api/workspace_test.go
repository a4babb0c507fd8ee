package api_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestLiveWorkspaceFiles reads and writes the four files through a running
// (fake) gateway, with the seed's error table.
func TestLiveWorkspaceFiles(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		d, agent := servertest.LiveAgent(t, url, "files")
		e := d.E
		base := d.Path("/agents/" + agent + "/workspace/files/")

		// Before any deployment there is no gateway: 503.
		if r := e.Call("GET", base+"AGENTS.md", e.Admin, nil); r.Status != 503 || r.Code() != "DEPENDENCY_UNAVAILABLE" {
			t.Fatalf("read before deploy = %d %v", r.Status, r.Body)
		}
		d.WaitDeployment(t, agent, d.Deploy(t, agent))

		// The initial file reached the workspace; a write round-trips byte for byte.
		if r := e.Call("GET", base+"AGENTS.md", e.Admin, nil); r.Status != 200 || r.Data()["content"] != "Be brief.\n" {
			t.Fatalf("initial file = %d %v", r.Status, r.Body)
		}
		content := "Sé breve.\n  trailing spaces  \n\t\n\n"
		r := e.Call("PUT", base+"SOUL.md", e.Admin, map[string]any{"content": content})
		if r.Status != 200 || r.Data()["name"] != "SOUL.md" || r.Data()["size"] != float64(len(content)) {
			t.Fatalf("write = %d %v", r.Status, r.Body)
		}
		if r := e.Call("GET", base+"SOUL.md", e.Admin, nil); r.Data()["content"] != content {
			t.Fatalf("read back %q", r.Data()["content"])
		}
		if r := e.Call("PUT", base+"USER.md", e.Admin, map[string]any{"content": ""}); r.Status != 200 || r.Data()["size"] != float64(0) {
			t.Fatalf("empty file = %d %v", r.Status, r.Body)
		}

		for name, c := range map[string]struct {
			path   string
			body   any
			status int
		}{
			"lower-case name":          {base + "agents.md", map[string]any{"content": "x"}, 400},
			"another file":             {base + "TOOLS.md", map[string]any{"content": "x"}, 400},
			"encoded traversal":        {base + "%2e%2e%2fAGENTS.md", map[string]any{"content": "x"}, 400},
			"dot-dot traversal":        {base + "../AGENTS.md", map[string]any{"content": "x"}, 400},
			"encoded slash":            {base + "x%2FAGENTS.md", map[string]any{"content": "x"}, 400},
			"trailing slash":           {base + "AGENTS.md/", map[string]any{"content": "x"}, 400},
			"encoded NUL in name":      {base + "AGENTS.md%00", map[string]any{"content": "x"}, 400},
			"one byte under 16 KiB":    {base + "AGENTS.md", map[string]any{"content": strings.Repeat("a", 16383)}, 200},
			"multi-byte at 16 KiB":     {base + "AGENTS.md", map[string]any{"content": strings.Repeat("é", 8192)}, 200},
			"multi-byte over 16 KiB":   {base + "AGENTS.md", map[string]any{"content": strings.Repeat("é", 8192) + "a"}, 400},
			"escaped body near 48 KiB": {base + "AGENTS.md", `{"content":"` + strings.Repeat(`\u00e9`, 8189) + `"}`, 200}, // 49,148 bytes
			"body of exactly 48 KiB":   {base + "AGENTS.md", padded(`{"content":"x"}`, 49152), 200},
			"body one byte over":       {base + "AGENTS.md", padded(`{"content":"x"}`, 49153), 413},
			"NUL":                      {base + "AGENTS.md", map[string]any{"content": "a\x00b"}, 400},
			"16 KiB is fine":           {base + "AGENTS.md", map[string]any{"content": strings.Repeat("a", 16384)}, 200},
			"one byte over 16 KiB":     {base + "AGENTS.md", map[string]any{"content": strings.Repeat("a", 16385)}, 400},
			"body over 48 KiB":         {base + "AGENTS.md", `{"content":"` + strings.Repeat("a", 49152) + `"}`, 413},
			"two fields":               {base + "AGENTS.md", map[string]any{"content": "x", "name": "AGENTS.md"}, 400},
			"lone surrogate content":   {base + "AGENTS.md", `{"content":"\udc00"}`, 400},
		} {
			if r := e.Call("PUT", c.path, e.Admin, c.body); r.Status != c.status {
				t.Errorf("%s: %d %v, want %d", name, r.Status, r.Body, c.status)
			}
		}

		// Writes are audited with the file name.
		evs := e.Call("GET", "/audit-events?action=agents.workspace.files.write&resourceId="+agent, e.Admin, nil).List()
		if len(evs) < 3 || evs[0].(map[string]any)["details"].(map[string]any)["fileName"] == nil {
			t.Fatalf("workspace write audit = %v", evs)
		}
		for _, ev := range evs {
			if strings.Contains(servertest.ToJSON(ev), "trailing spaces") {
				t.Fatal("the audit log holds file content")
			}
		}

		// Stopping (desired stopped, still active): 409; deleting: 409 AGENT_DELETING.
		if _, err := e.M.Store().DB().Exec(`UPDATE agents SET desired_state = 'stopped' WHERE id = $1`, agent); err != nil {
			t.Fatal(err)
		}
		if r := e.Call("PUT", base+"AGENTS.md", e.Admin, map[string]any{"content": "x"}); r.Status != 409 || r.Code() != "RESOURCE_CONFLICT" {
			t.Fatalf("write while stopping = %d %v", r.Status, r.Body)
		}
		if _, err := e.M.Store().DB().Exec(`UPDATE agents SET status = 'deleting' WHERE id = $1`, agent); err != nil {
			t.Fatal(err)
		}
		if r := e.Call("PUT", base+"AGENTS.md", e.Admin, map[string]any{"content": "x"}); r.Status != 409 || r.Code() != "AGENT_DELETING" {
			t.Fatalf("write while deleting = %d %v", r.Status, r.Body)
		}
	})
}

// padded is a JSON body of exactly n bytes: body followed by spaces.
func padded(body string, n int) string {
	return body + strings.Repeat(" ", n-len(body))
}

// TestWorkspaceWriteIsAuditedBeforeItHappens: a live write records its
// intent (outcome pending, with the file's name, size and digest, never its
// content) before the gateway is asked, then its outcome. When the intent
// cannot be recorded the file is not written (503 DEPENDENCY_UNAVAILABLE);
// when only the outcome cannot, the file is written and the intent stays
// (503 UNKNOWN_OUTCOME): no change is ever unaudited.
func TestWorkspaceWriteIsAuditedBeforeItHappens(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		d, agent := servertest.LiveAgent(t, url, "intent")
		e := d.E
		d.WaitDeployment(t, agent, d.Deploy(t, agent))
		file := d.Path("/agents/" + agent + "/workspace/files/SOUL.md")
		events := func() map[string][]map[string]any { // by outcome
			out := map[string][]map[string]any{}
			for _, ev := range e.Call("GET", "/audit-events?action=agents.workspace.files.write&resourceId="+agent, e.Admin, nil).List() {
				ev := ev.(map[string]any)
				out[ev["outcome"].(string)] = append(out[ev["outcome"].(string)], ev)
			}
			return out
		}
		content := func() string { return e.Call("GET", file, e.Admin, nil).Data()["content"].(string) }
		intentOf := func(intents []map[string]any, body string) {
			t.Helper()
			sum := sha256.Sum256([]byte(body))
			for _, ev := range intents {
				det := ev["details"].(map[string]any)
				if det["sha256"] == hex.EncodeToString(sum[:]) && det["fileName"] == "SOUL.md" && det["size"] == float64(len(body)) &&
					!strings.Contains(servertest.ToJSON(ev), strings.TrimSpace(body)) {
					return
				}
			}
			t.Fatalf("intents = %v; want one naming SOUL.md with the size and digest of %q and no content", intents, body)
		}

		// Normal: the intent, then the success naming it.
		if r := e.Call("PUT", file, e.Admin, map[string]any{"content": "first soul\n"}); r.Status != 200 {
			t.Fatalf("write = %d %v", r.Status, r.Body)
		}
		evs := events()
		if len(evs["pending"]) != 1 || len(evs["success"]) != 1 || evs["success"][0]["details"].(map[string]any)["intentId"] != evs["pending"][0]["id"] {
			t.Fatalf("audit of a write = %v; want its intent and its success naming it", evs)
		}
		intentOf(evs["pending"], "first soul\n")

		// The intent cannot be recorded: nothing is written.
		breakAudit(t, e)
		if r := e.Call("PUT", file, e.Admin, map[string]any{"content": "second soul\n"}); r.Status != 503 || r.Code() != "DEPENDENCY_UNAVAILABLE" {
			t.Fatalf("write without audit = %d %v; want 503 DEPENDENCY_UNAVAILABLE", r.Status, r.Body)
		}
		servertest.RepairAudit(t, e)
		if got := content(); got != "first soul\n" {
			t.Fatalf("file after a write whose intent failed = %q; want it unchanged", got)
		}
		if evs := events(); len(evs["pending"]) != 1 || len(evs["success"]) != 1 {
			t.Fatalf("audit after a write whose intent failed = %v", evs)
		}

		// Only the outcome cannot be recorded: the file is written, the
		// intent says so, and the caller is told the outcome is unknown.
		servertest.BreakAuditWhen(t, e, "NEW.outcome <> 'pending'")
		if r := e.Call("PUT", file, e.Admin, map[string]any{"content": "third soul\n"}); r.Status != 503 || r.Code() != "UNKNOWN_OUTCOME" {
			t.Fatalf("write whose outcome is not recorded = %d %v; want 503 UNKNOWN_OUTCOME", r.Status, r.Body)
		}
		servertest.RepairAudit(t, e)
		if got := content(); got != "third soul\n" {
			t.Fatalf("file = %q; want the write applied", got)
		}
		evs = events()
		if len(evs["pending"]) != 2 || len(evs["success"]) != 1 {
			t.Fatalf("audit after a write whose outcome failed = %v; want its intent recorded", evs)
		}
		intentOf(evs["pending"], "third soul\n")
	})
}
