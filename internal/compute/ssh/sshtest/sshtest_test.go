package sshtest_test

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/openclaw/occ/internal/compute/ssh/sshtest"
)

// TestHost boots a host and logs in with nothing but its identity and
// known_hosts files, as the driver will: systemd runs as PID 1, the
// driver's prerequisites are there, and the host's files are readable
// from outside. Stop removes everything.
func TestHost(t *testing.T) {
	h := sshtest.Start(t)

	key, err := os.ReadFile(h.IdentityFile)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	hostKeys, err := knownhosts.New(h.KnownHostsFile)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ssh.Dial("tcp", net.JoinHostPort(h.Address, strconv.Itoa(h.Port)),
		&ssh.ClientConfig{User: "root", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)}, HostKeyCallback: hostKeys})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Output("systemctl is-system-running; ps -o comm= -p 1; id -u; command -v flock runuser getent useradd userdel groupadd groupdel")
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(out))
	if len(lines) != 10 || lines[0] != "running" || lines[1] != "systemd" || lines[2] != "0" {
		t.Fatalf("host answers %q, want running, systemd as PID 1, uid 0 and the seven programs", lines)
	}

	if _, err := h.Run("echo hello > /root/from-inside"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(h.Root(), "root/from-inside")); err != nil || string(b) != "hello\n" {
		t.Fatalf("the host's file seen from outside: %q, %v", b, err)
	}

	dir := h.Dir
	h.Stop()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("after Stop, %s: %v (want removed)", dir, err)
	}
	if _, err := h.Run("true"); err == nil {
		t.Fatal("the host still answers after Stop")
	}
}
