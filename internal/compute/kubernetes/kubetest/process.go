package kubetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is one binary of the cluster, started by this package and stopped by
// its PID. Its output goes to <dir>/<name>.log.
type process struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // the exit error, set before done is closed
}

// startProcess starts bin with args, its output in dir/name.log. The process
// gets SIGKILL if the test binary dies first, so a crashed test leaves nothing
// running.
func startProcess(dir, name, bin string, args ...string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	// kwok keeps state under $HOME/.kwok: keep it in the cluster's directory.
	cmd.Env = append(os.Environ(), "HOME="+dir)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process's PID, and SIGKILL when it has not ended
// after grace.
func (p *process) stop(grace time.Duration) {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// failure describes why the process is not usable: its exit status if it has
// ended, and the end of its log.
func (p *process) failure(reason string) error {
	status := "still running"
	if p.exited() {
		status = fmt.Sprintf("exited: %v", p.err)
	}
	return &startError{
		msg:       fmt.Sprintf("kubetest: %s %s (%s); last lines of %s:\n%s", p.name, reason, status, p.log, p.tail(30)),
		portTaken: bytes.Contains(p.readLog(), []byte("address already in use")),
	}
}

func (p *process) readLog() []byte {
	b, _ := os.ReadFile(p.log)
	return b
}

// tail returns the last n lines of the process's log.
func (p *process) tail(n int) string {
	lines := strings.Split(strings.TrimRight(string(p.readLog()), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// startError is a start failure; portTaken marks the ones caused by another
// process binding a port between freePort and the start, which New retries.
type startError struct {
	msg       string
	portTaken bool
}

func (e *startError) Error() string { return e.msg }

func isPortTaken(err error) bool {
	var se *startError
	return errors.As(err, &se) && se.portTaken
}

// waitFor polls ready until it returns nil, the process ends, or ctx is done.
func (p *process) waitFor(ctx context.Context, what string, ready func(context.Context) error) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if p.exited() {
			return p.failure("ended before it was " + what)
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		last = ready(cctx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return p.failure(fmt.Sprintf("was not %s in time (last check: %v)", what, last))
		case <-p.done:
		case <-tick.C:
		}
	}
}

// freePort returns a TCP port on 127.0.0.1 that nothing listened on a
// moment ago, below the range the system hands out for port 0 (and for
// the local end of outgoing connections). The binary it is meant for binds
// it a moment later; a port from that range could meanwhile go to any
// listener on port 0 (the test process's own, occ's port-forwards), which
// then receives the connections meant for that binary: a 500-Agent bench
// once hung on a fake gateway whose port a listener of the test process
// held. Where the system's range leaves no room below it, the port comes
// from that range as before.
func freePort() (int, error) {
	low, ok := ephemeralLow()
	if !ok {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port, nil
	}
	for range 200 {
		port := firstPort + rand.IntN(low-firstPort)
		l, err := net.Listen("tcp", hostPort(port))
		if err != nil {
			continue
		}
		l.Close()
		return port, nil
	}
	return 0, fmt.Errorf("no free port in %d..%d", firstPort, low-1)
}

// firstPort is the lowest port freePort hands out.
const firstPort = 10000

// ephemeralLow is the first port of the system's range for port 0; ok is
// false when it cannot be read or leaves fewer than 1,000 ports above
// firstPort.
func ephemeralLow() (low int, ok bool) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, false
	}
	low, err = strconv.Atoi(f[0])
	return low, err == nil && low >= firstPort+1000
}

func hostPort(port int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}
