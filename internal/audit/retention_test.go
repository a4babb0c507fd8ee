package audit_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/openclaw/occ/internal/audit"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
	"github.com/openclaw/occ/internal/store/storetest"
)

const day = 24 * time.Hour

// now is the fixed clock of the retention tests.
var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// seed inserts one event per age (oldest first) and returns them as stored.
func seed(t *testing.T, st *store.Store, ages ...time.Duration) []occ.AuditEvent {
	t.Helper()
	ctx := context.Background()
	var out []occ.AuditEvent
	for i, age := range ages {
		e := occ.AuditEvent{ID: occ.NewID(occ.PrefixAudit), OccurredAt: now.Add(-age).Truncate(time.Millisecond), Kind: occ.AuditDenial,
			Action: "agents.read", Outcome: occ.OutcomeDenied, ActorID: "sp_reader", ReasonCode: "AUTHORIZATION_DENIED",
			Resource: occ.ResourceRef{Kind: occ.KindAgent, ID: "agt_x", NamespaceID: "ns_x"}, NamespaceID: "ns_x", RequestID: "req_1",
			Details: map[string]any{"n": float64(i), "note": "é ✓"}}
		if err := st.InsertAuditEvent(ctx, e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// left is every event still stored, oldest first.
func left(t *testing.T, st *store.Store) []string {
	t.Helper()
	evs, err := st.AuditEventsInOrder(context.Background(), store.AuditRange{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range evs {
		ids = append(ids, e.ID)
	}
	return ids
}

// exported concatenates the decompressed export files of dir in name order
// (which is time order), checking each file is private.
func exported(t *testing.T, dir string) []byte {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "audit-*.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	for _, p := range names {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", filepath.Base(p), fi.Mode().Perm())
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(&all, zr); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return all.Bytes()
}

// lines is the export of events, as audit.Line writes it.
func lines(t *testing.T, events []occ.AuditEvent) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, e := range events {
		l, err := audit.Line(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(l)
	}
	return b.Bytes()
}

func ids(events []occ.AuditEvent) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.ID)
	}
	return out
}

// TestRetentionExportsThenDeletesExpired: only events older than the
// retention are deleted, and each was first written to an export file,
// line for line as GET /audit-events/export gives it.
func TestRetentionExportsThenDeletesExpired(t *testing.T) {
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		st := storetest.Open(t, url)
		evs := seed(t, st, 700*day, 500*day, 499*day, 401*day, 400*day-time.Minute, 30*day, 0)
		dir := filepath.Join(t.TempDir(), "export")
		m := audit.NewRetentionMetrics()
		r := &audit.Retention{Store: st, Keep: 400 * day, Dir: dir, Batch: 2, Now: func() time.Time { return now }, Metrics: m}
		res, err := r.Sweep(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got, want := left(t, st), ids(evs[4:]); !slices.Equal(got, want) {
			t.Fatalf("left %v, want %v", got, want)
		}
		if res.Deleted != 4 || len(res.Files) != 2 {
			t.Fatalf("sweep = %+v, want 4 deleted in 2 files", res)
		}
		if got, want := exported(t, dir), lines(t, evs[:4]); !bytes.Equal(got, want) {
			t.Fatalf("export:\n%s\nwant:\n%s", got, want)
		}
		if res.Files[0] != audit.ExportFileName(evs[0], evs[1]) {
			t.Errorf("first file %s", res.Files[0])
		}
		if testutil.ToFloat64(m.Exported) != 4 || testutil.ToFloat64(m.Deleted) != 4 || testutil.ToFloat64(m.Failures) != 0 {
			t.Errorf("metrics exported %v deleted %v failures %v", testutil.ToFloat64(m.Exported), testutil.ToFloat64(m.Deleted), testutil.ToFloat64(m.Failures))
		}
		// Nothing else has expired: a second pass writes and deletes nothing.
		if res, err := r.Sweep(context.Background()); err != nil || res.Deleted != 0 || len(res.Files) != 0 {
			t.Fatalf("second pass = %+v, %v", res, err)
		}
		// Retention 0 keeps everything.
		r.Keep = 0
		if res, err := r.Sweep(context.Background()); err != nil || res.Deleted != 0 {
			t.Fatalf("keep forever = %+v, %v", res, err)
		}
	})
}

// TestRetentionDeletesNothingWhenExportFails: an export directory that
// cannot be written stops retention before any delete, logs the fixed
// code and counts the failure.
func TestRetentionDeletesNothingWhenExportFails(t *testing.T) {
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		st := storetest.Open(t, url)
		evs := seed(t, st, 500*day, 450*day, 1*day)
		// A regular file where the directory should be: not writable,
		// even for root.
		blocker := filepath.Join(t.TempDir(), "not-a-dir")
		if err := os.WriteFile(blocker, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		m := audit.NewRetentionMetrics()
		r := &audit.Retention{Store: st, Keep: 400 * day, Dir: filepath.Join(blocker, "export"), Now: func() time.Time { return now },
			Metrics: m, Log: slog.New(slog.NewTextHandler(&logs, nil))}
		if _, err := r.Sweep(context.Background()); err == nil {
			t.Fatal("sweep succeeded without an export directory")
		}
		if got := left(t, st); !slices.Equal(got, ids(evs)) {
			t.Fatalf("left %v after a failed export, want all of %v", got, ids(evs))
		}
		if testutil.ToFloat64(m.Failures) != 1 || testutil.ToFloat64(m.Deleted) != 0 {
			t.Errorf("failures %v deleted %v", testutil.ToFloat64(m.Failures), testutil.ToFloat64(m.Deleted))
		}
		if !strings.Contains(logs.String(), "code="+audit.ExportFailedCode) {
			t.Errorf("log lacks the code: %s", logs.String())
		}
	})
}

// TestRetentionRerunAfterCrash: a pass that stopped after writing a file
// but before deleting its events (here: the events put back) is re-run;
// the re-run replaces that file, so every event is exported exactly once,
// including one that expired in between.
func TestRetentionRerunAfterCrash(t *testing.T) {
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		st := storetest.Open(t, url)
		ctx := context.Background()
		evs := seed(t, st, 500*day, 450*day, 420*day)
		dir := t.TempDir()
		r := &audit.Retention{Store: st, Keep: 430 * day, Dir: dir, Now: func() time.Time { return now }}
		first, err := r.Sweep(ctx)
		if err != nil || len(first.Files) != 1 {
			t.Fatalf("first pass = %+v, %v", first, err)
		}
		// The crash: the delete never happened.
		for _, e := range evs[:2] {
			if err := st.InsertAuditEvent(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		// Time passes: the third event expires too.
		r.Keep = 410 * day
		second, err := r.Sweep(ctx)
		if err != nil || len(second.Files) != 1 || second.Deleted != 3 {
			t.Fatalf("re-run = %+v, %v", second, err)
		}
		names, _ := filepath.Glob(filepath.Join(dir, "*"))
		if len(names) != 1 || filepath.Base(names[0]) != second.Files[0] {
			t.Fatalf("export directory holds %v, want only %s", names, second.Files[0])
		}
		if got, want := exported(t, dir), lines(t, evs); !bytes.Equal(got, want) {
			t.Fatalf("export after the re-run:\n%s\nwant each event once:\n%s", got, want)
		}
		if got := left(t, st); len(got) != 0 {
			t.Fatalf("left %v", got)
		}
	})
}
