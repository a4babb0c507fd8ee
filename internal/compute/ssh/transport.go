package ssh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// Host is an SSH host of a Namespace: where occ logs in (as User, root).
type Host struct {
	Address string
	Port    int
	User    string
}

func (h Host) hostport() string { return net.JoinHostPort(h.Address, strconv.Itoa(h.Port)) }

// TransportOptions configure a Transport.
type TransportOptions struct {
	// IdentityFile is occ's private key (OpenSSH or PEM format, no
	// passphrase); KnownHostsFile the known_hosts file that must name
	// every host's key (strict checking, no trust on first use).
	IdentityFile, KnownHostsFile string
	// ConnectTimeout bounds the TCP connection and the SSH handshake.
	ConnectTimeout time.Duration
	// OperationTimeout bounds one operation, lock wait included.
	OperationTimeout time.Duration
	// LockFile is the host lock's path on every host; LockWait how long
	// an operation waits for it.
	LockFile string
	LockWait time.Duration
	// MaxOutput is the most standard output occ reads of one operation.
	MaxOutput int
	// ConnectionIdle is how long a kept connection may stay unused before
	// it is closed and made again (connections.go); 0 is 30 s.
	ConnectionIdle time.Duration
}

// maxStderr is how much of an operation's standard error is kept (its
// end), for the error.
const maxStderr = 4 << 10

// lockBusyExit is flock's exit status when the lock stayed held.
const lockBusyExit = 75

// Transport runs operations on hosts over SSH: a session each on the
// host's kept connection (connections.go), the host's key checked against
// the known_hosts file at every login, every operation under the host
// lock (flock on the host), so operations of two occ replicas on one host
// never interleave.
type Transport struct {
	o        TransportOptions
	auth     xssh.AuthMethod
	hostKeys xssh.HostKeyCallback
	conns    *connections
}

// NewTransport reads the identity and known_hosts files.
func NewTransport(o TransportOptions) (*Transport, error) {
	key, err := os.ReadFile(o.IdentityFile)
	if err != nil {
		return nil, fmt.Errorf("ssh: read the identity file: %w", err)
	}
	signer, err := xssh.ParsePrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("ssh: parse the identity file %s: %w", o.IdentityFile, err)
	}
	hostKeys, err := knownhosts.New(o.KnownHostsFile)
	if err != nil {
		return nil, fmt.Errorf("ssh: read the known_hosts file: %w", err)
	}
	t := &Transport{o: o, auth: xssh.PublicKeys(signer), hostKeys: hostKeys}
	t.conns = &connections{t: t, byHost: map[string]*conn{}}
	return t, nil
}

// Close closes the connections the Transport keeps; operations after it
// fail.
func (t *Transport) Close() { t.conns.close() }

// Error is a failure of an operation on a host, with its fixed code
// (occ.SSH*). Transport wraps it as permanent or unavailable by code.
type Error struct {
	Code string
	Err  error
}

