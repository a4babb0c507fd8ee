package worker

import (
	"maps"
	"slices"

	"github.com/openclaw/occ/internal/occ"
)

// pluginCatalogCheck is the installation's half of the pre-effect plugin
// check (seed: Plugin selections; CONTRACT §5): every selected plugin must
// be in one of the installation's plugin catalogs. The driver's half (can
// it run each with its approval policy) is its declared capabilities. A
// failure fails the startup and changes nothing (the Agent keeps its
// selections).
func (w *deps) pluginCatalogCheck(snap *occ.RevisionSnapshot) string {
	for _, id := range slices.Sorted(maps.Keys(snap.Plugins)) {
		if !w.opts.PluginCatalog[id] {
			w.log.Info("revision selects a plugin outside the catalogs", "plugin", id)
			return occ.DeployPluginNotInCatalog
		}
	}
	return ""
}
