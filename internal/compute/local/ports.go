package local

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

// portsLock is the root's lock file for port allocation.
const portsLock = "ports.lock"

// allocatePort gives the Agent a free loopback port at least PortSpacing
// away from every other Agent's port under the root, and records it in
// run.json before the root's port lock is released. Ports lie on a grid
// FirstPort + k*PortSpacing; the search starts at a slot derived from the
// root, so that drivers on different roots (tests side by side) rarely
// try the same ports.
func (d *Driver) allocatePort(a *agent, st *runState) error {
	f, err := os.OpenFile(filepath.Join(d.root, portsLock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open port lock: %w", err)
	}
	defer f.Close()
	if err := flock(f); err != nil {
		return fmt.Errorf("lock ports: %w", err)
	}
	used := d.usedPorts(a.dir)
	slots := (65535-PortSpacing-d.firstPort)/PortSpacing + 1
	if slots < 1 {
		return fmt.Errorf("no port range above %d", d.firstPort)
	}
	h := fnv.New32a()
	h.Write([]byte(d.root))
	first := int(h.Sum32() % uint32(slots))
	for i := 0; i < slots; i++ {
		port := d.firstPort + ((first+i)%slots)*PortSpacing
		if near(port, used) || !portFree(port) {
			continue
		}
		st.Port = port
		return writeRun(a.dir, st)
	}
	return fmt.Errorf("no free loopback port for a gateway (%d Agents hold ports)", len(used))
}

// near reports whether port is within PortSpacing of a used port.
func near(port int, used []int) bool {
	for _, u := range used {
		if port > u-PortSpacing && port < u+PortSpacing {
			return true
		}
	}
	return false
}

// usedPorts lists the ports of every Agent under the root but the one in
// self.
func (d *Driver) usedPorts(self string) []int {
	files, _ := filepath.Glob(filepath.Join(d.root, "namespaces", "*", "agents", "*", runFile))
	var out []int
	for _, f := range files {
		if filepath.Dir(f) == self {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var st struct {
			Port int `json:"port"`
		}
		if json.Unmarshal(b, &st) == nil && st.Port > 0 {
			out = append(out, st.Port)
		}
	}
	return out
}

// portFree reports whether a listener can be opened on the loopback port.
func portFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}
