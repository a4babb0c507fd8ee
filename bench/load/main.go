// Command load measures occ's HTTP API from the outside: it sends a bounded
// number of requests (-n) with bounded concurrency (-c) to one occ on a
// loopback address and prints the latency percentiles and the throughput.
//
//	go run ./bench/load -url http://127.0.0.1:8080 -key-file occ-data/bootstrap-admin.key -scenario get-namespace -n 5000 -c 4
//
// Scenarios:
//
//	get-namespace     GET /namespaces/{id} of one existing Namespace (-namespace,
//	                  default the first listed, normally "default"), after
//	                  -warmup unmeasured requests.
//	create-namespace  POST /namespaces with a new name each time (201 in
//	                  provisioning; the worker's preparation runs alongside, as
//	                  in production). With -wait (default) it then waits until
//	                  the worker made them all ready and reports how long that
//	                  took; with -cleanup (default) it deletes them afterwards,
//	                  unmeasured, and with -wait waits until they are gone, so
//	                  the next run starts with an idle worker. Deleted names
//	                  stay reserved, so every run uses fresh names.
//	agents            the whole Agent workload of a new Namespace: -n Agents
//	                  created (-seq of them one at a time, the rest by -c
//	                  clients), -gets GETs, every page of 100, -patches
//	                  merge patches, every Agent deleted and the worker's
//	                  removal awaited; each phase's figures, and with -pid
//	                  (occ's process) its CPU seconds and memory. occ's
//	                  request rate limits must be raised for it (one key
//	                  from one address gets 20 requests a second by
//	                  default): see docs/PERFORMANCE.md.
//	stall             -n connections (from -sources loopback addresses) that
//	                  each send a sign-in's headers and the start of its
//	                  body, then stall; it prints, every -every for at most
//	                  -watch, how many the server still holds open, its
//	                  goroutines and open file descriptors (/metrics) and
//	                  how /healthz answers, and finally what they were
//	                  answered. -c does not apply.
//
// It refuses URLs that are not loopback: it is a tool for a private
// installation, never for someone else's server.
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

type options struct {
	url, keyFile, scenario, namespace  string
	n, c, warmup, sources              int
	seq, gets, patches, pid            int
	cleanup, wait                      bool
	timeout, waitTimeout, watch, every time.Duration
}

const maxRequests = 1_000_000

