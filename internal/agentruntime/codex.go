package agentruntime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/occ"
)

// The dedicated Codex pieces of the runtime.
const (
	// CodexPluginPackage is the official codex plugin of the gateway.
	CodexPluginPackage = "@openclaw/codex"
	// CodexPackage is the Codex CLI; its app-server is the harness of a
	// dedicated Agent.
	CodexPackage = "@openai/codex"
	// CodexPluginVersion and CodexVersion are the pinned versions.
	CodexPluginVersion = occ.PinnedCodexPluginVersion
	CodexVersion       = occ.PinnedCodexVersion
)

// codexMarkerFile is written last into a complete Codex install.
const codexMarkerFile = "occ-codex.json"

// Codex is a complete install of the dedicated Codex pieces:
// <runtimeDir>/codex-<plugin version>-<codex version>/ holding
// node_modules/@openclaw/codex and node_modules/@openai/codex (with its
// native binary for this platform). It runs on the gateway runtime's
// Node.js.
type Codex struct {
	// Dir is the install directory.
	Dir string
	// Entry is the Codex CLI entry point (node_modules/@openai/codex/bin/codex.js).
	Entry string
	// PluginDir is the installed plugin package.
	PluginDir string
	// PluginVersion and CodexVersion are the installed versions.
	PluginVersion string
	CodexVersion  string
	// NPMCLI is the npm CLI the install carries (node_modules/npm/bin/npm-cli.js),
	// NPMCache the npm cache its install filled: everything a gateway's
	// `plugins install` of the plugin fetches, for an install without the
	// registry (the Docker driver's gateway image).
	NPMCLI   string
	NPMCache string
}

// NPMPackage is the npm CLI's package.
const NPMPackage = "npm"

// NPMVersion is the pinned npm CLI the Codex install carries.
const NPMVersion = occ.PinnedNPMVersion

// codexNPMCache is the install's npm cache directory.
const codexNPMCache = "npm-cache"

// PluginSpec is the npm spec a gateway installs the plugin from
// ("@openclaw/codex@2026.9.5").
func (c Codex) PluginSpec() string { return CodexPluginPackage + "@" + c.PluginVersion }

// codexName is the install directory's name.
func codexName() string {
	return "codex-" + CodexPluginVersion + "-" + CodexVersion + "-npm" + NPMVersion
}

type codexMarker struct {
	Plugin      string `json:"plugin"`
	Codex       string `json:"codex"`
	NPM         string `json:"npm"`
	SizeBytes   int64  `json:"sizeBytes"`
	InstalledAt string `json:"installedAt"`
}

// FindCodex returns the complete Codex install under the runtime directory
// dir, without installing anything.
func FindCodex(dir string) (Codex, bool) {
	c, err := checkCodex(filepath.Join(dir, codexName()))
	return c, err == nil
}

// codexAt is the Codex install in dir.
func codexAt(dir string) Codex {
	return Codex{Dir: dir, Entry: filepath.Join(dir, "node_modules", CodexPackage, "bin", "codex.js"),
		PluginDir: filepath.Join(dir, "node_modules", CodexPluginPackage), PluginVersion: CodexPluginVersion, CodexVersion: CodexVersion,
		NPMCLI: filepath.Join(dir, "node_modules", NPMPackage, "bin", "npm-cli.js"), NPMCache: filepath.Join(dir, codexNPMCache)}
}

func checkCodex(dir string) (Codex, error) {
	b, err := os.ReadFile(filepath.Join(dir, codexMarkerFile))
	if err != nil {
		return Codex{}, fmt.Errorf("no complete Codex install: %w", err)
	}
	var m codexMarker
	if err := json.Unmarshal(b, &m); err != nil {
		return Codex{}, fmt.Errorf("unreadable marker %s: %w", codexMarkerFile, err)
	}
	if m.Plugin != CodexPluginVersion || m.Codex != CodexVersion || m.NPM != NPMVersion {
		return Codex{}, fmt.Errorf("marker names %s %s, %s %s and %s %s, not %s, %s and %s",
			CodexPluginPackage, m.Plugin, CodexPackage, m.Codex, NPMPackage, m.NPM, CodexPluginVersion, CodexVersion, NPMVersion)
	}
	c := codexAt(dir)
	for _, p := range []string{c.Entry, filepath.Join(c.PluginDir, "package.json"), c.NPMCLI, c.NPMCache} {
		if _, err := os.Stat(p); err != nil {
			return Codex{}, fmt.Errorf("incomplete Codex install: %w", err)
		}
	}
	return c, nil
}

