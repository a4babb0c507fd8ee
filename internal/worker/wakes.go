package worker

import (
	"context"
	"sync"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// watchedDeferralCap bounds the deferral of a revision waiting on a
// workload its driver watches (compute.WorkloadWatcher): a change of the
// workload runs it again at once, so the deferral is only the fallback.
const watchedDeferralCap = 15 * time.Second

// wakeRetryFor bounds how long a wake waits for a job that is still
// running (its pass ended, River has not recorded the deferral yet).
const wakeRetryFor = 2 * time.Second

// wakes runs a revision deferred while its workload starts again as soon
// as the driver reports a change of that workload. It knows the Agents
// whose revision this process is working on: from the start of a pass to
// the end of a pass that did not defer.
type wakes struct {
	now func() time.Time
	// get and retry are River's JobGet and JobRetry.
	get   func(ctx context.Context, id int64) (*rivertype.JobRow, error)
	retry func(ctx context.Context, id int64) (*rivertype.JobRow, error)

	mu sync.Mutex
	m  map[compute.AgentRef]*waiting
}

type waiting struct {
	// passing: a pass runs; deferring is the job it defers (0: it does
	// not, or not yet).
	passing   bool
	deferring int64
	// job is the deferred job a change wakes (0: none).
	job int64
	// changed is when the workload last changed (zero: not seen).
	changed time.Time
}

func newWakes(now func() time.Time) *wakes {
	return &wakes{now: now, m: map[compute.AgentRef]*waiting{}}
}

// begin notes that a pass over a's revision starts.
func (k *wakes) begin(a compute.AgentRef) {
	k.mu.Lock()
	defer k.mu.Unlock()
	w := k.m[a]
	if w == nil {
		w = &waiting{}
		k.m[a] = w
	}
	w.passing, w.job, w.deferring = true, 0, 0
}

// deferringJob notes that the running pass over a's revision defers job,
// and returns when a's workload last changed (zero: not seen).
func (k *wakes) deferringJob(a compute.AgentRef, job int64) time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	if w := k.m[a]; w != nil {
		w.deferring = job
		return w.changed
	}
	return time.Time{}
}

// end notes that the pass over a's revision ended: a deferred job is
// woken by the next change; otherwise a is forgotten.
func (k *wakes) end(a compute.AgentRef) {
	k.mu.Lock()
	defer k.mu.Unlock()
	w := k.m[a]
	if w == nil {
		return
	}
	if w.deferring == 0 {
		delete(k.m, a)
		return
	}
	w.passing, w.job, w.deferring = false, w.deferring, 0
}

// changed is the driver's report that a's workload changed.
func (k *wakes) changed(a compute.AgentRef) {
	k.mu.Lock()
	w := k.m[a]
	var job int64
	if w != nil {
		w.changed = k.now()
		job, w.job = w.job, 0
	}
	k.mu.Unlock()
	if job != 0 {
		go k.wake(a, job)
	}
}

// wake makes a deferred job available now. A job that River still shows
// running (its pass has just deferred it) is asked again until River has
// recorded the deferral; a job that ended is forgotten.
func (k *wakes) wake(a compute.AgentRef, job int64) {
	ctx, cancel := context.WithTimeout(context.Background(), wakeRetryFor+5*time.Second)
	defer cancel()
	deadline := k.now().Add(wakeRetryFor)
	for {
		row, err := k.get(ctx, job)
		if err != nil {
			return
		}
		switch row.State {
		case rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded:
			k.forget(a) // another process settled it
			return
		case rivertype.JobStateRunning:
			if k.now().After(deadline) {
				return
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		_, _ = k.retry(ctx, job)
		return
	}
}

// forget drops a, unless a pass over it runs or deferred again since.
func (k *wakes) forget(a compute.AgentRef) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if w := k.m[a]; w != nil && !w.passing && w.job == 0 {
		delete(k.m, a)
	}
}

// watchedReason reports whether a pending reason waits on the workload
// itself (its Pod to be placed, to start, to become Ready), which a
// watching driver reports changes of.
func watchedReason(code string) bool {
	return code == occ.PendingGatewayStarting || code == occ.AttemptUnschedulable
}
