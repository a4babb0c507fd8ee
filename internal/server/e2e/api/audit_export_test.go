package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/cli"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestAuditExport: an installation administrator exports the audit log
// as JSON Lines, oldest first, each line an AuditEvent of the document,
// bounded by since and until; a Namespace administrator is refused; and
// `occ audit export` writes the same lines to a new private file.
func TestAuditExport(t *testing.T) {
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		// Events from 2020 are past the default retention: keep them
		// forever here, or the retention job may export them away
		// while the test reads them.
		e := servertest.Boot(t, url, servertest.NewFakeCompute(t), func(m *server.Main) { m.Config.Audit.Retention = 0 })
		ns := e.CreateNamespace("audited")
		ctx := context.Background()
		at := func(s string) time.Time { v, _ := time.Parse(occ.TimeLayout, s); return v }
		var old []string
		for _, ts := range []string{"2020-01-01T00:00:00.000Z", "2020-01-02T00:00:00.000Z", "2020-01-03T00:00:00.000Z"} {
			ev := occ.AuditEvent{ID: occ.NewID(occ.PrefixAudit), OccurredAt: at(ts), Kind: occ.AuditDenial, Action: "agents.read",
				Outcome: occ.OutcomeDenied, ActorID: "sp_x", Resource: occ.ResourceRef{Kind: occ.KindAgent, ID: "agt_x", NamespaceID: ns},
				NamespaceID: ns, ReasonCode: "AUTHORIZATION_DENIED", Details: map[string]any{}}
			if err := e.M.Store().InsertAuditEvent(ctx, ev); err != nil {
				t.Fatal(err)
			}
			old = append(old, ev.ID)
		}

		status, ctype, body := e.Export(e.Admin, "")
		if status != 200 || ctype != "application/jsonl" {
			t.Fatalf("export = %d %s %s", status, ctype, body)
		}
		schema := e.Spec.Components.Schemas["AuditEvent"].Value
		var ids []string
		last := ""
		for _, line := range strings.SplitAfter(string(body), "\n") {
			if line == "" {
				continue
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(line), &v); err != nil || !strings.HasSuffix(line, "\n") {
				t.Fatalf("line %q: %v", line, err)
			}
			if err := schema.VisitJSON(v); err != nil {
				t.Fatalf("line %s is not an AuditEvent: %v", line, err)
			}
			if key := v["occurredAt"].(string) + v["id"].(string); key < last {
				t.Fatalf("line %s out of order", line)
			} else {
				last = key
			}
			ids = append(ids, v["id"].(string))
		}
		if len(ids) < 5 || strings.Join(ids[:3], ",") != strings.Join(old, ",") {
			t.Fatalf("export ids %v, want the old events %v first and the namespace's after", ids, old)
		}

		status, _, body = e.Export(e.Admin, "?since=2020-01-02T00:00:00.000Z&until=2020-01-03T00:00:00.000Z")
		if status != 200 || strings.Count(string(body), "\n") != 1 || !strings.Contains(string(body), old[1]) {
			t.Fatalf("bounded export = %d %s", status, body)
		}
		if status, _, body := e.Export(e.Admin, "?since=2020-01-03T00:00:00.000Z&until=2020-01-02T00:00:00.000Z"); status != 400 {
			t.Fatalf("since after until = %d %s", status, body)
		}

		nsAdmin, _ := e.Principal(servertest.Grant{Perms: []occ.Permission{occ.P(occ.KindNamespace, occ.ActionAdminister), occ.P(occ.KindNamespace, occ.ActionRead)}, Namespace: ns})
		if status, _, body := e.Export(nsAdmin, ""); status != 403 {
			t.Fatalf("namespace administrator's export = %d %s", status, body)
		}
		instAdmin, _ := e.Principal(servertest.Grant{Perms: []occ.Permission{occ.P(occ.KindInstallation, occ.ActionAdminister)}})
		if status, _, _ := e.Export(instAdmin, "?until=2020-01-03T00:00:00.000Z"); status != 200 {
			t.Fatalf("installation administrator's export = %d", status)
		}

		// The command line writes the same lines to a new 0600 file.
		out := filepath.Join(t.TempDir(), "audit.jsonl")
		run := func() (int, string) {
			var stdout, stderr bytes.Buffer
			code := cli.Main([]string{"audit", "export", "--url", e.Base, "--since", "2020-01-01T00:00:00Z", "--until", "2020-01-03T00:00:00Z", "--out", out},
				&stdout, &stderr, cli.Server{})
			return code, stdout.String() + stderr.String()
		}
		t.Setenv("OCC_KEY", e.Admin)
		if code, msg := run(); code != 0 || !strings.Contains(msg, "exported 2 audit events") {
			t.Fatalf("occ audit export = %d %s", code, msg)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		_, _, want := e.Export(e.Admin, "?since=2020-01-01T00:00:00.000Z&until=2020-01-03T00:00:00.000Z")
		if !bytes.Equal(got, want) {
			t.Fatalf("file:\n%s\nwant:\n%s", got, want)
		}
		if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o600 {
			t.Fatalf("file mode %v", fi.Mode().Perm())
		}
		if code, msg := run(); code == 0 || !strings.Contains(msg, "exists") {
			t.Fatalf("export over an existing file = %d %s", code, msg)
		}
	})
}
