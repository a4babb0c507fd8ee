package worker

import (
	"errors"

	"github.com/riverqueue/river/rivertype"
)

// logRetry logs an Agent job pass that failed and will be tried again.
// River reports such failures only at info level, below what occ lets
// through from it, so without this a stop or a deletion that keeps failing
// (an engine timing out, a host unreachable) would say nothing at all.
// (The revision and Namespace workers log their own retries.)
// Snoozes (a busy claim) and cancellations (settled) are not failures.
func (d *deps) logRetry(job *rivertype.JobRow, err error) {
	if !failed(err) {
		return
	}
	d.log.Warn("job failed; it will be retried", "kind", job.Kind, "attempt", job.Attempt, "maxAttempts", job.MaxAttempts,
		"args", string(job.EncodedArgs), "error", err)
}

// failed reports whether a pass's error is a failure River retries (or,
// on the last attempt, drops): not a snooze (a busy claim) nor a
// cancellation (the pass settled its resource).
func failed(err error) bool {
	var snooze *rivertype.JobSnoozeError
	var cancel *rivertype.JobCancelError
	return err != nil && !errors.As(err, &snooze) && !errors.As(err, &cancel)
}
