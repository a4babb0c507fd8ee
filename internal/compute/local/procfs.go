package local

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procStat is what /proc/<pid>/stat says about a process.
type procStat struct {
	state     byte   // R, S, D, Z, X, …
	startTime uint64 // clock ticks after boot
}

// readStat reads /proc/<pid>/stat. The command name (field 2) may hold
// spaces and parentheses, so fields are counted after its last ')'.
func readStat(pid int) (procStat, error) {
	if pid <= 0 {
		return procStat{}, fmt.Errorf("bad pid %d", pid)
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errors.New("malformed /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); starttime is field 22, so f[19].
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, errors.New("malformed /proc stat")
	}
	st, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("malformed /proc stat: %w", err)
	}
	return procStat{state: f[0][0], startTime: st}, nil
}

// alive reports whether the process pid exists, has not exited (a zombie
// has), and started at startTime (so a reused PID is not taken for it).
func alive(pid int, startTime uint64) bool {
	s, err := readStat(pid)
	if err != nil {
		return false
	}
	return s.state != 'Z' && s.state != 'X' && s.startTime == startTime
}

// readEnviron returns the initial environment of a process (readable for
// processes of the same user only).
func readEnviron(pid int) ([]string, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, kv := range bytes.Split(b, []byte{0}) {
		if len(kv) > 0 {
			out = append(out, string(kv))
		}
	}
	return out, nil
}

// processesWithEnv lists the live processes whose initial environment holds
// exactly the entry kv (NAME=value). Processes it cannot read are skipped.
func processesWithEnv(kv string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := readEnviron(pid)
		if err != nil {
			continue
		}
		for _, v := range env {
			if v == kv {
				if s, err := readStat(pid); err == nil && s.state != 'Z' && s.state != 'X' {
					out = append(out, pid)
				}
				break
			}
		}
	}
	return out
}

// processesByUser lists the live processes by user ID: each process under
// every user ID it has (real, effective, saved, filesystem).
func processesByUser() map[uint32][]int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := map[uint32][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			ids, ok := strings.CutPrefix(l, "Uid:")
			if !ok {
				continue
			}
			seen := map[uint64]bool{}
			for _, f := range strings.Fields(ids) {
				if uid, err := strconv.ParseUint(f, 10, 32); err == nil && !seen[uid] {
					seen[uid] = true
					out[uint32(uid)] = append(out[uint32(uid)], pid)
				}
			}
			break
		}
	}
	return out
}

// listensOn reports whether the process pid owns a listening TCP socket on
// the loopback port. It answers true when /proc does not let it tell (no
// /proc/net/tcp, unreadable fds), so it only ever catches a port answered
// by some other process.
func listensOn(pid, port int) bool {
	inodes := map[string]bool{}
	readable := false
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		readable = true
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 || fs[3] != "0A" { // 0A: LISTEN
				continue
			}
			_, hexPort, ok := strings.Cut(fs[1], ":")
			if !ok {
				continue
			}
			p, err := strconv.ParseUint(hexPort, 16, 16)
			if err != nil || int(p) != port {
				continue
			}
			inodes["socket:["+fs[9]+"]"] = true
		}
		f.Close()
	}
	if !readable || len(inodes) == 0 {
		return true
	}
	fdDir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return true
	}
	for _, fd := range fds {
		if link, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && inodes[link] {
			return true
		}
	}
	return false
}
