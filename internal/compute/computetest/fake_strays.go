package computetest

import (
	"context"
	"maps"
	"slices"

	"github.com/openclaw/occ/internal/compute"
)

var _ compute.WorkloadLister = (*Fake)(nil)

// AgentsWithWorkloads implements compute.WorkloadLister: the Agents whose
// workload runs, ordered by Agent ID.
func (f *Fake) AgentsWithWorkloads(ctx context.Context) ([]compute.AgentRef, error) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	var out []compute.AgentRef
	for _, id := range slices.Sorted(maps.Keys(f.w.agents)) {
		if a := f.w.agents[id]; a.workload != "" {
			out = append(out, compute.AgentRef{NamespaceID: a.namespace, AgentID: id})
		}
	}
	return out, nil
}

// Stray starts a workload of the revision for the Agent outside of any
// driver call, as an engine does that finishes a create whose caller gave
// up (after the Agent's stop, say).
func (f *Fake) Stray(rev compute.RevisionRef) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	a := f.w.agents[rev.AgentID]
	if a == nil {
		a = &fakeAgent{namespace: rev.NamespaceID, secret: randomSecret(), files: map[string]string{}}
		f.w.agents[rev.AgentID] = a
	}
	f.w.start(a, compute.RevisionSpec{RevisionRef: rev}, false)
}
