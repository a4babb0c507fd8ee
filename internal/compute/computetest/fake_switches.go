package computetest

import (
	"context"
	"slices"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
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

// Installing makes every PrepareRevision for the Agent answer pending
// occ.PendingRuntimeInstalling with this install progress, as a driver
// whose runtime installs in the background does (nil clears the switch).
func (f *Fake) Installing(agentID string, p *compute.InstallProgress) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	if p == nil {
		delete(f.w.installing, agentID)
		return
	}
	f.w.installing[agentID] = *p
}

// Probing makes the next PrepareRevision for the Agent report
// occ.PendingModelProbeRunning (RevisionSpec.Report), as a driver does
// before its startup model probe, and then take until release is closed
// (or the call's context ends) before it answers.
func (f *Fake) Probing(agentID string, release chan struct{}) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	f.w.probing[agentID] = release
}

// probe is the Probing switch's part of a PrepareRevision call.
func (f *Fake) probe(ctx context.Context, spec compute.RevisionSpec) {
	f.w.mu.Lock()
	release, ok := f.w.probing[spec.AgentID]
	delete(f.w.probing, spec.AgentID)
	f.w.mu.Unlock()
	if !ok {
		return
	}
	spec.Report(occ.PendingModelProbeRunning)
	select {
	case <-release:
	case <-ctx.Done():
	}
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
	if p, ok := w.installing[agentID]; ok {
		return compute.Readiness{PendingReason: occ.PendingRuntimeInstalling, Install: &p}
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
