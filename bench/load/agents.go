package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/url"
	"time"

	"github.com/openclaw/occ/bench/internal/occproc"
)

// The agents scenario: the whole Agent workload of one Namespace, phase
// by phase, each measured on its own (throughput, p50/p95/p99 and, with
// -pid, occ's CPU seconds and memory over the phase):
//
//	create-1    -seq Agents created one at a time
//	create-c    the rest of the -n Agents created by -c clients
//	get-1       -gets GETs of random Agents by one client (latency)
//	get-c       -gets GETs of random Agents by -c clients (throughput)
//	page        every page of 100 Agents, walked one page at a time
//	patch       -patches merge patches (an Agent's Configuration switched
//	            between two), by -c clients
//	delete      every Agent deleted (202) by -c clients, then the time
//	            until the worker has removed them all
//
// It makes its own Namespace and two Configurations first, and deletes the
// Namespace at the end (-cleanup).

// phase is one measured phase's figures.
type phase struct {
	name      string
	r         result
	cpu       float64 // occ's CPU seconds over the phase, -1 unknown
	rss, peak int64   // occ's VmRSS at the end and VmHWM, bytes; -1 unknown
	requests  int
}

// occUse reads what occ used, when -pid names it.
type occUse struct{ p *occproc.Proc }

func (u occUse) cpu() float64 {
	if u.p == nil {
		return -1
	}
	s, err := u.p.CPUSeconds()
	if err != nil {
		return -1
	}
	return s
}

func (u occUse) mem(field string) int64 {
	if u.p == nil {
		return -1
	}
	v, err := u.p.Status(field)
	if err != nil {
		return -1
	}
	return v
}

// run measures op over n calls on c clients as the named phase.
func (u occUse) run(name string, n, c int, op func(i int) (int, error)) (phase, error) {
	before := u.cpu()
	r := measure(n, c, op)
	ph := phase{name: name, r: r, cpu: -1, rss: u.mem("VmRSS"), peak: u.mem("VmHWM"), requests: n}
	if after := u.cpu(); before >= 0 && after >= 0 {
		ph.cpu = after - before
	}
	if r.failed > 0 {
		return ph, fmt.Errorf("%s: %d of %d requests failed; first: %v", name, r.failed, n, r.firstErr)
	}
	return ph, nil
}

