package docker

import (
	"context"

	"github.com/openclaw/occ/internal/compute"
)

var _ compute.WorkloadLister = (*Driver)(nil)

// AgentsWithWorkloads implements compute.WorkloadLister: the Agents of
// every container carrying occ's labels, in any state.
func (d *Driver) AgentsWithWorkloads(ctx context.Context) ([]compute.AgentRef, error) {
	cs, err := d.e.listContainers(ctx, managed())
	if err != nil {
		return nil, classify(err)
	}
	seen := map[compute.AgentRef]bool{}
	var out []compute.AgentRef
	for _, c := range cs {
		a := compute.AgentRef{NamespaceID: c.Labels[LabelNamespace], AgentID: c.Labels[LabelAgent]}
		if a.Validate() != nil || seen[a] {
			continue
		}
		seen[a] = true
		out = append(out, a)
	}
	return out, nil
}