// InstallCodex makes sure the pinned codex plugin and Codex CLI are
// installed under o.Dir, beside the gateway runtime rt whose Node.js runs
// them, and returns them. Like Install: a complete install is reused at
// once; otherwise both packages are installed with npm into a temporary
// directory (without install scripts: neither package needs one; the
// plugin's openclaw peer is the gateway runtime's, so npm does not fetch
// it), verified (the plugin's own dependency on @openai/codex is the
// pinned version; codex --version prints it), marked complete and renamed
// into place, under a lock file.
func InstallCodex(ctx context.Context, o Options, rt Runtime) (Codex, error) {
	if o.Dir == "" {
		return Codex{}, errors.New("codex install: no runtime directory given")
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return Codex{}, fmt.Errorf("runtime directory %s: %w", o.Dir, err)
	}
	p := newProgress(o.Progress, o.tick, nil)
	name := codexName()
	final := filepath.Join(dir, name)
	if c, ok := FindCodex(dir); ok {
		p.printf("%s %s with %s %s is installed at %s", CodexPluginPackage, c.PluginVersion, CodexPackage, c.CodexVersion, final)
		return c, nil
	}
	npm, err := lookNPM(o.NPM)
	if err != nil {
		return Codex{}, err
	}
	unlock, err := lock(ctx, filepath.Join(dir, name+".lock"), p)
	if err != nil {
		return Codex{}, err
	}
	defer unlock()
	if c, err := checkCodex(final); err == nil {
		return c, nil
	} else if _, statErr := os.Lstat(final); statErr == nil {
		p.printf("replacing the unusable install at %s (%v)", final, err)
		if err := os.RemoveAll(final); err != nil {
			return Codex{}, fmt.Errorf("remove the unusable install: %w", err)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".tmp-"+name+"-*"))
	for _, l := range leftovers {
		p.printf("removing %s, left by an interrupted install", l)
		_ = os.RemoveAll(l)
	}
	tmp, err := os.MkdirTemp(dir, ".tmp-"+name+"-")
	if err != nil {
		return Codex{}, fmt.Errorf("create temporary install directory: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return Codex{}, err
	}
	manifest, _ := json.MarshalIndent(map[string]any{"name": "occ-runtime-" + name, "private": true,
		"description": "occ agent runtime: the dedicated Codex pieces (occ runtime install)"}, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), append(manifest, '\n'), 0o644); err != nil {
		return Codex{}, err
	}
	specs := []string{CodexPluginPackage + "@" + CodexPluginVersion, CodexPackage + "@" + CodexVersion, NPMPackage + "@" + NPMVersion}
	// The install's own cache keeps what it fetched: a gateway can then
	// install the plugin without the registry (Codex.NPMCache).
	args := []string{"install", "--prefix", tmp, "--cache", filepath.Join(tmp, codexNPMCache), "--no-audit", "--no-fund", "--update-notifier=false", "--save-exact",
		"--loglevel=http", "--ignore-scripts", "--legacy-peer-deps"}
	env := withPath(os.Environ(), filepath.Dir(rt.Node))
	if err := p.step(ctx, "fetching "+strings.Join(specs, " and "), tmp, func() error {
		return runCmd(ctx, tmp, env, p.npmLine, nil, npm, append(args, specs...)...)
	}); err != nil {
		return Codex{}, err
	}
	c := codexAt(tmp)
	if err := verifyCodex(ctx, rt.Node, c); err != nil {
		return Codex{}, err
	}
	p.printf("verified: %s %s depends on %s %s; codex --version reports %s", CodexPluginPackage, CodexPluginVersion, CodexPackage, CodexVersion, CodexVersion)
	m := codexMarker{Plugin: CodexPluginVersion, Codex: CodexVersion, NPM: NPMVersion, SizeBytes: dirSize(tmp), InstalledAt: time.Now().UTC().Format(time.RFC3339)}
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := writeFileSync(filepath.Join(tmp, codexMarkerFile), append(b, '\n')); err != nil {
		return Codex{}, fmt.Errorf("write marker: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return Codex{}, fmt.Errorf("move the install into place: %w", err)
	}
	done = true
	syncDir(dir)
	c, err = checkCodex(final)
	if err != nil {
		return Codex{}, fmt.Errorf("codex install at %s: %w", final, err)
	}
	p.printf("installed %s, %s and %s in %s (%s) at %s", specs[0], specs[1], specs[2], p.elapsed(), formatBytes(m.SizeBytes), final)
	return c, nil
}

// verifyCodex checks the installed packages: the plugin's version and its
// exact dependency on the pinned Codex CLI, and that the CLI runs and
// reports its version.
func verifyCodex(ctx context.Context, node string, c Codex) error {
	var plugin struct {
		Version      string
		Dependencies map[string]string
	}
	b, err := os.ReadFile(filepath.Join(c.PluginDir, "package.json"))
	if err == nil {
		err = json.Unmarshal(b, &plugin)
	}
	if err != nil {
		return fmt.Errorf("installed %s package.json: %w", CodexPluginPackage, err)
	}
	if plugin.Version != CodexPluginVersion {
		return fmt.Errorf("npm installed %s %s, want %s", CodexPluginPackage, plugin.Version, CodexPluginVersion)
	}
	if got := plugin.Dependencies[CodexPackage]; got != CodexVersion {
		return fmt.Errorf("%s %s depends on %s %q, not the pinned %s", CodexPluginPackage, CodexPluginVersion, CodexPackage, got, CodexVersion)
	}
	vctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var out bytes.Buffer
	// Its home is a scratch directory: Codex writes there (.codex/tmp, links
	// to itself), which must not end up in the install (the gateway image
	// carries the install).
	home, err := os.MkdirTemp("", "occ-codex-verify-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	env := []string{"PATH=" + filepath.Dir(node) + ":/usr/bin:/bin", "HOME=" + home, "CODEX_HOME=" + home}
	if err := runCmd(vctx, c.Dir, env, nil, &out, node, c.Entry, "--version"); err != nil {
		return fmt.Errorf("run the installed codex: %w", err)
	}
	for _, f := range strings.Fields(out.String()) {
		if f == CodexVersion {
			return nil
		}
	}
	return fmt.Errorf("codex --version printed %q, not version %s", strings.TrimSpace(out.String()), CodexVersion)
}
