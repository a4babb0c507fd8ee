package agentruntime_test

import (
	"testing"

	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/config"
)

// The configuration's runtime defaults are the pinned versions.
func TestConfigDefaultsArePinned(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load(config.Source{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Runtime.OpenClawVersion != agentruntime.OpenClawVersion || cfg.Runtime.NodeVersion != agentruntime.NodeMajor {
		t.Errorf("config defaults runtime.openclawVersion=%q runtime.nodeVersion=%q; runtime pins %q and %q",
			cfg.Runtime.OpenClawVersion, cfg.Runtime.NodeVersion, agentruntime.OpenClawVersion, agentruntime.NodeMajor)
	}
	if got := agentruntime.Pinned().Name(); got != "2026.9.6-node24" {
		t.Errorf("Pinned().Name() = %q", got)
	}
}
