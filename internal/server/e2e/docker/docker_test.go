package docker_test

import (
	"testing"

	"github.com/openclaw/occ/internal/compute/docker/dockertest"
	"github.com/openclaw/occ/internal/server/servertest"
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
		t.Run(tt.name, func(t *testing.T) { servertest.WantStart(t, tt.want, tt.env...) })
	}
}
