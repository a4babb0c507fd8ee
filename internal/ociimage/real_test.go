package ociimage_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/cachetest"
	"github.com/openclaw/occ/internal/ociimage"
)

// TestRealGatewayImageRuns builds the gateway image from the real pinned
// runtime (installed once per machine into OCC_TEST_RUNTIME_CACHE), unpacks
// its layers into an empty directory and runs, with that directory as the
// root (chroot, as the image's user 1000 when the test runs as root, else
// in a user namespace), the image's node, the OpenClaw command line and
// every native addon the runtime ships for glibc on x64: the empty base
// plus the libraries copied from this machine are all they need.
func TestRealGatewayImageRuns(t *testing.T) {
	cache := cachetest.Runtime(t)
	rt, err := agentruntime.Install(t.Context(), agentruntime.Options{Dir: cache})
	if err != nil {
		t.Fatalf("install the pinned runtime into %s: %v", cache, err)
	}
	began := time.Now()
	spec, missing, err := ociimage.Gateway(t.Context(), rt, ociimage.CACertificates)
	if err != nil {
		t.Fatal(err)
	}
	img, err := ociimage.Build(spec, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	size, err := ociimage.Size(img)
	if err != nil {
		t.Fatal(err)
	}
	digest, _ := img.Digest()
	t.Logf("gateway image %s: %d MB compressed, built in %s; libraries named but absent: %v",
		digest, size>>20, time.Since(began).Round(time.Second), missing)

	root := t.TempDir()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		untar := exec.Command("tar", "-x", "-p", "-C", root)
		untar.Stdin = rc
		if out, err := untar.CombinedOutput(); err != nil {
			t.Fatalf("unpack a layer: %v\n%s", err, out)
		}
		rc.Close()
	}

	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
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
		t.Errorf("the entry point --version: %q", got)
	}
	// The readiness probe's form: node -e, here loading every glibc x64
	// native addon of the runtime.
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
