// Package sshtest boots a real SSH host for tests: a fresh copy of the
// Debian root file system that scripts/ssh-host builds once per machine
// (debootstrap: systemd, openssh-server, util-linux, passwd), booted with
// systemd-nspawn --boot, so its PID 1 is a real systemd and its sshd a
// real sshd. The host shares this machine's network: its sshd listens on a
// free 127.0.0.1 port with a host key made for this boot, and accepts a
// client key made for this boot, which the known_hosts file names. Nothing
// of one boot is seen by another; Stop powers the host off (by the PID of
// its systemd-nspawn) and removes its copy.
package sshtest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Host is a booted test host.
type Host struct {
	// Dir holds the host's files: root/ (its file system, also readable
	// from outside), the client key, known_hosts and the console log.
	Dir string
	// Address and Port are where its sshd listens (as root).
	Address string
	Port    int
	// IdentityFile is the client's private key (OpenSSH format), and
	// KnownHostsFile the known_hosts file naming the host's key.
	IdentityFile, KnownHostsFile string
	// HostKey is the host's public key.
	HostKey ssh.PublicKey

	signer   ssh.Signer
	cmd      *exec.Cmd
	exited   chan struct{}
	stopOnce sync.Once
}

// Root is the host's file system seen from this machine.
func (h *Host) Root() string { return filepath.Join(h.Dir, "root") }

// Option changes how a host boots.
type Option func(*options)

type options struct {
	bindRO []string
}

// BindReadOnly makes a directory of this machine visible read-only at the
// same path on the host (systemd-nspawn --bind-ro), e.g. the pinned
// runtime of OCC_TEST_RUNTIME_CACHE.
func BindReadOnly(dir string) Option {
	return func(o *options) { o.bindRO = append(o.bindRO, dir) }
}

// Start boots a host stopped when the test ends.
func Start(t testing.TB, opts ...Option) *Host {
	t.Helper()
	h, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Stop)
	return h
}

// New boots a host and waits until its systemd finished starting up and
// root can log in over SSH (120 s at most).
func New(opts ...Option) (*Host, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	base, err := cachedRoot()
	if err != nil {
		return nil, err
	}
	nspawn, err := exec.LookPath("systemd-nspawn")
	if err != nil {
		return nil, fmt.Errorf("sshtest: systemd-nspawn is not on PATH; install Debian's systemd-container (scripts/ssh-host does as root)")
	}
	sweep()
	dir, err := os.MkdirTemp("/tmp", "occssh")
	if err != nil {
		return nil, err
	}
	h := &Host{Dir: dir, Address: "127.0.0.1", exited: make(chan struct{})}
	fail := func(err error) (*Host, error) {
		h.Stop()
		return nil, err
	}
	start := time.Now()
	if out, err := exec.Command("cp", "-a", "--reflink=auto", base, h.Root()).CombinedOutput(); err != nil {
		return fail(fmt.Errorf("sshtest: copy %s: %v: %s", base, err, out))
	}
	copied := time.Since(start)
	if h.Port, err = freePort(); err != nil {
		return fail(err)
	}
	if err := h.configure(); err != nil {
		return fail(err)
	}
	log, err := os.Create(filepath.Join(dir, "console.log"))
	if err != nil {
		return fail(err)
	}
	defer log.Close()
	args := []string{"--quiet", "-D", h.Root(), "--boot", "--register=no", "--keep-unit", "--console=pipe",
		"--machine", fmt.Sprintf("occ-ssh-%d", h.Port)}
	for _, d := range o.bindRO {
		args = append(args, "--bind-ro="+d)
	}
	h.cmd = exec.Command(nspawn, args...)
	h.cmd.Stdout, h.cmd.Stderr = log, log
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	fmt.Fprintf(os.Stderr, "sshtest: starting the test host's systemd (systemd-nspawn --boot) and its sshd on %s:%d (root copied in %s)\n",
		h.Address, h.Port, copied.Round(time.Millisecond))
	if err := h.cmd.Start(); err != nil {
		return fail(fmt.Errorf("sshtest: start systemd-nspawn: %w", err))
	}
	go func() { _ = h.cmd.Wait(); close(h.exited) }()
	_ = os.WriteFile(filepath.Join(dir, "nspawn.pid"), []byte(strconv.Itoa(h.cmd.Process.Pid)), 0o644)
	state, err := h.waitUp(120 * time.Second)
	if err != nil {
		b, _ := os.ReadFile(filepath.Join(dir, "console.log"))
		return fail(fmt.Errorf("%w\nconsole:\n%s", err, tail(b, 4000)))
	}
	fmt.Fprintf(os.Stderr, "sshtest: test host up (systemd %s, sshd answering) in %s (pid %d)\n",
		state, time.Since(start).Round(time.Millisecond), h.cmd.Process.Pid)
	return h, nil
}

