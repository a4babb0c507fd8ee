package docker_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/compute/docker/dockertest"
	"github.com/openclaw/occ/internal/server/servertest"
)

// TestCLIImageBuildLoad: `occ runtime image build --load HOST` loads the
// gateway image into a real engine through its API (docker load's
// archive, the one --output FILE.tar writes), prints the loaded
// reference, and the engine then holds the image under that reference
// with the builder's configuration: Docker 20.10's dockerd and Podman's
// service, with and without --output.
func TestCLIImageBuildLoad(t *testing.T) {
	t.Parallel()
	rtDir := t.TempDir()
	servertest.InstallFakeRuntime(t, rtDir)
	want := "openclaw-gateway:" + agentruntime.OpenClawVersion + "-node24.22.3"
	for _, engine := range []struct {
		name  string
		start func(testing.TB) *dockertest.Daemon
		args  []string
	}{
		{"dockerd", dockertest.Start, []string{"--output", filepath.Join(t.TempDir(), "gw.tar")}},
		{"podman", dockertest.StartPodman, []string{"--name", "occ-test/gateway:loaded"}},
	} {
		t.Run(engine.name, func(t *testing.T) {
			d := engine.start(t)
			code, got, errOut := servertest.ImageBuild(t, append([]string{"--runtime-dir", rtDir, "--load", d.Host()}, engine.args...)...)
			if code != 0 {
				t.Fatalf("image build --load: exit %d: %s", code, errOut)
			}
			ref := want
			if got["image"] != want {
				ref = got["image"]
			}
			loaded := got["loaded"]
			// Docker names the image as the archive tags it; Podman
			// spells out the registry (docker.io/..., localhost/...).
			if loaded == "" || !strings.HasSuffix(loaded, ref) {
				t.Fatalf("loaded %q, want the reference %s (output %q, stderr %s)", loaded, ref, got, errOut)
			}
			var img struct {
				ID     string `json:"Id"`
				Config struct {
					User   string
					Labels map[string]string
				}
			}
			d.MustDo(t, http.MethodGet, "/images/"+loaded+"/json", nil, &img)
			if img.Config.User != "1000:1000" || img.Config.Labels["dev.openclaw.occ.openclaw-version"] != agentruntime.OpenClawVersion {
				t.Fatalf("the engine's image %s: %+v", loaded, img)
			}
		})
	}
}
