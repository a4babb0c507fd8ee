package ssh_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/ssh"
	"github.com/openclaw/occ/internal/compute/ssh/sshtest"
	"github.com/openclaw/occ/internal/occ"
)

// transportOptions are a test's options on the test host, with a lock
// file of the test's own.
func transportOptions(t testing.TB, h *sshtest.Host) ssh.TransportOptions {
	return ssh.TransportOptions{IdentityFile: h.IdentityFile, KnownHostsFile: h.KnownHostsFile,
		ConnectTimeout: 10 * time.Second, OperationTimeout: time.Minute,
		LockFile: "/var/lib/occ-test-locks/" + strings.ReplaceAll(t.Name(), "/", "-"), LockWait: 30 * time.Second, MaxOutput: 64 << 10}
}

func newTransport(t testing.TB, o ssh.TransportOptions) *ssh.Transport {
	t.Helper()
	tr, err := ssh.NewTransport(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Close)
	return tr
}

func target(h *sshtest.Host) ssh.Host {
	return ssh.Host{Address: h.Address, Port: h.Port, User: "root"}
}

// newKeyPair is a fresh ed25519 key: its private key in OpenSSH format
// and its public key.
func newKeyPair(t testing.TB) ([]byte, xssh.PublicKey) {
	t.Helper()
	pk, sk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := xssh.MarshalPrivateKey(sk, "")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := xssh.NewPublicKey(pk)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(block), pub
}

func writeFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantCode checks an operation's failure: its code, and whether the
// worker sees it as permanent (with that code) or unavailable.
func wantCode(t *testing.T, err error, code string, permanent, unavailable bool) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", code)
	}
	if got := ssh.CodeOf(err); got != code {
		t.Fatalf("code %q (%v), want %s", got, err, code)
	}
	if got := compute.PermanentCode(err); (got == code) != permanent || (!permanent && got != "") {
		t.Fatalf("permanent code %q, want permanent=%v (%v)", got, permanent, err)
	}
	if errors.Is(err, compute.ErrUnavailable) != unavailable {
		t.Fatalf("unavailable=%v, want %v (%v)", !unavailable, unavailable, err)
	}
}

// TestTransportRuns runs a script as root on the host, under the lock,
// and reads its output.
func TestTransportRuns(t *testing.T) {
	h := testHost(t)
	o := transportOptions(t, h)
	out, err := newTransport(t, o).Run(context.Background(), target(h), "echo hello\nid -u")
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "hello\n0\n" {
		t.Fatalf("output %q, want hello and uid 0", out)
	}
	if _, err := os.Stat(filepath.Join(h.Root(), o.LockFile)); err != nil {
		t.Fatalf("the lock file on the host: %v", err)
	}
}

// TestTransportRefusesHostKeys: a host whose key the known_hosts file
// does not name, or names otherwise, is refused before anything runs
// (no trust on first use), permanently, with SSH_HOST_KEY_MISMATCH.
func TestTransportRefusesHostKeys(t *testing.T) {
	h := testHost(t)
	_, other := newKeyPair(t)
	hostport := net.JoinHostPort(h.Address, strconv.Itoa(h.Port))
	for name, known := range map[string]string{
		"other key": knownhosts.Line([]string{hostport}, other) + "\n",
		"no entry":  knownhosts.Line([]string{"[127.0.0.1]:1"}, h.HostKey) + "\n",
		"empty":     "",
	} {
		t.Run(name, func(t *testing.T) {
			o := transportOptions(t, h)
			o.KnownHostsFile = writeFile(t, "known_hosts", []byte(known))
			marker := "/root/ran-" + strings.ReplaceAll(name, " ", "-")
			_, err := newTransport(t, o).Run(context.Background(), target(h), "touch "+marker)
			wantCode(t, err, occ.SSHHostKeyMismatch, true, false)
			if _, err := os.Stat(filepath.Join(h.Root(), marker)); !os.IsNotExist(err) {
				t.Fatalf("the script ran on a host whose key was refused: %v", err)
			}
		})
	}
}

// TestTransportRefusedIdentity: a key the host does not accept is
// SSH_AUTHENTICATION_FAILED, permanent.
func TestTransportRefusedIdentity(t *testing.T) {
	h := testHost(t)
	o := transportOptions(t, h)
	key, _ := newKeyPair(t)
	o.IdentityFile = writeFile(t, "id", key)
	_, err := newTransport(t, o).Run(context.Background(), target(h), "true")
	wantCode(t, err, occ.SSHAuthenticationFailed, true, false)
}

