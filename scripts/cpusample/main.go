// Command cpusample accounts where a machine's CPU goes while it runs:
// every interval it reads each process's CPU time from /proc and adds what
// each used since the last look to its command name, so processes that are
// nobody's waited-for children (the gateways a container engine runs, the
// pods of a cluster, a database server) are counted too. On SIGTERM or
// SIGINT it writes to FILE the machine's busy share over the whole run
// (from /proc/stat) and the commands by CPU seconds, largest first.
//
//	go run ./scripts/cpusample FILE [interval]
//	go run ./scripts/cpusample -acct PACCT [top]
//
// The second form summarizes a process accounting file instead (acct.go):
// every process that ended while accounting was on, none missed.
//
// scripts/test runs it beside go test when OCC_TEST_CPU is set. A process
// that starts and ends between two looks is missed, and one that ends
// loses what it used since the last look: the figures are a floor.
package main

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc's CPU times (100 on Linux).
const clockTicks = 100

// proc identifies a process across looks (a PID is reused).
type proc struct {
	pid   string
	start string
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: cpusample FILE [interval] | cpusample -acct PACCT [top]")
		os.Exit(2)
	}
	if os.Args[1] == "-acct" && len(os.Args) > 2 {
		top := 30
		if len(os.Args) > 3 {
			n, err := strconv.Atoi(os.Args[3])
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			top = n
		}
		if err := summarizeAcct(os.Args[2], top); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	interval := 2 * time.Second
	if len(os.Args) > 2 {
		d, err := time.ParseDuration(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		interval = d
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	began := time.Now()
	busy0, total0 := machine()
	seen := map[proc]float64{}
	byName := map[string]float64{}
	look := func(first bool) {
		now := map[proc]float64{}
		for p, s := range processes() {
			now[p] = s.cpu
			if prev, ok := seen[p]; ok {
				byName[s.name] += s.cpu - prev
			} else if !first {
				byName[s.name] += s.cpu // started since the last look
			}
		}
		seen = now
	}
	look(true)
	t := time.NewTicker(interval)
	defer t.Stop()
	for done := false; !done; {
		select {
		case <-t.C:
			look(false)
		case <-stop:
			look(false)
			done = true
		}
	}
	busy1, total1 := machine()
	if err := write(os.Args[1], time.Since(began), (busy1-busy0)/(total1-total0), byName); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// sample is a process's command name and CPU seconds (user and system,
// its own only).
type sample struct {
	name string
	cpu  float64
}

// processes yields each live process's identity and sample.
func processes() func(yield func(proc, sample) bool) {
	return func(yield func(proc, sample) bool) {
		dirs, _ := filepath.Glob("/proc/[0-9]*")
		for _, dir := range dirs {
			b, err := os.ReadFile(dir + "/stat")
			if err != nil {
				continue // ended meanwhile
			}
			s := string(b)
			open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
			if open < 0 || end < open || end+2 > len(s) {
				continue
			}
			f := strings.Fields(s[end+2:])
			if len(f) < 20 {
				continue
			}
			utime, _ := strconv.ParseFloat(f[11], 64)
			stime, _ := strconv.ParseFloat(f[12], 64)
			if !yield(proc{pid: filepath.Base(dir), start: f[19]}, sample{name: s[open+1 : end], cpu: (utime + stime) / clockTicks}) {
				return
			}
		}
	}
}

// machine reads the busy and total CPU ticks of every core from /proc/stat.
func machine() (busy, total float64) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, 0
	}
	fields := strings.Fields(sc.Text())[1:]
	for i, v := range fields {
		n, _ := strconv.ParseFloat(v, 64)
		if i >= 8 { // guest time is already in user
			break
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total
}

func write(file string, wall time.Duration, busy float64, byName map[string]float64) error {
	names := make([]string, 0, len(byName))
	sum := 0.0
	for n, s := range byName {
		names = append(names, n)
		sum += s
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(byName[b], byName[a]) })
	var sb strings.Builder
	fmt.Fprintf(&sb, "wall %.0f s, machine busy %.0f%%, %.0f CPU s counted\n", wall.Seconds(), 100*busy, sum)
	for _, n := range names {
		if byName[n] >= 1 {
			fmt.Fprintf(&sb, "%8.1f\t%s\n", byName[n], n)
		}
	}
	return os.WriteFile(file, []byte(sb.String()), 0o644)
}
