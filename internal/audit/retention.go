package audit

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// ExportFailedCode is the fixed code logged when expired audit events
// could not be exported; nothing is deleted then.
const ExportFailedCode = "AUDIT_EXPORT_FAILED"

// DefaultRetentionBatch is how many events one export file holds at most.
const DefaultRetentionBatch = 10000

// Retention exports audit events older than Keep to Dir and then deletes
// them, batch after batch: each batch is written to its own gzip'd JSON
// Lines file (mode 0600, fsync'd, read back), and only then deleted in one
// transaction. When the export fails nothing of the batch is deleted.
type Retention struct {
	Store   *store.Store
	Keep    time.Duration // events older than this expire; 0 keeps them all
	Dir     string        // where export files go (created 0700)
	Batch   int           // events per file; default DefaultRetentionBatch
	Now     func() time.Time
	Log     *slog.Logger
	Metrics *RetentionMetrics // optional
}

// RetentionMetrics count what retention did, for /metrics.
type RetentionMetrics struct {
	Exported    prometheus.Counter
	Deleted     prometheus.Counter
	Failures    prometheus.Counter
	LastSuccess prometheus.Gauge
}

// NewRetentionMetrics returns the counters, to register once.
func NewRetentionMetrics() *RetentionMetrics {
	return &RetentionMetrics{
		Exported: prometheus.NewCounter(prometheus.CounterOpts{Name: "occ_audit_retention_exported_events_total",
			Help: "Expired audit events written to export files."}),
		Deleted: prometheus.NewCounter(prometheus.CounterOpts{Name: "occ_audit_retention_deleted_events_total",
			Help: "Expired audit events deleted after their export."}),
		Failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "occ_audit_retention_failures_total",
			Help: "Retention passes that stopped on a failure (AUDIT_EXPORT_FAILED: nothing of the batch was deleted)."}),
		LastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{Name: "occ_audit_retention_last_success_timestamp_seconds",
			Help: "When a retention pass last finished with every expired event exported and deleted."}),
	}
}

// Collectors lists the metrics, for a registry.
func (m *RetentionMetrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Exported, m.Deleted, m.Failures, m.LastSuccess}
}

// SweepResult is what one pass did.
type SweepResult struct {
	Files   []string // export files written, in order
	Deleted int64
}

// Sweep runs one pass: until no event older than Keep is left (or ctx
// ends), it exports the oldest batch and then deletes it. A pass that
// stops between the export and the delete (a crash) leaves a file whose
// events are still in the database: the next pass writes the same batch,
// from the same first event, again and replaces that file, so no event is
// exported twice. Every event line carries its id, so a file from another
// cut of the same events is detectable too.
func (r *Retention) Sweep(ctx context.Context) (SweepResult, error) {
	var res SweepResult
	if r.Keep <= 0 {
		return res, nil
	}
	cutoff := occ.Millis(r.now().Add(-r.Keep))
	for {
		events, err := r.Store.AuditEventsInOrder(ctx, store.AuditRange{UntilMillis: cutoff, Limit: r.batch()})
		if err != nil {
			return res, r.failed(ctx, "read expired audit events", err)
		}
		if len(events) == 0 {
			if r.Metrics != nil {
				r.Metrics.LastSuccess.SetToCurrentTime()
			}
			return res, nil
		}
		name, err := r.export(events)
		if err != nil {
			return res, r.failed(ctx, "export expired audit events", err)
		}
		res.Files = append(res.Files, name)
		if r.Metrics != nil {
			r.Metrics.Exported.Add(float64(len(events)))
		}
		ids := make([]string, len(events))
		for i, e := range events {
			ids[i] = e.ID
		}
		var n int64
		if err := r.Store.InTx(ctx, func(tx *store.Tx) error {
			var err error
			n, err = tx.DeleteAuditEvents(ctx, ids)
			return err
		}); err != nil {
			return res, r.failed(ctx, "delete exported audit events", err)
		}
		res.Deleted += n
		if r.Metrics != nil {
			r.Metrics.Deleted.Add(float64(n))
		}
	}
}

// failed logs a stopped pass with the fixed code and counts it.
func (r *Retention) failed(ctx context.Context, what string, err error) error {
	if r.Metrics != nil {
		r.Metrics.Failures.Inc()
	}
	r.log().ErrorContext(ctx, "audit retention stopped; nothing unexported was deleted", "code", ExportFailedCode, "step", what, "error", err)
	return fmt.Errorf("%s: %w", what, err)
}

func (r *Retention) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Retention) batch() int {
	if r.Batch > 0 {
		return r.Batch
	}
	return DefaultRetentionBatch
}

func (r *Retention) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.Default()
}

// fileTime is the time layout of export file names (UTC, sortable).
const fileTime = "20060102T150405.000Z"

// ExportFileName names the file of a batch by its time range and its first
// event: audit-FROM-TO-FIRSTID.jsonl.gz.
func ExportFileName(first, last occ.AuditEvent) string {
	return fmt.Sprintf("audit-%s-%s-%s.jsonl.gz", first.OccurredAt.UTC().Format(fileTime), last.OccurredAt.UTC().Format(fileTime), first.ID)
}

// export writes events to a new file in r.Dir, durably, reads it back, and
// removes an earlier file of a batch with the same first event (written by
// a pass that stopped before deleting it: a prefix of this batch). It
// returns the file's name.
func (r *Retention) export(events []occ.AuditEvent) (string, error) {
	if err := os.MkdirAll(r.Dir, 0o700); err != nil {
		return "", err
	}
	first, last := events[0], events[len(events)-1]
	name := ExportFileName(first, last)
	tmp, err := os.CreateTemp(r.Dir, ".audit-*.tmp") // mode 0600
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	if err := writeLines(tmp, events); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := checkFile(tmp.Name(), len(events), last.ID); err != nil {
		return "", err
	}
	final := filepath.Join(r.Dir, name)
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", err
	}
	earlier, err := filepath.Glob(filepath.Join(r.Dir, fmt.Sprintf("audit-%s-*-%s.jsonl.gz", first.OccurredAt.UTC().Format(fileTime), first.ID)))
	if err != nil {
		return "", err
	}
	for _, p := range earlier {
		if p != final {
			if err := os.Remove(p); err != nil {
				return "", err
			}
		}
	}
	return name, syncDir(r.Dir)
}

// writeLines writes the gzip'd lines and syncs the file.
func writeLines(f *os.File, events []occ.AuditEvent) error {
	bw := bufio.NewWriterSize(f, 64<<10)
	zw := gzip.NewWriter(bw)
	for _, e := range events {
		line, err := Line(e)
		if err != nil {
			return err
		}
		if _, err := zw.Write(line); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Sync()
}

// checkFile reads an export file back: it must hold want lines, the last
// one the event lastID.
func checkFile(path string, want int, lastID string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	n, lastLine := 0, ""
	for sc.Scan() {
		n, lastLine = n+1, sc.Text()
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read back %s: %w", filepath.Base(path), err)
	}
	if n != want || !strings.Contains(lastLine, `"id":"`+lastID+`"`) {
		return fmt.Errorf("read back %s: %d lines, want %d ending with %s", filepath.Base(path), n, want, lastID)
	}
	return nil
}

// syncDir makes a rename or removal in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
