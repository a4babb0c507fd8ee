package kubetest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// killShims kills (SIGKILL) every containerd shim serving a containerd
// under dir, with the container processes under it, and returns their
// PIDs. A shim is a process of its own that outlives containerd by design;
// one whose sandbox kubelet had not removed yet (a node stopped while a
// Pod was being made) would otherwise keep its pause container, and the
// Pod's network link, after the node is gone.
func killShims(dir string) []int {
	children := map[int][]int{}
	var shims []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil || pid == os.Getpid() {
			continue
		}
		stat, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid …
		if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 1 {
			if ppid, err := strconv.Atoi(f[1]); err == nil {
				children[ppid] = append(children[ppid], pid)
			}
		}
		cmd, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
		if bytes.Contains(cmd, []byte("containerd-shim")) && bytes.Contains(cmd, []byte(dir+string(filepath.Separator))) {
			shims = append(shims, pid)
		}
	}
	var killed []int
	var kill func(pid int)
	kill = func(pid int) {
		for _, c := range children[pid] {
			kill(c)
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, pid)
		}
	}
	for _, s := range shims {
		kill(s)
	}
	return killed
}