func run(args []string, out io.Writer) error {
	var o options
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.StringVar(&o.url, "url", "http://127.0.0.1:8080", "base URL of occ (loopback only)")
	fs.StringVar(&o.keyFile, "key-file", "occ-data/bootstrap-admin.key", "file holding a service key (installation admin)")
	fs.StringVar(&o.scenario, "scenario", "get-namespace", "get-namespace, create-namespace, agents or stall")
	fs.IntVar(&o.seq, "seq", 1000, "agents: Agents created one at a time before the concurrent creates")
	fs.IntVar(&o.gets, "gets", 0, "agents: GETs of random Agents (default -n)")
	fs.IntVar(&o.patches, "patches", 0, "agents: merge patches (default -n)")
	fs.IntVar(&o.pid, "pid", 0, "agents: occ's process ID, to report its CPU and memory per phase")
	fs.IntVar(&o.n, "n", 1000, "measured requests")
	fs.IntVar(&o.c, "c", 4, "concurrent requests")
	fs.IntVar(&o.warmup, "warmup", 100, "unmeasured requests first (get-namespace only)")
	fs.StringVar(&o.namespace, "namespace", "", "Namespace ID for get-namespace (default: the first listed)")
	fs.BoolVar(&o.cleanup, "cleanup", true, "delete the Namespaces create-namespace made (unmeasured)")
	fs.BoolVar(&o.wait, "wait", true, "create-namespace: wait for the worker (ready, then gone after cleanup)")
	fs.DurationVar(&o.waitTimeout, "wait-timeout", 10*time.Minute, "longest -wait")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "timeout of one request")
	fs.IntVar(&o.sources, "sources", 10, "stall: loopback source addresses (127.0.0.1 up), spreading the per-client rate")
	fs.DurationVar(&o.watch, "watch", 2*time.Minute, "stall: longest time to watch the connections")
	fs.DurationVar(&o.every, "every", 5*time.Second, "stall: time between samples")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.n < 1 || o.n > maxRequests {
		return fmt.Errorf("-n must be between 1 and %d", maxRequests)
	}
	if o.c < 1 || o.c > 256 {
		return errors.New("-c must be between 1 and 256")
	}
	if o.warmup < 0 || o.warmup > maxRequests {
		return fmt.Errorf("-warmup must be between 0 and %d", maxRequests)
	}
	base, err := loopback(o.url)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(o.keyFile)
	if err != nil {
		return fmt.Errorf("read the key: %w", err)
	}
	cl := &client{base: base, key: strings.TrimSpace(string(raw)), http: &http.Client{Timeout: o.timeout,
		Transport: &http.Transport{MaxIdleConns: o.c, MaxIdleConnsPerHost: o.c, IdleConnTimeout: time.Minute}}}

	var op func(i int) (int, error)
	var after func() error
	switch o.scenario {
	case "stall":
		return stall(o, cl, out)
	case "agents":
		if o.gets == 0 {
			o.gets = o.n
		}
		if o.patches == 0 {
			o.patches = o.n
		}
		if o.seq < 0 || o.gets < 0 || o.patches < 0 || o.gets > maxRequests || o.patches > maxRequests {
			return fmt.Errorf("-seq, -gets and -patches must be between 0 and %d", maxRequests)
		}
		return agents(o, cl, out)
	case "get-namespace":
		id := o.namespace
		if id == "" {
			if id, err = cl.firstNamespace(); err != nil {
				return err
			}
		}
		op = func(int) (int, error) {
			status, _, err := cl.do("GET", "/namespaces/"+url.PathEscape(id), nil)
			return okIf(status, 200, err)
		}
		if o.warmup > 0 {
			if r := measure(o.warmup, o.c, op); r.failed > 0 {
				return fmt.Errorf("warm-up: %d of %d requests failed; first: %v", r.failed, o.warmup, r.firstErr)
			}
		}
	case "create-namespace":
		run := make([]byte, 4)
		_, _ = rand.Read(run)
		prefix := "load-" + hex.EncodeToString(run) + "-"
		ids := make([]string, o.n)
		op = func(i int) (int, error) {
			status, body, err := cl.do("POST", "/namespaces", map[string]any{"name": fmt.Sprintf("%s%d", prefix, i)})
			if status == 201 {
				var r struct {
					Data struct{ ID string } `json:"data"`
				}
				_ = json.Unmarshal(body, &r)
				ids[i] = r.Data.ID
			}
			return okIf(status, 201, err)
		}
		after = func() error {
			var made []string
			for _, id := range ids {
				if id != "" {
					made = append(made, id)
				}
			}
			if o.wait {
				took, err := cl.waitFor(made, "ready", o.waitTimeout)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "worker: all %d ready %v after the last 201\n", len(made), took.Round(time.Millisecond))
			}
			if o.cleanup {
				r := measure(len(made), o.c, func(i int) (int, error) {
					status, _, err := cl.do("DELETE", "/namespaces/"+url.PathEscape(made[i]), nil)
					return okIf(status, 202, err)
				})
				if r.failed > 0 {
					return fmt.Errorf("cleanup: %d of %d deletions failed; first: %v", r.failed, len(made), r.firstErr)
				}
				fmt.Fprintf(out, "cleanup: deleting %d Namespaces (prefix %s)\n", len(made), prefix)
				if o.wait {
					took, err := cl.waitFor(made, "gone", o.waitTimeout)
					if err != nil {
						return err
					}
					fmt.Fprintf(out, "worker: all %d gone %v after the last 202\n", len(made), took.Round(time.Millisecond))
				}
			}
			return nil
		}
	default:
		return fmt.Errorf("unknown -scenario %q (get-namespace, create-namespace, agents or stall)", o.scenario)
	}

	r := measure(o.n, o.c, op)
	r.print(out, o)
	if after != nil {
		if err := after(); err != nil {
			return err
		}
	}
	if r.failed > 0 {
		return fmt.Errorf("%d of %d requests failed; first: %v", r.failed, o.n, r.firstErr)
	}
	return nil
}

// loopback accepts only http URLs whose host is a loopback address.
func loopback(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("-url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", errors.New("-url must be http:// or https://")
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", fmt.Errorf("-url host %q is not a loopback address; load only runs against a local occ", host)
	}
	return strings.TrimSuffix(u.Scheme+"://"+u.Host+u.Path, "/"), nil
}

