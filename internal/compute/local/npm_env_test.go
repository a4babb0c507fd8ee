package local

import (
	"slices"
	"testing"
)

// TestPluginInstallAsAnotherUserKeepsNPMSettingsButTheCache: occ's npm
// settings go to a plugin install run as the gateway's user, but not occ's
// npm cache, which that user could not write (npm fails with EACCES).
func TestPluginInstallAsAnotherUserKeepsNPMSettingsButTheCache(t *testing.T) {
	t.Parallel()
	env := []string{"npm_config_registry=https://npm.example", "npm_config_cache=/root/.npm", "NPM_CONFIG_CACHE=/root/.npm", "HTTPS_PROXY=http://proxy:3128"}
	got := withoutNPMCache(env)
	want := []string{"npm_config_registry=https://npm.example", "HTTPS_PROXY=http://proxy:3128"}
	if !slices.Equal(got, want) {
		t.Errorf("withoutNPMCache(%q) = %q, want %q", env, got, want)
	}
}
