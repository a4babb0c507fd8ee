package worker

import (
	"slices"

	"github.com/openclaw/occ/internal/occ"
)

// pluginCheck is the pre-effect check of a revision's plugin selections
// (seed: Plugin selections; CONTRACT §5): every selected plugin must be in
// one of the installation's plugin catalogs, and the compute driver must
// be able to run it with its approval policy. A failure fails the startup
// and changes nothing (the Agent keeps its selections).
func (w *revisionWorker) pluginCheck(p *pass) string {
	selected := p.rev.Snapshot.Plugins
	if len(selected) == 0 {
		return ""
	}
	ids := make([]string, 0, len(selected))
	for id := range selected {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if !w.opts.PluginCatalog[id] {
			w.log.Info("revision selects a plugin outside the catalogs", "revision", p.rev.ID, "plugin", id)
			return occ.DeployPluginNotInCatalog
		}
	}
	caps := p.rd.Capabilities()
	for _, id := range ids {
		policy := selected[id].ApprovalPolicy
		if policy == "" {
			policy = "provider_default"
		}
		if !slices.Contains(caps.PluginApprovalPolicies, policy) {
			w.log.Info("the compute driver cannot run a selected plugin", "revision", p.rev.ID, "plugin", id, "approvalPolicy", policy)
			return occ.DeployPluginUnsupported
		}
	}
	return ""
}
