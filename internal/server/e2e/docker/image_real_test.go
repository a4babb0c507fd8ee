package docker_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/cachetest"
	"github.com/openclaw/occ/internal/server/servertest"
)

// TestRealGatewayImageRuns unpacks with tar, into an empty directory, the
// archive `occ runtime image build --output` wrote of the real pinned
// runtime (the package's shared build, realGatewayEngine), and runs, with
// that directory as the root (chroot, as the image's user when the test
// runs as root, else in a user namespace), the image's node, its entry
// point and every native addon the runtime ships for glibc on x64: the
// empty base plus the libraries copied from this machine are all they
// need.
func TestRealGatewayImageRuns(t *testing.T) {
	t.Parallel()
	g := realGatewayEngine(t)
	rt, err := agentruntime.Install(t.Context(), agentruntime.Options{Dir: cachetest.Runtime(t), Progress: servertest.LineLogger(t)})
	if err != nil {
		t.Fatalf("the pinned runtime: %v", err)
	}
	archive, digest := g.archive, g.digest

	tarx := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("tar", args...).CombinedOutput(); err != nil {
			t.Fatalf("tar %q: %v\n%s", args, err, out)
		}
	}
	layout := t.TempDir()
	tarx("-xf", archive, "-C", layout)
	var index struct{ Manifests []struct{ Digest string } }
	readJSON(t, filepath.Join(layout, "index.json"), &index)
	if len(index.Manifests) != 1 || index.Manifests[0].Digest != digest || digest == "" {
		t.Fatalf("index.json %+v, printed digest %q", index, digest)
	}
	var docker []struct {
		Config string
		Layers []string
	}
	readJSON(t, filepath.Join(layout, "manifest.json"), &docker)
	var cf struct {
		Config struct {
			User       string
			Env        []string
			Entrypoint []string
		} `json:"config"`
	}
	readJSON(t, filepath.Join(layout, docker[0].Config), &cf)
	root := t.TempDir()
	for _, l := range docker[0].Layers {
		tarx("-xzpf", filepath.Join(layout, l), "-C", root)
	}

	run := func(args ...string) string {
		t.Helper()
		var cmd *exec.Cmd
		if os.Geteuid() == 0 {
			cmd = exec.Command("chroot", append([]string{"--userspec=" + cf.Config.User, root}, args...)...)
		} else {
			cmd = exec.Command("unshare", append([]string{"--user", "--map-root-user", "chroot", root}, args...)...)
		}
		cmd.Env = append([]string{"HOME=/tmp"}, cf.Config.Env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q in the image: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := run("node", "--version"); got != "v"+rt.NodeVersion {
		t.Errorf("node --version in the image: %q, want v%s", got, rt.NodeVersion)
	}
	if got := run(append(cf.Config.Entrypoint, "--version")...); !strings.HasPrefix(got, "OpenClaw "+rt.Versions.OpenClaw) {
		t.Errorf("the entry point %q --version: %q", cf.Config.Entrypoint, got)
	}
	// The readiness probe's form, node -e, loading every glibc x64 native
	// addon of the runtime.
	script := `const fs=require('fs'),p=require('path');let n=0;` +
		`(function w(d){for(const e of fs.readdirSync(d,{withFileTypes:true})){const f=p.join(d,e.name);` +
		`if(e.isDirectory())w(f);else if(f.endsWith('.node')&&/linux[-_]x64/.test(f)&&!/musl/.test(f)){require(f);n++}}})('/opt/openclaw/node_modules');` +
		`console.log(n)`
	if got := run("node", "-e", script); got == "0" || strings.ContainsAny(got, " \n") {
		t.Errorf("native addons loaded in the image: %q", got)
	} else {
		t.Logf("%s native addons load in the image", got)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
