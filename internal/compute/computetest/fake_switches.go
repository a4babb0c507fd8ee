package computetest

import (
	"slices"

	"github.com/openclaw/occ/internal/compute"
)

// fakeNotReady is the NotReady switch of one Agent.
type fakeNotReady struct {
	left   int // answers still not ready; negative: until changed
	reason string
	rf     *compute.RuntimeFailure
}

// NotReady makes the next n PrepareRevision calls for the Agent answer
// not ready with this pending reason and failure evidence (n < 0: until
// changed; n == 0 clears the switch). Hold takes precedence.
func (f *Fake) NotReady(agentID string, n int, pendingReason string, rf *compute.RuntimeFailure) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	if n == 0 {
		delete(f.w.notReady, agentID)
		return
	}
	f.w.notReady[agentID] = fakeNotReady{left: n, reason: pendingReason, rf: cloneFailure(rf)}
}

// Hold makes every PrepareRevision for the Agent answer Held with rf (nil
// rf clears the switch).
func (f *Fake) Hold(agentID string, rf *compute.RuntimeFailure) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	if rf == nil {
		delete(f.w.held, agentID)
		return
	}
	f.w.held[agentID] = cloneFailure(rf)
}

// Warn makes a ready revision of the Agent carry these warnings (none
// clears the switch).
func (f *Fake) Warn(agentID string, ws []compute.Warning) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	if len(ws) == 0 {
		delete(f.w.warnings, agentID)
		return
	}
	f.w.warnings[agentID] = slices.Clone(ws)
}

// readiness is the answer the switches give for the Agent; the caller
// holds the lock.
func (w *fakeWorld) readiness(agentID string) compute.Readiness {
	if rf := w.held[agentID]; rf != nil {
		return compute.Readiness{Held: true, RuntimeFailure: cloneFailure(rf)}
	}
	if nr, ok := w.notReady[agentID]; ok {
		if nr.left > 0 {
			nr.left--
			w.notReady[agentID] = nr
		}
		if nr.left == 0 {
			delete(w.notReady, agentID)
		}
		return compute.Readiness{PendingReason: nr.reason, RuntimeFailure: cloneFailure(nr.rf)}
	}
	return compute.Readiness{Ready: true, Warnings: slices.Clone(w.warnings[agentID])}
}

// cloneFailure copies failure evidence, so that no caller shares it.
func cloneFailure(rf *compute.RuntimeFailure) *compute.RuntimeFailure {
	if rf == nil {
		return nil
	}
	c := *rf
	if rf.Cause != nil {
		cause := *rf.Cause
		c.Cause = &cause
	}
	return &c
}
