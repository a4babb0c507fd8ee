// Command signinburst measures the peak memory of one occ process under a
// burst of parallel wrong sign-ins. It starts the given occ binary
// (`go build -o /tmp/occ ./cmd/occ`) with `serve` on a fresh temporary data
// directory and a free port on 127.0.0.1, waits until it is ready, sends -n
// sign-ins with wrong passwords for unknown emails all at once, spread over
// -sources loopback source addresses (127.0.0.2, 127.0.0.3, …), waits for
// every answer (each bounded by -timeout), and prints the process's resident
// memory before the burst and its peak (VmHWM), the answers by status, and
// how long the burst took. occ is then stopped and its directory removed.
//
//	go run ./bench/signinburst -bin /tmp/occ -n 1000 -sources 250
//
// -rss-cap stops occ with SIGKILL as soon as its resident memory exceeds it
// (sampled every 5 ms), so a build without a bound cannot take the machine
// down; the report then says so. Requests go to 127.0.0.1 only. Extra
// environment for occ (OCC_AUTH_SIGN_IN_CONCURRENCY=4) passes through.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openclaw/occ/bench/internal/occproc"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "signinburst:", err)
		os.Exit(1)
	}
}

type options struct {
	bin          string
	n, sources   int
	timeout, max time.Duration
	rssCapMB     int64
}

func run(args []string, out io.Writer) error {
	var o options
	fs := flag.NewFlagSet("signinburst", flag.ContinueOnError)
	fs.StringVar(&o.bin, "bin", "", "the occ binary to start (required)")
	fs.IntVar(&o.n, "n", 1000, "sign-ins sent at once (1..5000)")
	fs.IntVar(&o.sources, "sources", 1, "loopback source addresses to spread them over (1..250)")
	fs.DurationVar(&o.timeout, "timeout", 60*time.Second, "bound on each sign-in")
	fs.DurationVar(&o.max, "max", 3*time.Minute, "bound on the whole run")
	fs.Int64Var(&o.rssCapMB, "rss-cap", 3000, "SIGKILL occ when its resident memory exceeds this many MB")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.bin == "" || o.n < 1 || o.n > 5000 || o.sources < 1 || o.sources > 250 {
		return errors.New("need -bin, -n in 1..5000 and -sources in 1..250")
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.max)
	defer cancel()
	p, err := startOCC(ctx, o.bin)
	if err != nil {
		return err
	}
	defer p.stop()
	before, _ := p.Status("VmRSS")
	var capped atomic.Bool
	go p.watch(ctx, o.rssCapMB<<20, &capped)

	start := time.Now()
	statuses := burst(ctx, p.Base, o)
	took := time.Since(start)
	peak, _ := p.Status("VmHWM")
	if capped.Load() {
		peak = max(peak, o.rssCapMB<<20)
	}
	fmt.Fprintf(out, "sign-ins: %d at once from %d source address(es); burst took %v\n", o.n, o.sources, took.Round(time.Millisecond))
	fmt.Fprintf(out, "occ resident memory: %d MB before, peak %d MB (VmHWM)\n", before>>20, peak>>20)
	if capped.Load() {
		fmt.Fprintf(out, "occ was killed: its resident memory passed -rss-cap %d MB\n", o.rssCapMB)
	}
	keys := make([]string, 0, len(statuses))
	for k := range statuses {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(out, "  %-28s %d\n", k, statuses[k])
	}
	return nil
}

// burst sends o.n wrong sign-ins at once and counts the answers.
func burst(ctx context.Context, base string, o options) map[string]int {
	clients := make([]*http.Client, o.sources)
	for i := range clients {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i))}}
		clients[i] = &http.Client{Timeout: o.timeout, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: o.n}}
	}
	var mu sync.Mutex
	statuses := map[string]int{}
	begin := make(chan struct{})
	var wg sync.WaitGroup
	for i := range o.n {
		wg.Go(func() {
			body, _ := json.Marshal(map[string]string{"email": fmt.Sprintf("nobody-%d@example.test", i), "password": "not the password"})
			req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/auth/sign-in", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			<-begin
			k := answer(clients[i%len(clients)].Do(req))
			mu.Lock()
			statuses[k]++
			mu.Unlock()
		})
	}
	close(begin)
	wg.Wait()
	return statuses
}

// answer names a response: its status, and Retry-After when set.
func answer(res *http.Response, err error) string {
	if err != nil {
		return "no answer"
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	if ra := res.Header.Get("Retry-After"); ra != "" {
		return fmt.Sprintf("%d Retry-After %s", res.StatusCode, ra)
	}
	return strconv.Itoa(res.StatusCode)
}

// proc is the occ process under measurement and its directory.
type proc struct {
	*occproc.Proc
	dir string
}

func startOCC(ctx context.Context, bin string) (*proc, error) {
	dir, err := os.MkdirTemp("", "signinburst-")
	if err != nil {
		return nil, err
	}
	p, err := occproc.Start(ctx, bin, filepath.Join(dir, "data"), filepath.Join(dir, "occ.log"), nil,
		"OCC_BOOTSTRAP_ADMIN_PASSWORD=signinburst-admin-password")
	if err != nil {
		return nil, err
	}
	return &proc{Proc: p, dir: dir}, nil
}

// watch kills occ once its resident memory passes limit.
func (p *proc) watch(ctx context.Context, limit int64, capped *atomic.Bool) {
	for ctx.Err() == nil {
		if rss, err := p.Status("VmRSS"); err == nil && rss > limit {
			capped.Store(true)
			_ = p.Cmd.Process.Signal(syscall.SIGKILL)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stop ends occ and removes its directory.
func (p *proc) stop() {
	p.Stop()
	os.RemoveAll(p.dir)
}
