// Command testfailures prints, from the JSON events of `go test -json` (the
// file gotestsum --jsonfile keeps), each failed test and the end of its own
// output, leaving out occ's access-log lines. scripts/test prints it last, so
// that a log cut to its tail still names what failed and why.
//
//	go run ./scripts/testfailures events.json
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// tailLines is how many lines of each failed test's output are printed.
const tailLines = 60

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

type testID struct{ pkg, name string }

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: testfailures EVENTS.json")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()

	output := map[testID][]string{}
	var failed []testID
	packageFailed := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		id := testID{e.Package, e.Test}
		switch e.Action {
		case "output":
			if !strings.Contains(e.Output, "component=access") {
				output[id] = append(output[id], strings.TrimRight(e.Output, "\n"))
			}
		case "fail":
			if e.Test == "" {
				packageFailed[e.Package] = true
			} else {
				failed = append(failed, id)
			}
		}
	}

	// A parent fails when a subtest does: print only the innermost failures.
	leaves := failed[:0:0]
	for _, id := range failed {
		parent := false
		for _, other := range failed {
			if other.pkg == id.pkg && strings.HasPrefix(other.name, id.name+"/") {
				parent = true
				break
			}
		}
		if !parent {
			leaves = append(leaves, id)
		}
	}
	sort.Slice(leaves, func(i, j int) bool {
		if leaves[i].pkg != leaves[j].pkg {
			return leaves[i].pkg < leaves[j].pkg
		}
		return leaves[i].name < leaves[j].name
	})

	for _, id := range leaves {
		printTail(fmt.Sprintf("--- FAIL: %s %s", id.pkg, id.name), output[id])
	}
	// A package's own output says why it failed when no test did (a build
	// error, TestMain) and when go test's timeout panicked it (the panic
	// names the tests still running).
	var own []string
	for pkg := range packageFailed {
		hasTest := false
		for _, id := range leaves {
			hasTest = hasTest || id.pkg == pkg
		}
		if !hasTest || panicked(output[testID{pkg, ""}]) {
			own = append(own, pkg)
		}
	}
	sort.Strings(own)
	for _, pkg := range own {
		lines := output[testID{pkg, ""}]
		if i := panicAt(lines); i >= 0 { // its first lines name the tests still running
			lines = lines[i:min(len(lines), i+tailLines)]
		}
		printTail(fmt.Sprintf("--- FAIL: %s (the package's own output)", pkg), lines)
	}
	if len(leaves) == 0 && len(own) == 0 {
		fmt.Println("no failed test in the events")
	}
}

// printTail prints a heading and the last tailLines lines, indented.
func printTail(heading string, lines []string) {
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	fmt.Printf("%s (last %d lines, access log left out)\n", heading, len(lines))
	for _, l := range lines {
		fmt.Println("    " + l)
	}
}

// panicked reports whether the output holds a panic (go test's timeout is
// one).
func panicked(lines []string) bool { return panicAt(lines) >= 0 }

// panicAt is the index of the output's first panic line, or -1.
func panicAt(lines []string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, "panic: ") {
			return i
		}
	}
	return -1
}
