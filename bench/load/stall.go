package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxStalled and maxWatch bound the stall scenario.
const (
	maxStalled = 10_000
	maxWatch   = 5 * time.Minute
)

// stalled is one connection that sent a request's headers and the start of
// its body, then nothing.
type stalled struct {
	closed atomic.Bool
	answer atomic.Value // the status line the server answered, "" for none
}

// stall runs the stall scenario: it samples the server (goroutines and open
// file descriptors from /metrics, a /healthz answer), opens n connections
// spread over sources loopback addresses that each send a sign-in's headers
// and 10 of its 100 body bytes, then samples every every until the server
// has closed them all or watch is over.
func stall(o options, cl *client, out io.Writer) error {
	if o.n > maxStalled || o.watch <= 0 || o.watch > maxWatch || o.every < 100*time.Millisecond || o.every > o.watch || o.sources < 1 || o.sources > 250 {
		return fmt.Errorf("stall: -n at most %d, -watch in (0, %v], -every in [100ms, -watch], -sources in 1..250", maxStalled, maxWatch)
	}
	u, _ := url.Parse(cl.base)
	addr := u.Host
	fmt.Fprintf(out, "stall: %d connections to %s from %d loopback addresses\n", o.n, addr, o.sources)
	fmt.Fprintln(out, "t\topen\tgoroutines\topen fds\thealthz (new connection)")
	sample(cl, out, "before", -1)
	conns := make([]*stalled, o.n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range o.n {
		c, err := dialFrom(addr, i%o.sources)
		if err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		s := &stalled{}
		s.answer.Store("")
		conns[i] = s
		head := "POST /api/auth/sign-in HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"email\":"
		if _, err := io.WriteString(c, head); err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		wg.Go(func() {
			defer c.Close()
			_ = c.SetReadDeadline(start.Add(o.watch + o.every)) // after the last sample
			line, _ := bufio.NewReader(c).ReadString('\n')
			s.answer.Store(strings.TrimSpace(line))
			_, err := io.Copy(io.Discard, c)
			if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
				s.closed.Store(true)
			}
		})
	}
	open := func() int {
		n := 0
		for _, s := range conns {
			if !s.closed.Load() {
				n++
			}
		}
		return n
	}
	for {
		time.Sleep(o.every)
		left := open()
		sample(cl, out, time.Since(start).Round(time.Second).String(), left)
		if left == 0 || time.Since(start) >= o.watch {
			break
		}
	}
	wg.Wait()
	answers := map[string]int{}
	for _, s := range conns {
		answers[s.answer.Load().(string)]++
	}
	fmt.Fprintf(out, "still open after %v: %d of %d; first lines answered: %v\n", time.Since(start).Round(time.Second), open(), o.n, answers)
	return nil
}

// dialFrom connects to addr from 127.0.0.(1+i) when addr is IPv4 loopback.
func dialFrom(addr string, i int) (net.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second}
	if host, _, _ := net.SplitHostPort(addr); net.ParseIP(host).To4() != nil {
		d.LocalAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+i))}
	}
	return d.Dial("tcp", addr)
}

// sample prints one line: connections still open, the server's goroutines
// and open file descriptors (over the client's kept-alive connection), and
// how /healthz answered a new client (a new connection) and how soon.
func sample(cl *client, out io.Writer, at string, open int) {
	_, metrics, err := cl.do("GET", "/metrics", nil)
	gauge := func(name string) string {
		if err != nil {
			return "?"
		}
		for _, line := range strings.Split(string(metrics), "\n") {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				f, _ := strconv.ParseFloat(v, 64)
				return strconv.FormatFloat(f, 'f', 0, 64)
			}
		}
		return "?"
	}
	t := time.Now()
	health := "error"
	fresh := &http.Client{Timeout: cl.http.Timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	if res, err := fresh.Get(cl.base + "/healthz"); err == nil {
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		health = fmt.Sprintf("%d in %v", res.StatusCode, us(time.Since(t)))
		if res.StatusCode != http.StatusOK {
			health += " (" + res.Header.Get("Retry-After") + ")"
		}
	}
	openText := "-"
	if open >= 0 {
		openText = strconv.Itoa(open)
	}
	fmt.Fprintf(out, "%s\t%s\t%s\t%s\t%s\n", at, openText, gauge("go_goroutines"), gauge("process_open_fds"), health)
}
