package app

import (
	"context"
	"sync"

	"github.com/openclaw/occ/internal/occ"
)

// nativeAdminHosts resolves derived host labels to Agents. There is no host
// registry: a label is a one-way hash of IDs, so resolution hashes the
// candidates, the Agents that can serve (active, desired running, with an
// active revision). Labels never change, so a label found once is kept in
// memory; a miss scans the candidates again. Concurrent misses share one
// scan, and a miss only waits for a scan that started after it arrived, so
// an Agent that became ready a moment ago is found while a flood of
// unknown hosts costs at most one scan at a time. The caller always checks
// the Agent's live row afterwards.
type nativeAdminHosts struct {
	mu       sync.Mutex
	cond     *sync.Cond
	labels   map[string]occ.ResourceRef
	started  uint64 // scans started
	finished uint64 // scans finished
	scanErr  error  // the last scan's failure
}

func (h *nativeAdminHosts) resolve(ctx context.Context, a *App, label string) (occ.ResourceRef, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cond == nil {
		h.cond = sync.NewCond(&h.mu)
	}
	if ref, ok := h.labels[label]; ok {
		return ref, true, nil
	}
	want := h.started + 1 // a scan that starts after this miss
	for h.finished < want {
		if h.started < want && h.started == h.finished {
			h.started++
			h.mu.Unlock()
			labels, err := a.scanNativeAdminLabels(context.WithoutCancel(ctx))
			h.mu.Lock()
			h.finished++
			if h.scanErr = err; err == nil {
				h.labels = labels
			}
			h.cond.Broadcast()
			continue
		}
		h.cond.Wait()
	}
	if h.scanErr != nil {
		return occ.ResourceRef{}, false, h.scanErr
	}
	ref, ok := h.labels[label]
	return ref, ok, nil
}

// scanNativeAdminLabels hashes every Agent that can serve.
func (a *App) scanNativeAdminLabels(ctx context.Context) (map[string]occ.ResourceRef, error) {
	rows, err := a.st.RunningAgents(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]occ.ResourceRef, len(rows))
	taken := map[string]bool{}
	for _, r := range rows {
		label := a.nativeAdminLabel(r.NamespaceID, r.ID)
		if taken[label] {
			delete(out, label) // not unique: refused (a 128-bit collision)
			continue
		}
		taken[label] = true
		out[label] = agentRef(r.NamespaceID, r.ID)
	}
	return out, nil
}
