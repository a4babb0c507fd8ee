package agentruntime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// progress writes the install's progress lines, each prefixed "runtime: ",
// from any goroutine.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	tick  time.Duration

	// What npm reported fetching during the current step (npm
	// --loglevel=http): package documents, tarballs, the last tarball.
	docs, tarballs int
	lastTarball    string

	// onPhase hears the install's phase and bytes on disk (Options.OnPhase).
	onPhase func(phase string, bytes int64)
	phase   string
}

func newProgress(w io.Writer, tick time.Duration, onPhase func(string, int64)) *progress {
	if w == nil {
		w = io.Discard
	}
	if tick <= 0 {
		tick = 10 * time.Second
	}
	return &progress{w: w, start: time.Now(), tick: tick, onPhase: onPhase}
}

// enter starts a phase of the install (one of occ.InstallPhase*), with
// dir's bytes on disk so far.
func (p *progress) enter(phase, dir string) {
	p.mu.Lock()
	p.phase = phase
	p.mu.Unlock()
	p.report(dir)
}

// report tells onPhase the current phase and dir's bytes on disk.
func (p *progress) report(dir string) {
	if p.onPhase == nil {
		return
	}
	var n int64
	if dir != "" {
		n = dirSize(dir)
	}
	p.mu.Lock()
	phase := p.phase
	p.mu.Unlock()
	p.onPhase(phase, n)
}

// printf writes one progress line.
func (p *progress) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "runtime: "+format+"\n", args...)
}

// npmLine passes on a line npm printed, except its HTTP log ("npm http
// fetch GET 200 URL 93ms (cache miss)"), which it counts for the step's
// progress lines instead.
func (p *progress) npmLine(line string) {
	if rest, ok := strings.CutPrefix(line, "npm http "); ok {
		f := strings.Fields(rest)
		if len(f) >= 4 && f[0] == "fetch" {
			p.mu.Lock()
			if i := strings.LastIndex(f[3], "/-/"); i >= 0 {
				p.tarballs++
				p.lastTarball = f[3][i+3:]
			} else {
				p.docs++
			}
			p.mu.Unlock()
		}
		return
	}
	if strings.TrimSpace(line) != "" {
		p.printf("npm: %s", line)
	}
}

// fetched describes what npm fetched during the current step, or is empty.
func (p *progress) fetched() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.docs == 0 && p.tarballs == 0 {
		return ""
	}
	s := fmt.Sprintf("; fetched %d package documents and %d tarballs", p.docs, p.tarballs)
	if p.lastTarball != "" {
		s += " (last " + p.lastTarball + ")"
	}
	return s
}

// elapsed is the time since the install started, rounded for people.
func (p *progress) elapsed() time.Duration { return roundDuration(time.Since(p.start)) }

// step runs fn, announcing it, reporting every tick how long it has run and
// how much is on disk under dir, and reporting when it is done.
func (p *progress) step(ctx context.Context, what, dir string, fn func() error) error {
	p.printf("%s", what)
	p.mu.Lock()
	p.docs, p.tarballs, p.lastTarball = 0, 0, ""
	p.mu.Unlock()
	start := time.Now()
	before := dirSize(dir)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(p.tick)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				p.printf("  … %s, %s on disk%s", roundDuration(time.Since(start)), formatBytes(dirSize(dir)), p.fetched())
				p.report(dir)
			}
		}
	})
	err := fn()
	close(stop)
	wg.Wait()
	if err != nil {
		return err
	}
	p.printf("  done in %s (+%s on disk%s; %s so far)", roundDuration(time.Since(start)),
		formatBytes(max(dirSize(dir)-before, 0)), p.fetched(), p.elapsed())
	return nil
}

func roundDuration(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }

// runCmd runs name with args in dir with exactly env. Lines the command
// prints go to lines (and are kept to explain a failure); when stdout is not
// nil, standard output goes there instead and only standard error is read
// as lines. The command runs in its own process group, which is killed when
// ctx ends, so install scripts do not outlive a cancelled install.
func runCmd(ctx context.Context, dir string, env []string, lines func(string), stdout io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	tail := &tailLines{max: 40}
	lw := &lineWriter{fn: func(l string) {
		if !strings.HasPrefix(l, "npm http ") { // npm's request log explains no failure
			tail.add(l)
		}
		if lines != nil {
			lines(l)
		}
	}}
	cmd.Stderr = lw
	cmd.Stdout = lw
	if stdout != nil {
		cmd.Stdout = stdout
	}
	err := cmd.Run()
	lw.flush()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), ctx.Err())
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) && len(tail.lines) > 0 {
		return fmt.Errorf("%s %s: %w; it printed:\n%s", name, strings.Join(args, " "), err, tail)
	}
	return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
}

// lineWriter splits what is written into lines and passes each to fn. exec
// calls Write from one goroutine at a time when Stdout and Stderr are the
// same writer, so it needs no lock.
type lineWriter struct {
	fn  func(string)
	buf []byte
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.fn(strings.TrimRight(string(w.buf[:i]), "\r"))
		w.buf = w.buf[i+1:]
	}
	return len(b), nil
}

// flush passes on an unterminated last line.
func (w *lineWriter) flush() {
	if len(w.buf) > 0 {
		w.fn(string(w.buf))
		w.buf = nil
	}
}

// tailLines keeps the last max lines.
type tailLines struct {
	max   int
	lines []string
}

func (t *tailLines) add(l string) {
	t.lines = append(t.lines, l)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

func (t *tailLines) String() string { return strings.Join(t.lines, "\n") }