func (e *Error) Error() string { return e.Code + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// CodeOf is the code of an operation's failure, or "".
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// fail classifies a failure: refusals that retrying cannot fix are
// permanent, a host that cannot be reached or is busy is unavailable,
// the rest retryable.
func fail(code string, err error) error {
	e := &Error{Code: code, Err: err}
	switch code {
	case occ.SSHHostKeyMismatch, occ.SSHAuthenticationFailed, occ.SSHOwnershipConflict, occ.SSHNoHost:
		return compute.Permanent(code, e)
	case occ.SSHHostUnreachable, occ.SSHHostLockBusy:
		return compute.Unavailable(e)
	}
	return e
}

// dial connects and authenticates, within ConnectTimeout.
func (t *Transport) dial(ctx context.Context, h Host) (*xssh.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, t.o.ConnectTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", h.hostport())
	if err != nil {
		return nil, fail(occ.SSHHostUnreachable, fmt.Errorf("connect to %s: %w", h.hostport(), err))
	}
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	var keyErr error
	cfg := &xssh.ClientConfig{User: h.User, Auth: []xssh.AuthMethod{t.auth},
		HostKeyCallback: func(host string, remote net.Addr, key xssh.PublicKey) error {
			keyErr = t.hostKeys(host, remote, key)
			return keyErr
		}}
	c, chans, reqs, err := xssh.NewClientConn(conn, h.hostport(), cfg)
	if err != nil {
		conn.Close()
		var ke *knownhosts.KeyError
		switch {
		case errors.As(keyErr, &ke) && len(ke.Want) == 0:
			return nil, fail(occ.SSHHostKeyMismatch, fmt.Errorf("the known_hosts file names no key for %s", h.hostport()))
		case keyErr != nil:
			return nil, fail(occ.SSHHostKeyMismatch, fmt.Errorf("the key of %s is not the one the known_hosts file names", h.hostport()))
		case strings.Contains(err.Error(), "unable to authenticate"):
			return nil, fail(occ.SSHAuthenticationFailed, fmt.Errorf("%s refused the identity as %s", h.hostport(), h.User))
		}
		return nil, fail(occ.SSHHostUnreachable, fmt.Errorf("ssh handshake with %s: %w", h.hostport(), err))
	}
	_ = conn.SetDeadline(time.Time{})
	return xssh.NewClient(c, chans, reqs), nil
}

// Run runs a POSIX shell script as the login user on the host, under the
// host lock, and returns its standard output. The script reaches the
// host's sh whole or not at all: it is the body of a function that runs
// only after its last line arrived, so a connection lost midway runs
// nothing. The lock is held by flock for the shell's life: it is released
// when the script ends, however occ's side ended.
func (t *Transport) Run(ctx context.Context, h Host, script string) ([]byte, error) {
	return t.RunBounded(ctx, h, script, t.o.MaxOutput)
}

// RunBounded is Run reading at most maxOutput bytes of standard output.
func (t *Transport) RunBounded(parent context.Context, h Host, script string, maxOutput int) ([]byte, error) {
	ctx, cancel := context.WithTimeout(parent, t.o.OperationTimeout)
	defer cancel()
	c, s, release, err := t.session(ctx, h)
	if err != nil {
		return nil, err
	}
	defer release()
	defer s.Close()
	stdout := &capWriter{max: maxOutput}
	stderr := &tailWriter{max: maxStderr}
	s.Stdout, s.Stderr = stdout, stderr
	s.Stdin = strings.NewReader("occ_operation() {\nset -eu\n" + script + "\n}\nocc_operation\n")
	lockDir := t.o.LockFile[:strings.LastIndex(t.o.LockFile, "/")]
	if lockDir == "" {
		lockDir = "/"
	}
	cmd := fmt.Sprintf("mkdir -p %s && exec flock -w %d -E %d %s sh -s", quote(lockDir),
		int(t.o.LockWait/time.Second), lockBusyExit, quote(t.o.LockFile))
	done := make(chan error, 1)
	go func() { done <- s.Run(cmd) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = s.Signal(xssh.SIGTERM)
		t.conns.drop(h, c)
		<-done
		if err := parent.Err(); err != nil { // the caller's end, not the operation's bound
			return nil, fmt.Errorf("an operation on %s: %w", h.hostport(), err)
		}
		return nil, fail(occ.SSHOperationTimeout, fmt.Errorf("an operation on %s ran past %s", h.hostport(), t.o.OperationTimeout))
	}
	if stdout.over {
		return nil, fail(occ.SSHOutputTooLarge, fmt.Errorf("an operation on %s printed more than %d bytes", h.hostport(), maxOutput))
	}
	var exit *xssh.ExitError
	switch {
	case err == nil:
		return stdout.buf.Bytes(), nil
	case errors.As(err, &exit) && exit.ExitStatus() == lockBusyExit:
		return nil, fail(occ.SSHHostLockBusy, fmt.Errorf("the lock %s on %s stayed held for %s", t.o.LockFile, h.hostport(), t.o.LockWait))
	case errors.As(err, &exit):
		return nil, fail(occ.SSHOperationFailed, fmt.Errorf("an operation on %s exited with %d: %s",
			h.hostport(), exit.ExitStatus(), strings.TrimSpace(stderr.String())))
	}
	t.conns.drop(h, c)
	return nil, fail(occ.SSHHostUnreachable, fmt.Errorf("the connection to %s ended: %w", h.hostport(), err))
}

// session opens a session on a connection to h (connections.go), trying
// once more on a new connection when the kept one no longer opens one.
func (t *Transport) session(ctx context.Context, h Host) (*xssh.Client, *xssh.Session, func(), error) {
	for attempt := 0; ; attempt++ {
		c, release, err := t.conns.acquire(ctx, h)
		if err != nil {
			return nil, nil, nil, err
		}
		s, err := t.conns.newSession(ctx, c)
		if err == nil {
			return c, s, release, nil
		}
		release()
		t.conns.drop(h, c)
		if attempt == 1 || ctx.Err() != nil {
			return nil, nil, nil, fail(occ.SSHHostUnreachable, fmt.Errorf("open a session on %s: %w", h.hostport(), err))
		}
	}
}

// quote quotes s for a POSIX shell.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// capWriter keeps the first max bytes and notes whether more came.
type capWriter struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); len(p) > room {
		w.over = true
		w.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return w.buf.Write(p)
}

// tailWriter keeps the last max bytes.
type tailWriter struct {
	b   []byte
	max int
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	if len(w.b) > w.max {
		w.b = append([]byte(nil), w.b[len(w.b)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailWriter) String() string { return string(w.b) }