// configure writes the boot's host key, client key, authorized_keys,
// known_hosts and sshd settings.
func (h *Host) configure() error {
	hostPriv, hostPub, err := newKey()
	if err != nil {
		return err
	}
	clientPriv, clientPub, err := newKey()
	if err != nil {
		return err
	}
	if h.signer, err = ssh.ParsePrivateKey(clientPriv); err != nil {
		return err
	}
	if h.HostKey, _, _, _, err = ssh.ParseAuthorizedKey(hostPub); err != nil {
		return err
	}
	root := h.Root()
	h.IdentityFile = filepath.Join(h.Dir, "id_ed25519")
	h.KnownHostsFile = filepath.Join(h.Dir, "known_hosts")
	hostport := net.JoinHostPort(h.Address, strconv.Itoa(h.Port))
	sshd := fmt.Sprintf("Port %d\nListenAddress %s\nHostKey /etc/ssh/ssh_host_ed25519_key\nPermitRootLogin prohibit-password\n"+
		"PasswordAuthentication no\nKbdInteractiveAuthentication no\n", h.Port, h.Address)
	files := []struct {
		path string
		data []byte
		mode os.FileMode
	}{
		{filepath.Join(root, "etc/ssh/ssh_host_ed25519_key"), hostPriv, 0o600},
		{filepath.Join(root, "etc/ssh/ssh_host_ed25519_key.pub"), hostPub, 0o644},
		{filepath.Join(root, "etc/ssh/sshd_config.d/occ-test.conf"), []byte(sshd), 0o644},
		{filepath.Join(root, "root/.ssh/authorized_keys"), clientPub, 0o600},
		{h.IdentityFile, clientPriv, 0o600},
		{h.KnownHostsFile, []byte(knownhosts.Line([]string{hostport}, h.HostKey) + "\n"), 0o644},
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(f.path, f.data, f.mode); err != nil {
			return err
		}
	}
	return nil
}

// newKey makes an ed25519 key pair: the private key in OpenSSH's PEM
// format, the public key as an authorized_keys line.
func newKey() (priv, pub []byte, err error) {
	pk, sk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	block, err := ssh.MarshalPrivateKey(sk, "occ-test")
	if err != nil {
		return nil, nil, err
	}
	spk, err := ssh.NewPublicKey(pk)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(block), ssh.MarshalAuthorizedKey(spk), nil
}

// waitUp waits until root logs in and `systemctl is-system-running
// --wait` answers, and returns that answer.
func (h *Host) waitUp(limit time.Duration) (string, error) {
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-h.exited:
			return "", fmt.Errorf("sshtest: systemd-nspawn exited while the host was starting")
		default:
		}
		out, err := h.Run("systemctl is-system-running --wait")
		state := strings.TrimSpace(out)
		if state == "running" || state == "degraded" {
			return state, nil
		}
		if err == nil {
			err = fmt.Errorf("systemd is %q", state)
		}
		last = err
		time.Sleep(200 * time.Millisecond)
	}
	return "", fmt.Errorf("sshtest: the host did not come up in %s: %v", limit, last)
}

// ClientConfig is an SSH client configuration that logs in as root with
// the boot's key and accepts only the boot's host key.
func (h *Host) ClientConfig() *ssh.ClientConfig {
	return &ssh.ClientConfig{User: "root", Auth: []ssh.AuthMethod{ssh.PublicKeys(h.signer)},
		HostKeyCallback: ssh.FixedHostKey(h.HostKey), Timeout: 5 * time.Second}
}

// Run runs a shell command as root on the host and returns its standard
// output; the error carries its standard error.
func (h *Host) Run(command string) (string, error) {
	c, err := ssh.Dial("tcp", net.JoinHostPort(h.Address, strconv.Itoa(h.Port)), h.ClientConfig())
	if err != nil {
		return "", err
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		return "", err
	}
	defer s.Close()
	var stdout, stderr bytes.Buffer
	s.Stdout, s.Stderr = &stdout, &stderr
	if err := s.Run(command); err != nil {
		return stdout.String(), fmt.Errorf("%s: %w: %s", command, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// Stop powers the host off (SIGTERM to systemd-nspawn makes its systemd
// shut down; SIGKILL to its process group after 30 s) and removes its
// files. It is idempotent.
func (h *Host) Stop() {
	h.stopOnce.Do(func() {
		if h.cmd != nil && h.cmd.Process != nil {
			_ = h.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-h.exited:
			case <-time.After(30 * time.Second):
				_ = syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
				<-h.exited
			}
		}
		_ = os.RemoveAll(h.Dir)
	})
}

// sweep removes the copies of hosts whose systemd-nspawn no longer runs
// (a test binary killed before its Stop).
func sweep() {
	dirs, _ := filepath.Glob("/tmp/occssh*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "nspawn.pid"))
		if err != nil {
			continue // starting, or not ours
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(d)
		}
	}
}

// freePort is a 127.0.0.1 port nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// cachedRoot is the root file system scripts/ssh-host built:
// OCC_TEST_SSH_HOST_ROOT (scripts/test exports it), or the script's answer.
func cachedRoot() (string, error) {
	if r := os.Getenv("OCC_TEST_SSH_HOST_ROOT"); r != "" {
		return r, nil
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("sshtest: cannot locate scripts/ssh-host; set OCC_TEST_SSH_HOST_ROOT")
	}
	script := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "scripts", "ssh-host")
	cmd := exec.Command(script)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("sshtest: %s: %w", script, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
