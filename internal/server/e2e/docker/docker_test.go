package docker_test

import (
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/compute/docker/dockertest"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestDockerDriverStart: --compute docker starts only against an engine
// occ can reach that holds the gateway image; otherwise the refusal names
// the setting.
func TestDockerDriverStart(t *testing.T) {
	t.Parallel()
	d := dockertest.Start(t)
	image := d.GatewayImage(t)
	env := func(host, image string) []string {
		return []string{"OCC_COMPUTE=docker", "OCC_COMPUTE_DOCKER_HOST=" + host, "OCC_COMPUTE_DOCKER_IMAGES_GATEWAY=" + image}
	}
	tests := []struct {
		name string
		env  []string
		want string // "" starts
	}{
		{"no image setting", []string{"OCC_COMPUTE=docker"}, "compute.docker.images.gateway"},
		{"unreachable engine", env("unix:///nonexistent/docker.sock", image), "compute.docker.host: the Docker engine at unix:///nonexistent/docker.sock does not answer"},
		{"image not loaded", env(d.Host(), "occ-test/missing:1"), `compute.docker.images.gateway: the engine at ` + d.Host() + ` has no image "occ-test/missing:1"`},
		{"engine with the image", env(d.Host(), image), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := servertest.StartMain(gatewaytest.ReachableDir(t), storetest.URL(t, "sqlite"), "all", nil, tt.env...)
			if m != nil {
				t.Cleanup(func() { m.Close() })
			}
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("start: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("start: %v, want a refusal containing %q", err, tt.want)
			}
		})
	}
}
