package worker

import (
	"context"
	"time"
)

// recordTimeout bounds the writes that record a pass's outcome; it is
// shorter than the margin a work claim outlives worker.jobTimeout by
// (claim), so the pass still holds its claim while it records.
const recordTimeout = 20 * time.Second

// recordContext is ctx without its cancellation or deadline, bounded by
// recordTimeout. A pass records its outcome (an attempt's evidence, a
// failure, a success, a stop or a teardown settled) with it, because the
// job's own timeout may be what ended the driver call: recorded with the
// expired context, the write failed, and on the last attempt River
// dropped the job with the deployment still running and nothing left to
// finish it.
func recordContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
}