type client struct {
	base, key string
	http      *http.Client
}

func (c *client) do(method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	res, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res.StatusCode, raw, err
}

func (c *client) firstNamespace() (string, error) {
	status, body, err := c.do("GET", "/namespaces?pageSize=1", nil)
	if err != nil {
		return "", err
	}
	var r struct {
		Data []struct{ ID string } `json:"data"`
	}
	if status != 200 || json.Unmarshal(body, &r) != nil || len(r.Data) == 0 {
		return "", fmt.Errorf("GET /namespaces: %d %s", status, body)
	}
	return r.Data[0].ID, nil
}

// statuses lists every Namespace (all pages) by ID.
func (c *client) statuses() (map[string]string, error) {
	out := map[string]string{}
	path := "/namespaces?pageSize=1000"
	for {
		status, body, err := c.do("GET", path, nil)
		if err != nil {
			return nil, err
		}
		var r struct {
			Data []struct{ ID, Status string } `json:"data"`
			Meta struct {
				NextPageToken string `json:"nextPageToken"`
			} `json:"meta"`
		}
		if status != 200 || json.Unmarshal(body, &r) != nil {
			return nil, fmt.Errorf("GET /namespaces: %d %.200s", status, body)
		}
		for _, ns := range r.Data {
			out[ns.ID] = ns.Status
		}
		if r.Meta.NextPageToken == "" {
			return out, nil
		}
		path = "/namespaces?pageSize=1000&pageToken=" + url.QueryEscape(r.Meta.NextPageToken)
	}
}

// waitFor polls the list until every ID has the status ("gone" = not
// listed), and returns how long that took.
func (c *client) waitFor(ids []string, want string, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	for {
		all, err := c.statuses()
		if err != nil {
			return 0, err
		}
		left := 0
		for _, id := range ids {
			got, ok := all[id]
			if !ok {
				got = "gone"
			}
			if got == "failed" {
				return 0, fmt.Errorf("namespace %s failed", id)
			}
			if got != want {
				left++
			}
		}
		if left == 0 {
			return time.Since(start), nil
		}
		if time.Since(start) > limit {
			return 0, fmt.Errorf("%d of %d Namespaces not %s after %v", left, len(ids), want, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func okIf(status, want int, err error) (int, error) {
	if err == nil && status != want {
		err = fmt.Errorf("status %d, want %d", status, want)
	}
	return status, err
}

// result is one measured run.
type result struct {
	durs     []time.Duration // of the successful requests
	failed   int
	firstErr error
	wall     time.Duration
	statuses map[int]int
}

// measure runs op(0..n-1) on c workers and times each call.
func measure(n, c int, op func(i int) (int, error)) result {
	durs := make([]time.Duration, n)
	errs := make([]error, n)
	statuses := make([]int, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range min(c, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				t := time.Now()
				statuses[i], errs[i] = op(i)
				durs[i] = time.Since(t)
			}
		})
	}
	wg.Wait()
	r := result{wall: time.Since(start), statuses: map[int]int{}}
	for i := range n {
		r.statuses[statuses[i]]++
		if errs[i] != nil {
			r.failed++
			if r.firstErr == nil {
				r.firstErr = errs[i]
			}
			continue
		}
		r.durs = append(r.durs, durs[i])
	}
	slices.Sort(r.durs)
	return r
}

func (r result) pct(p float64) time.Duration {
	if len(r.durs) == 0 {
		return 0
	}
	return r.durs[min(len(r.durs)-1, int(p*float64(len(r.durs))))]
}

func (r result) print(w io.Writer, o options) {
	fmt.Fprintf(w, "scenario %s: %d requests, concurrency %d, %d failed, statuses %v\n", o.scenario, o.n, o.c, r.failed, r.statuses)
	fmt.Fprintf(w, "latency p50 %v  p90 %v  p99 %v  max %v\n", us(r.pct(0.50)), us(r.pct(0.90)), us(r.pct(0.99)), us(r.pct(1)))
	fmt.Fprintf(w, "throughput %.0f requests/s (%d in %v)\n", float64(len(r.durs))/r.wall.Seconds(), len(r.durs), r.wall.Round(time.Millisecond))
}

// us rounds a duration for display.
func us(d time.Duration) time.Duration {
	if d >= time.Millisecond {
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
