package server

import (
	"context"
	"fmt"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/ssh"
)

// sshDriver builds the ssh driver from compute.ssh and runs its preflight
// on every host: occ does not start against a host it cannot log in to,
// whose key is not the known one, or that lacks systemd, the programs the
// driver runs or the runtime's files (every message names the setting).
func (m *Main) sshDriver() (compute.Driver, error) {
	k := m.Config.Compute.SSH
	hosts := map[string]ssh.Host{}
	for name, h := range k.Hosts {
		h = h.Resolved()
		hosts[name] = ssh.Host{Address: h.Address, Port: h.Port, User: h.User}
	}
	d, err := ssh.New(ssh.Options{IdentityFile: k.IdentityFile, KnownHostsFile: k.KnownHostsFile,
		ConnectTimeout: k.ConnectTimeout.D(), OperationTimeout: k.OperationTimeout.D(), Hosts: hosts,
		Command: []string{k.Runtime.NodePath, k.Runtime.OpenClawPath}, UserPrefix: k.Runtime.User,
		StateRoot: k.Runtime.StateRoot, UnitDir: k.Runtime.UnitDirectory, PortStart: k.PortRange.Start, PortEnd: k.PortRange.End,
		Logger: m.Logger.With("component", "compute")})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), preflightTimeout)
	defer cancel()
	if err := d.Preflight(ctx); err != nil {
		d.Close()
		return nil, fmt.Errorf("ssh compute driver preflight: %w", err)
	}
	m.closers = append(m.closers, d.Close)
	m.Logger.Info("ssh hosts ready", "hosts", len(hosts))
	return d, nil
}