func agents(o options, cl *client, out io.Writer) error {
	seq := min(o.seq, o.n)
	var use occUse
	if o.pid > 0 {
		use.p = occproc.Of(o.pid)
		if use.cpu() < 0 {
			return fmt.Errorf("-pid %d: cannot read /proc/%d", o.pid, o.pid)
		}
	}
	tag := make([]byte, 4)
	_, _ = rand.Read(tag)
	name := "load-agents-" + hex.EncodeToString(tag)
	ns, err := cl.create("/namespaces", map[string]any{"name": name})
	if err != nil {
		return err
	}
	if _, err := cl.waitFor([]string{ns}, "ready", o.waitTimeout); err != nil {
		return err
	}
	base := "/namespaces/" + url.PathEscape(ns)
	var cfgs [2]string
	for i := range cfgs {
		if cfgs[i], err = cl.create(base+"/configurations", map[string]any{"name": fmt.Sprintf("load-%d", i), "kind": "agent", "values": map[string]any{}}); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "scenario agents: Namespace %s (%s), %d Agents (%d one at a time), %d clients\n", name, ns, o.n, seq, o.c)

	ids := make([]string, o.n)
	create := func(offset int) func(i int) (int, error) {
		return func(i int) (int, error) {
			i += offset
			status, body, err := cl.do("POST", base+"/agents", map[string]any{"name": fmt.Sprintf("agent-%d", i), "configurationId": cfgs[0]})
			if status == 201 {
				ids[i] = idOf(body)
			}
			return okIf(status, 201, err)
		}
	}
	var phases []phase
	add := func(ph phase, err error) error {
		phases = append(phases, ph)
		return err
	}
	if err := add(use.run("create-1", seq, 1, create(0))); err != nil {
		return err
	}
	if o.n > seq {
		if err := add(use.run("create-c", o.n-seq, o.c, create(seq))); err != nil {
			return err
		}
	}
	pick := func() string {
		i, _ := rand.Int(rand.Reader, big.NewInt(int64(len(ids))))
		return ids[i.Int64()]
	}
	get := func(int) (int, error) {
		status, _, err := cl.do("GET", base+"/agents/"+pick(), nil)
		return okIf(status, 200, err)
	}
	if err := add(use.run("get-1", o.gets, 1, get)); err != nil {
		return err
	}
	if err := add(use.run("get-c", o.gets, o.c, get)); err != nil {
		return err
	}
	pages := (o.n + 99) / 100
	token := ""
	if err := add(use.run("page", pages, 1, func(int) (int, error) {
		path := base + "/agents?pageSize=100"
		if token != "" {
			path += "&pageToken=" + url.QueryEscape(token)
		}
		status, body, err := cl.do("GET", path, nil)
		var r struct {
			Meta struct {
				NextPageToken string `json:"nextPageToken"`
			} `json:"meta"`
		}
		_ = json.Unmarshal(body, &r)
		token = r.Meta.NextPageToken
		return okIf(status, 200, err)
	})); err != nil {
		return err
	}
	if err := add(use.run("patch", o.patches, o.c, func(i int) (int, error) {
		status, _, err := cl.do("PATCH", base+"/agents/"+ids[i%len(ids)], map[string]any{"configurationId": cfgs[(i/len(ids)+1)%2]})
		return okIf(status, 200, err)
	})); err != nil {
		return err
	}
	before := use.cpu()
	del, err := use.run("delete", o.n, o.c, func(i int) (int, error) {
		status, _, err := cl.do("DELETE", base+"/agents/"+ids[i], nil)
		return okIf(status, 202, err)
	})
	if err := add(del, err); err != nil {
		return err
	}
	drained, err := cl.waitEmpty(base+"/agents?pageSize=1", o.waitTimeout)
	if err != nil {
		return err
	}
	if after := use.cpu(); before >= 0 {
		phases[len(phases)-1].cpu = after - before
	}
	printPhases(out, phases)
	fmt.Fprintf(out, "worker: all %d Agents removed %v after the last 202 (the delete row's CPU includes it)\n", o.n, drained.Round(time.Millisecond))
	if o.cleanup {
		for _, cfg := range cfgs {
			status, _, err := cl.do("DELETE", base+"/configurations/"+cfg, nil)
			if _, err := okIf(status, 204, err); err != nil {
				return fmt.Errorf("cleanup: delete Configuration %s: %w", cfg, err)
			}
		}
		status, _, err := cl.do("DELETE", base, nil)
		if _, err := okIf(status, 202, err); err != nil {
			return fmt.Errorf("cleanup: delete the Namespace: %w", err)
		}
	}
	return nil
}

func printPhases(w io.Writer, phases []phase) {
	fmt.Fprintf(w, "%-9s %8s %9s %10s %10s %10s %9s %11s %8s %8s\n", "phase", "requests", "per s", "p50", "p95", "p99", "occ CPU", "CPU/request", "RSS", "peak")
	for _, p := range phases {
		cpu, per := "-", "-"
		if p.cpu >= 0 {
			cpu = fmt.Sprintf("%.2f s", p.cpu)
			per = fmt.Sprintf("%.2f ms", 1000*p.cpu/float64(p.requests))
		}
		fmt.Fprintf(w, "%-9s %8d %9.0f %10v %10v %10v %9s %11s %8s %8s\n", p.name, p.requests, float64(len(p.r.durs))/p.r.wall.Seconds(),
			us(p.r.pct(0.50)), us(p.r.pct(0.95)), us(p.r.pct(0.99)), cpu, per, mb(p.rss), mb(p.peak))
	}
}

func mb(b int64) string {
	if b < 0 {
		return "-"
	}
	return fmt.Sprintf("%d MB", b>>20)
}

// idOf is the data.id of a created resource's answer.
func idOf(body []byte) string {
	var r struct {
		Data struct{ ID string } `json:"data"`
	}
	_ = json.Unmarshal(body, &r)
	return r.Data.ID
}

// create POSTs body and returns the new resource's ID.
func (c *client) create(path string, body any) (string, error) {
	status, raw, err := c.do("POST", path, body)
	if _, err := okIf(status, 201, err); err != nil {
		return "", fmt.Errorf("POST %s: %w: %.300s", path, err, raw)
	}
	return idOf(raw), nil
}

// waitEmpty polls a list until it holds nothing and returns how long that
// took.
func (c *client) waitEmpty(path string, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	for {
		status, body, err := c.do("GET", path, nil)
		if err != nil || status != 200 {
			return 0, fmt.Errorf("GET %s: %d %v", path, status, err)
		}
		var r struct {
			Data []json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return 0, fmt.Errorf("GET %s: %w", path, err)
		}
		if len(r.Data) == 0 {
			return time.Since(start), nil
		}
		if time.Since(start) > limit {
			return 0, fmt.Errorf("GET %s still lists something after %v", path, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
