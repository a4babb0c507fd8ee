package occ

import (
	"runtime/debug"
	"testing"
)

func TestDescribeBuild(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		version  string
		settings map[string]string
		want     string
	}{
		{"go run in a checkout", "(devel)", map[string]string{"vcs.revision": "3f2a9c1d07b4aa55", "vcs.modified": "false"}, "(devel) 3f2a9c1d07b4"},
		{"uncommitted changes", "(devel)", map[string]string{"vcs.revision": "3f2a9c1d07b4aa55", "vcs.modified": "true"}, "(devel) 3f2a9c1d07b4+dirty"},
		{"go install of a tag", "v0.4.0", nil, "v0.4.0"},
		{"pseudo-version names its commit", "v0.0.0-20261201120000-3f2a9c1d07b4", map[string]string{"vcs.revision": "3f2a9c1d07b4aa55"}, "v0.0.0-20261201120000-3f2a9c1d07b4"},
		{"nothing recorded", "", nil, "(devel)"},
	} {
		info := &debug.BuildInfo{Main: debug.Module{Version: tc.version}}
		for k, v := range tc.settings {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: k, Value: v})
		}
		if got := describeBuild(info); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
