package ssh_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/server/servertest"

	"github.com/openclaw/occ/internal/compute/ssh/sshtest"
	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/store/storetest"
	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// TestSSHDriverStart: --compute ssh starts only when every host of
// compute.ssh.hosts logs occ in with the known key and has systemd, the
// driver's programs and the runtime's files; otherwise the refusal names
// the setting. The host is a real one (sshtest).
func TestSSHDriverStart(t *testing.T) {
	t.Parallel()
	h := sshtest.Start(t)
	// The runtime's files as the preflight looks for them (no gateway
	// starts here).
	for _, f := range []string{"opt/node/bin/node", "opt/openclaw/openclaw.mjs"} {
		p := filepath.Join(h.Root(), f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A known_hosts file naming another key for the host.
	pk, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	other, err := xssh.NewPublicKey(pk)
	if err != nil {
		t.Fatal(err)
	}
	wrongKnownHosts := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(wrongKnownHosts, []byte(knownhosts.Line([]string{fmt.Sprintf("[%s]:%d", h.Address, h.Port)}, other)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := func(t *testing.T, knownHosts, openclaw string, hosts ...string) string {
		p := filepath.Join(t.TempDir(), "occ.yaml")
		y := fmt.Sprintf("compute:\n  ssh:\n    identityFile: %s\n    knownHostsFile: %s\n    runtime:\n      nodePath: /opt/node/bin/node\n      openclawPath: %s\n    hosts:\n",
			h.IdentityFile, knownHosts, openclaw)
		for _, line := range hosts {
			y += "      " + line + "\n"
		}
		if err := os.WriteFile(p, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	at := func(port int) string { return fmt.Sprintf("team: {address: 127.0.0.1, port: %d}", port) }
	tests := []struct {
		name string
		file func(t *testing.T) string
		want string // "" starts
	}{
		{"no hosts", func(t *testing.T) string { return file(t, h.KnownHostsFile, "/opt/openclaw/openclaw.mjs") }, "compute.ssh.hosts: required"},
		{"another host key", func(t *testing.T) string {
			return file(t, wrongKnownHosts, "/opt/openclaw/openclaw.mjs", at(h.Port))
		}, "compute.ssh.hosts.team: SSH_HOST_KEY_MISMATCH"},
		{"runtime missing", func(t *testing.T) string { return file(t, h.KnownHostsFile, "/opt/openclaw/missing.mjs", at(h.Port)) },
			"compute.ssh.hosts.team: missing file /opt/openclaw/missing.mjs (compute.ssh.runtime)"},
		{"host ready", func(t *testing.T) string { return file(t, h.KnownHostsFile, "/opt/openclaw/openclaw.mjs", at(h.Port)) }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := gatewaytest.ReachableDir(t)
			cfg, err := config.Load(config.Source{File: tt.file(t), Env: []string{"OCC_COMPUTE=ssh"}, Flags: map[string]string{"dataDir": dir,
				"listen": "127.0.0.1:0", "databaseURL": storetest.URL(t, "sqlite"), "publicOrigin": servertest.Origin, "role": "all"}})
			if err == nil {
				m := &server.Main{Config: cfg, Out: io.Discard, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
				t.Cleanup(func() { m.Close() })
				err = m.Start(context.Background())
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
