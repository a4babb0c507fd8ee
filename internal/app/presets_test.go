package app

import (
	"testing"

	"github.com/openclaw/occ/internal/store/storetest"
)

// TestSeedInstallationPresetsAgain: seeding at a later start (or by a
// second replica starting at once) leaves the Presets a Namespace has and
// fails nothing; a missing one is added.
func TestSeedInstallationPresetsAgain(t *testing.T) {
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		opts := Options{Presets: []PresetTemplate{{Name: "standard", ExecutionMode: "embedded"}}}
		e := newTestEnv(t, url, opts)
		if err := e.app.SeedInstallationPresets(e.ctx); err != nil {
			t.Fatalf("first seed: %v", err)
		}
		opts.Presets = append(opts.Presets, PresetTemplate{Name: "second", ExecutionMode: "embedded"})
		if err := e.reopen(opts).SeedInstallationPresets(e.ctx); err != nil {
			t.Fatalf("seed at a later start: %v", err)
		}
		if n := count(t, e.st, "presets", ""); n != 2 {
			t.Fatalf("%d presets after seeding twice, want 2 (one per template in the default Namespace)", n)
		}
	})
}
