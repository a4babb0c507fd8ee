// Package occproc starts an occ binary for the bench tools and reads its
// resource use from /proc.
package occproc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Proc is one running `occ serve`.
type Proc struct {
	Cmd  *exec.Cmd // nil for a process Of found
	Pid  int
	Base string // http://127.0.0.1:PORT
}

// Of is an occ already running as process pid, to read its resource use.
func Of(pid int) *Proc { return &Proc{Pid: pid} }

// Start runs `bin serve --data-dir dataDir --listen 127.0.0.1:PORT args…`
// on a free port, with env added to this process's environment (but its
// OCC_TEST_ variables) and its
// output appended to logPath, and returns once /readyz answers 200.
func Start(ctx context.Context, bin, dataDir, logPath string, args []string, env ...string) (*Proc, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, append([]string{"serve", "--data-dir", dataDir, "--listen", addr}, args...)...)
	cmd.Env = append(inherited(), env...)
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Proc{Cmd: cmd, Pid: cmd.Process.Pid, Base: "http://" + addr}
	for {
		if res, err := http.Get(p.Base + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return p, nil
			}
		}
		select {
		case <-ctx.Done():
			p.Stop()
			return nil, fmt.Errorf("occ did not become ready (log in %s)", logPath)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// inherited is this process's environment without the OCC_TEST_
// variables: settings of the test lanes (a bench built on them reads
// OCC_TEST_KUBE_ASSETS), which occ refuses as naming no config key.
func inherited() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OCC_TEST_") {
			out = append(out, kv)
		}
	}
	return out
}

// Status reads one memory field of /proc/PID/status ("VmRSS"), in bytes.
func (p *Proc) Status(field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.Pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc status", field)
}

// CPUSeconds returns the process's user + system CPU time so far.
func (p *Proc) CPUSeconds() (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: utime and stime are the 12th and 13th.
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return (utime + stime) / 100, nil // USER_HZ is 100 on Linux
}

// Stop ends occ: SIGTERM, then SIGKILL after 10 s.
func (p *Proc) Stop() {
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.Cmd.Process.Kill()
		<-done
	}
}
