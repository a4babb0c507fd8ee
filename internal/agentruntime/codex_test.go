package agentruntime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallCodexInstallsVerifiesAndReuses: the Codex pieces go beside the
// gateway runtime in one npm install, are verified (codex --version on the
// runtime's Node.js) and marked complete; a second call reuses them without
// npm.
func TestInstallCodexInstallsVerifiesAndReuses(t *testing.T) {
	npm, calls := fakeNPM{}.write(t)
	dir := t.TempDir()
	var out syncBuffer
	o := Options{Dir: dir, NPM: npm, Progress: &out}
	rt, err := Install(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	c, err := InstallCodex(t.Context(), o, rt)
	if err != nil {
		t.Fatalf("InstallCodex: %v\n%s", err, out.String())
	}
	if c.Dir != filepath.Join(dir, "codex-"+CodexPluginVersion+"-"+CodexVersion+"-npm"+NPMVersion) || c.PluginSpec() != "@openclaw/codex@"+CodexPluginVersion {
		t.Fatalf("install = %+v", c)
	}
	// The npm CLI and the install's own npm cache come with it (the
	// gateway image's offline plugin install).
	for _, p := range []string{c.Entry, c.NPMCLI, filepath.Join(c.NPMCache, "_cacache")} {
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
	}
	if n := countCalls(readCalls(t, calls), "install", "@openclaw/codex@"+CodexPluginVersion, "@openai/codex@"+CodexVersion, "npm@"+NPMVersion, "--cache", "--ignore-scripts"); n != 1 {
		t.Fatalf("npm installs of the Codex pieces = %d; calls %v", n, readCalls(t, calls))
	}
	if !strings.Contains(out.String(), "verified: @openclaw/codex") {
		t.Fatalf("progress = %s", out.String())
	}
	before := len(readCalls(t, calls))
	again, err := InstallCodex(t.Context(), o, rt)
	if err != nil || again != c || len(readCalls(t, calls)) != before {
		t.Fatalf("second InstallCodex = %+v, %v, npm calls %d → %d; want a reuse without npm", again, err, before, len(readCalls(t, calls)))
	}
	if found, ok := FindCodex(dir); !ok || found != c {
		t.Fatalf("FindCodex = %+v %v", found, ok)
	}
}

// TestInstallCodexRefusesAPluginPinnedToAnotherCodex: a plugin release
// that depends on another @openai/codex than the pinned one is refused and
// nothing is left behind.
func TestInstallCodexRefusesAPluginPinnedToAnotherCodex(t *testing.T) {
	npm, _ := fakeNPM{codexDep: "0.999.0"}.write(t)
	dir := t.TempDir()
	o := Options{Dir: dir, NPM: npm}
	rt, err := Install(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	_, err = InstallCodex(t.Context(), o, rt)
	if err == nil || !strings.Contains(err.Error(), `depends on @openai/codex "0.999.0"`) {
		t.Fatalf("InstallCodex = %v; want the dependency mismatch", err)
	}
	if _, ok := FindCodex(dir); ok {
		t.Fatal("a refused install was found")
	}
	for _, name := range entries(t, dir) {
		if strings.HasPrefix(name, ".tmp-codex") || strings.HasPrefix(name, "codex-") && !strings.HasSuffix(name, ".lock") {
			t.Fatalf("left behind: %s", name)
		}
	}
}