// TestTransportUnreachable: nothing listening is SSH_HOST_UNREACHABLE,
// marked unavailable (the worker waits it out).
func TestTransportUnreachable(t *testing.T) {
	h := testHost(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	_, err = newTransport(t, transportOptions(t, h)).Run(context.Background(), ssh.Host{Address: "127.0.0.1", Port: port, User: "root"}, "true")
	wantCode(t, err, occ.SSHHostUnreachable, false, true)
}

// TestTransportFailures: a failing command, too much output and an
// operation past its bound each give their code.
func TestTransportFailures(t *testing.T) {
	h := testHost(t)
	t.Run("command fails", func(t *testing.T) {
		_, err := newTransport(t, transportOptions(t, h)).Run(context.Background(), target(h), "echo broken >&2\nexit 3")
		wantCode(t, err, occ.SSHOperationFailed, false, false)
		if !strings.Contains(err.Error(), "exited with 3: broken") {
			t.Fatalf("error %q does not carry the exit status and standard error", err)
		}
	})
	t.Run("set -e", func(t *testing.T) {
		_, err := newTransport(t, transportOptions(t, h)).Run(context.Background(), target(h), "false\ntouch /root/after-false")
		wantCode(t, err, occ.SSHOperationFailed, false, false)
		if _, err := os.Stat(filepath.Join(h.Root(), "root/after-false")); !os.IsNotExist(err) {
			t.Fatalf("the script went on after a failed command: %v", err)
		}
	})
	t.Run("output too large", func(t *testing.T) {
		o := transportOptions(t, h)
		o.MaxOutput = 1024
		_, err := newTransport(t, o).Run(context.Background(), target(h), "head -c 5000 /dev/zero")
		wantCode(t, err, occ.SSHOutputTooLarge, false, false)
	})
	t.Run("timeout", func(t *testing.T) {
		o := transportOptions(t, h)
		o.OperationTimeout = 2 * time.Second
		_, err := newTransport(t, o).Run(context.Background(), target(h), "sleep 600")
		wantCode(t, err, occ.SSHOperationTimeout, false, false)
	})
	t.Run("caller's deadline", func(t *testing.T) {
		// The caller ending first is the caller's error, not a
		// timeout of the operation's own bound.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := newTransport(t, transportOptions(t, h)).Run(ctx, target(h), "sleep 600")
		if !errors.Is(err, context.DeadlineExceeded) || ssh.CodeOf(err) != "" {
			t.Fatalf("err = %v, want the caller's context.DeadlineExceeded", err)
		}
	})
}

// TestTransportLock: an operation waits for another's lock on the same
// host and runs after it, never between its steps; one that waits past
// LockWait is SSH_HOST_LOCK_BUSY, marked unavailable.
func TestTransportLock(t *testing.T) {
	h := testHost(t)
	o := transportOptions(t, h)
	dir := "/root/" + t.Name()
	if _, err := h.Run("mkdir -p " + dir); err != nil {
		t.Fatal(err)
	}
	release := func() {
		if _, err := h.Run("touch " + dir + "/release"); err != nil {
			t.Fatal(err)
		}
	}
	// flockers counts the flock processes of this test's lock file.
	flockers := func() int {
		out, _ := h.Run("pgrep -c -f 'flock -w [0-9]+ -E 75 " + o.LockFile + "'")
		n, _ := strconv.Atoi(strings.TrimSpace(out))
		return n
	}
	waitFlockers := func(n int) {
		deadline := time.Now().Add(time.Minute)
		for flockers() != n {
			if time.Now().After(deadline) {
				t.Fatalf("%d operations waiting on the lock, want %d", flockers(), n)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	holder := "echo A-start >> " + dir + "/log\nwhile [ ! -e " + dir + "/release ]; do sleep 0.05; done\necho A-end >> " + dir + "/log"

	tr := newTransport(t, o)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Add(1)
	go func() { defer wg.Done(); _, errs[0] = tr.Run(context.Background(), target(h), holder) }()
	waitFlockers(1)
	wg.Add(1)
	go func() { defer wg.Done(); _, errs[1] = tr.Run(context.Background(), target(h), "echo B >> "+dir+"/log") }()
	waitFlockers(2) // B waits on the lock A holds
	release()
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	if b, err := os.ReadFile(filepath.Join(h.Root(), dir, "log")); err != nil || string(b) != "A-start\nA-end\nB\n" {
		t.Fatalf("log %q (%v), want B after all of A", b, err)
	}

	// A lock held longer than the wait.
	if _, err := h.Run("rm -f " + dir + "/release"); err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go func() { defer wg.Done(); _, errs[0] = tr.Run(context.Background(), target(h), holder) }()
	waitFlockers(1)
	short := o
	short.LockWait = time.Second
	_, err := newTransport(t, short).Run(context.Background(), target(h), "echo C >> "+dir+"/log")
	wantCode(t, err, occ.SSHHostLockBusy, false, true)
	release()
	wg.Wait()
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	if b, _ := os.ReadFile(filepath.Join(h.Root(), dir, "log")); strings.Contains(string(b), "C") {
		t.Fatalf("the refused operation ran: %q", b)
	}
}

// BenchmarkTransportRun measures one operation: connect, handshake,
// lock, a trivial script.
func BenchmarkTransportRun(b *testing.B) {
	h := testHost(b)
	tr := newTransport(b, transportOptions(b, h))
	for b.Loop() {
		if _, err := tr.Run(context.Background(), target(h), "true"); err != nil {
			b.Fatal(err)
		}
	}
}

// marshal is a public key's authorized_keys form.
func marshal(k xssh.PublicKey) []byte { return xssh.MarshalAuthorizedKey(k) }
