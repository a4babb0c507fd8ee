package server

import (
	"context"
	"fmt"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/docker"
)

// dockerDriver builds the docker driver from compute.docker and runs its
// preflight: occ does not start against an engine it cannot reach, that
// speaks no API version occ speaks, or that lacks the gateway image (every
// message names the setting).
func (m *Main) dockerDriver() (compute.Driver, error) {
	k := m.Config.Compute.Docker
	mem, err := k.Resources.MemoryBytes()
	if err != nil {
		return nil, fmt.Errorf("compute.docker.resources.memory: %w", err)
	}
	cpus, err := k.Resources.NanoCPUs()
	if err != nil {
		return nil, fmt.Errorf("compute.docker.resources.cpus: %w", err)
	}
	d, err := docker.New(docker.Options{Host: k.Host, RequestTimeout: k.RequestTimeout.D(), GatewayImage: k.Images.Gateway,
		GatewayPort: k.GatewayPort, MemoryBytes: mem, NanoCPUs: cpus, OpenFiles: k.Resources.OpenFiles, Processes: k.Resources.Processes, Logger: m.Logger.With("component", "compute")})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), preflightTimeout)
	defer cancel()
	e, err := d.Preflight(ctx)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("docker compute driver preflight: %w", err)
	}
	m.Logger.Info("docker engine", "version", e.Version, "api", e.APIVersion, "podman", e.Podman, "cpus", e.CPUs, "dedicated", e.Dedicated)
	if e.CPULimit < cpus {
		m.Logger.Warn("compute.docker.resources.cpus is more than the engine's CPUs: each gateway container may use all of them",
			"setting", k.Resources.CPUs, "engineCPUs", e.CPUs)
	}
	m.closers = append(m.closers, d.Close)
	return d, nil
}
