package computetest

import (
	"cmp"
	"slices"
	"testing"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
)

// pluginObligations bind a driver that declares plugin approval policies:
// a ready revision carries the warnings of its plugins.
var pluginObligations = []obligation{
	{"ReadyRevisionCarriesItsWarnings", func(t *testing.T, s *subject) {
		ag := s.agent(t)
		want := []compute.Warning{
			{Code: gateway.WarningPluginAuthRequired, PluginID: "beta@conformance"},
			{Code: gateway.WarningPluginInstallFailed, PluginID: "acme@conformance"},
		}
		spec := s.spec(ag, 1)
		spec.Plugins = []string{"acme@conformance", "beta@conformance"}
		spec = s.o.PluginWarnings(spec, want)
		got := slices.Clone(s.ready(t, spec).Warnings)
		byPlugin := func(a, b compute.Warning) int { return cmp.Compare(a.PluginID, b.PluginID) }
		slices.SortFunc(got, byPlugin)
		slices.SortFunc(want, byPlugin)
		if !slices.Equal(got, want) {
			t.Fatalf("warnings = %+v; want %+v", got, want)
		}
	}},
}
