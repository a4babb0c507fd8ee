package kubetest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// hostStateDir coordinates the real nodes of every test process on the
// machine: one file per live node (net-<n>, holding its PID and bridge)
// reserves the node's subnet 10.233.<n>.0/24, and "saved" holds the host's
// sysctls as they were before the first node changed them, restored by the
// last node to leave.
const hostStateDir = "/run/occ-kubetest-nodes"

// tunables are the sysctls a real node changes: the CNI bridge plugin sets
// net.ipv4.ip_forward (isGateway), kubelet the others on start.
var tunables = []string{
	"net/ipv4/ip_forward",
	"vm/overcommit_memory",
	"vm/panic_on_oom",
	"kernel/panic",
	"kernel/panic_on_oops",
	"kernel/keys/root_maxkeys",
	"kernel/keys/root_maxbytes",
}

// hostDirs are the directories outside the node's own that kubelet, the CNI
// plugins and containerd's shims create (and kubelet's device-plugin
// socket, at a fixed path): the last node out removes those that did not
// exist before the first came, once empty (cgroup directories are empty
// once their containers are gone).
func hostDirs() []string {
	dirs := []string{"/var/lib/kubelet/device-plugins/kubelet.sock", "/run/containerd/s", "/run/containerd", "/var/lib/cni/results", "/var/lib/cni",
		"/var/lib/kubelet/device-plugins", "/var/lib/kubelet", "/var/log/containers"}
	cgroups, _ := filepath.Glob("/sys/fs/cgroup/*/" + k8sNamespace)
	return append(dirs, cgroups...)
}

// absent marks, in "saved", a directory that did not exist.
const absent = "absent"

// hostLease is one node's membership: its subnet's number and its bridge.
type hostLease struct {
	n      int
	bridge string
}

// lockHostState takes the machine-wide lock on hostStateDir.
func lockHostState() (unlock func(), err error) {
	f, err := lockFile(".lock", syscall.LOCK_EX)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}

// lockFile opens the file name in hostStateDir and flocks it with how
// (LOCK_EX, with LOCK_NB not to wait); closing the file unlocks it.
func lockFile(name string, how int) (*os.File, error) {
	if err := os.MkdirAll(hostStateDir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(hostStateDir, name), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// members reads the live members' files, removing (with their bridges) the
// ones whose process is gone: a test process killed before its cleanup.
func members() (map[int]hostLease, error) {
	entries, err := os.ReadDir(hostStateDir)
	if err != nil {
		return nil, err
	}
	live := map[int]hostLease{}
	for _, e := range entries {
		num, ok := strings.CutPrefix(e.Name(), "net-")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(num)
		if err != nil {
			continue
		}
		path := filepath.Join(hostStateDir, e.Name())
		b, _ := os.ReadFile(path)
		var pid int
		var bridge string
		_, _ = fmt.Sscan(string(b), &pid, &bridge)
		if pid > 0 && syscall.Kill(pid, 0) == nil {
			live[n] = hostLease{n: n, bridge: bridge}
			continue
		}
		if bridge != "" {
			deleteLink(bridge)
		}
		_ = os.Remove(path)
	}
	return live, nil
}

// joinHost records the host's sysctls when no node is live, and reserves a
// free subnet for a node whose bridge is bridge.
func joinHost(bridge string) (hostLease, error) {
	unlock, err := lockHostState()
	if err != nil {
		return hostLease{}, fmt.Errorf("kubetest: %s: %w", hostStateDir, err)
	}
	defer unlock()
	live, err := members()
	if err != nil {
		return hostLease{}, err
	}
	saved := filepath.Join(hostStateDir, "saved")
	// With no live member the host is as it was, unless "saved" survives a
	// killed run: then it, not the host, holds the original values.
	if _, err := os.Stat(saved); len(live) == 0 && errors.Is(err, os.ErrNotExist) {
		var b strings.Builder
		for _, name := range tunables {
			if v, err := os.ReadFile(filepath.Join("/proc/sys", name)); err == nil {
				fmt.Fprintf(&b, "%s %s\n", name, strings.TrimSpace(string(v)))
			}
		}
		for _, dir := range []string{"/run/containerd", "/var/lib/cni", "/var/lib/kubelet", "/var/log/containers"} {
			if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
				fmt.Fprintf(&b, "%s %s\n", absent, dir)
			}
		}
		if _, err := os.Stat("/sys/fs/cgroup/memory/" + k8sNamespace); errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(&b, "%s %s\n", absent, "cgroups")
		}
		if err := os.WriteFile(saved, []byte(b.String()), 0o644); err != nil {
			return hostLease{}, err
		}
	}
	for n := range 256 {
		if _, taken := live[n]; taken {
			continue
		}
		l := hostLease{n: n, bridge: bridge}
		return l, os.WriteFile(l.file(), fmt.Appendf(nil, "%d %s\n", os.Getpid(), bridge), 0o644)
	}
	return hostLease{}, errors.New("kubetest: 256 real nodes are live on this machine; no subnet is free")
}

func (l hostLease) file() string {
	return filepath.Join(hostStateDir, fmt.Sprintf("net-%d", l.n))
}

// leave gives the subnet back; the last node out restores the sysctls.
func (l hostLease) leave() error {
	unlock, err := lockHostState()
	if err != nil {
		return err
	}
	defer unlock()
	_ = os.Remove(l.file())
	live, err := members()
	if err != nil || len(live) > 0 {
		return err
	}
	return restoreHost()
}

// restoreHost writes back the sysctls in "saved", removes the empty
// directories that were absent, and removes "saved".
func restoreHost() error {
	saved := filepath.Join(hostStateDir, "saved")
	b, err := os.ReadFile(saved)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if name == absent {
			for _, dir := range hostDirs() {
				if strings.HasPrefix(dir, value+"/") || dir == value || (value == "cgroups" && strings.HasPrefix(dir, "/sys/fs/cgroup/")) {
					_ = os.Remove(dir) // only when empty
				}
			}
			continue
		}
		path := filepath.Join("/proc/sys", name)
		if cur, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(cur)) == value {
			continue
		}
		if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restore %s=%s: %w", name, value, err))
		}
	}
	if len(errs) == 0 {
		errs = append(errs, os.Remove(saved))
	}
	return errors.Join(errs...)
}

// deleteLink deletes a network link when it exists.
func deleteLink(name string) {
	if _, err := os.Stat(filepath.Join("/sys/class/net", name)); err == nil {
		_ = exec.Command("ip", "link", "delete", name).Run()
	}
}

// subnet is the node's Pod subnet and the host's address on its bridge.
func (l hostLease) subnet() (cidr, gateway string) {
	return fmt.Sprintf("10.233.%d.0/24", l.n), fmt.Sprintf("10.233.%d.1", l.n)
}
