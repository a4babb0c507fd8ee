package worker

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/openclaw/occ/internal/compute"
)

// jobStates plays River's JobGet and JobRetry: each job's states, read in
// turn (the last one stays), and the jobs retried.
type jobStates struct {
	mu      sync.Mutex
	states  map[int64][]rivertype.JobState
	retried chan int64
}

func (j *jobStates) get(_ context.Context, id int64) (*rivertype.JobRow, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.states[id]
	row := &rivertype.JobRow{ID: id, State: s[0]}
	if len(s) > 1 {
		j.states[id] = s[1:]
	}
	return row, nil
}

func (j *jobStates) retry(_ context.Context, id int64) (*rivertype.JobRow, error) {
	j.retried <- id
	return &rivertype.JobRow{ID: id, State: rivertype.JobStateAvailable}, nil
}

func newTestWakes(states map[int64][]rivertype.JobState) (*wakes, *jobStates) {
	j := &jobStates{states: states, retried: make(chan int64, 10)}
	k := newWakes(time.Now)
	k.get, k.retry = j.get, j.retry
	return k, j
}

func (j *jobStates) wantRetried(t *testing.T, id int64) {
	t.Helper()
	select {
	case got := <-j.retried:
		if got != id {
			t.Fatalf("retried job %d, want %d", got, id)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("job %d was not retried", id)
	}
}

func (j *jobStates) wantNoRetry(t *testing.T) {
	t.Helper()
	time.Sleep(100 * time.Millisecond) // a wake runs in a goroutine of its own
	select {
	case got := <-j.retried:
		t.Fatalf("job %d was retried", got)
	default:
	}
}

// TestWakes: a change wakes the job a pass deferred, once; a change
// during a pass is told to the pass (it defers none); a job River still
// shows running is woken once River recorded its deferral; an Agent whose
// pass did not defer, or whose job ended, is forgotten.
func TestWakes(t *testing.T) {
	t.Parallel()
	a := compute.AgentRef{NamespaceID: "ns_1", AgentID: "ag_1"}
	k, j := newTestWakes(map[int64][]rivertype.JobState{
		7: {rivertype.JobStateRunning, rivertype.JobStateRunning, rivertype.JobStateScheduled},
		8: {rivertype.JobStateCompleted},
	})

	k.begin(a)
	started := time.Now()
	k.changed(a) // during the pass
	if at := k.deferringJob(a, 7); !at.After(started) && !at.Equal(started) {
		t.Fatalf("the pass was told of a change at %v; want the change during it (after %v)", at, started)
	}
	k.end(a)
	j.wantNoRetry(t)

	k.changed(a) // River still shows job 7 running, then scheduled
	j.wantRetried(t, 7)
	k.changed(a) // woken already: nothing deferred is left to wake
	j.wantNoRetry(t)

	// A pass that ends without deferring forgets the Agent.
	k.begin(a)
	k.end(a)
	if k.knows(a) {
		t.Error("an Agent whose pass did not defer is still known")
	}
	k.changed(a)
	j.wantNoRetry(t)

	// A deferred job another process has settled is not retried, and its
	// Agent is forgotten.
	k.begin(a)
	k.deferringJob(a, 8)
	k.end(a)
	k.changed(a)
	j.wantNoRetry(t)
	if k.knows(a) {
		t.Error("the Agent of a settled job is still known")
	}
}

func (k *wakes) knows(a compute.AgentRef) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.m[a]
	return ok
}
