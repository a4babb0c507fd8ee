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

// portsLock is the root's lock file for port allocation, and portsIndex
// the file that lists the port of every Agent under the root (by Agent
// directory relative to the root). run.json holds the truth; the index
// spares a scan of every Agent at each allocation and is rebuilt from the
// run.json files when it is missing or has no room left.
const (
	portsLock  = "ports.lock"
	portsIndex = "ports.json"
)

// allocatePort gives the Agent a free loopback port at least PortSpacing
// away from every other Agent's port under the root, and records it in
// run.json (and the index) before the root's port lock is released. Ports
// lie on a grid FirstPort + k*PortSpacing; the search starts at a slot
// derived from the root, so that drivers on different roots (tests side by
// side) rarely try the same ports.
func (d *Driver) allocatePort(a *agent, st *runState) error {
	unlock, err := d.lockPorts()
	if err != nil {
		return err
	}
	defer unlock()
	self := d.relDir(a.dir)
	slots := (65535-PortSpacing-d.firstPort)/PortSpacing + 1
	if slots < 1 {
		return fmt.Errorf("no port range above %d", d.firstPort)
	}
	h := fnv.New32a()
	h.Write([]byte(d.root))
	first := int(h.Sum32() % uint32(slots))
	index, err := d.readPortIndex()
	for attempt := 0; attempt < 2; attempt++ {
		if err != nil || attempt == 1 {
			index = d.scanPorts() // missing, unreadable, or full: rebuild
		}
		delete(index, self)
		used := make([]int, 0, len(index))
		for _, p := range index {
			used = append(used, p)
		}
		for i := 0; i < slots; i++ {
			port := d.firstPort + ((first+i)%slots)*PortSpacing
			if near(port, used) || !portFree(port) || !d.claim(portClaim(port), a.dir) {
				continue
			}
			// The index first: interrupted in between, a slot is held in
			// vain rather than given twice.
			index[self] = port
			if err := d.writePortIndex(index); err != nil {
				return err
			}
			st.Port = port
			return writeRun(a.dir, st)
		}
	}
	return fmt.Errorf("no free loopback port for a gateway (%d Agents hold ports)", len(index))
}

// releasePort drops a deleted Agent from the port index.
func (d *Driver) releasePort(dir string) error {
	unlock, err := d.lockPorts()
	if err != nil {
		return err
	}
	defer unlock()
	index, err := d.readPortIndex()
	if err != nil {
		return nil // rebuilt from run.json at the next allocation
	}
	if _, ok := index[d.relDir(dir)]; !ok {
		return nil
	}
	delete(index, d.relDir(dir))
	return d.writePortIndex(index)
}

func (d *Driver) lockPorts() (func(), error) {
	f, err := os.OpenFile(filepath.Join(d.root, portsLock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open port lock: %w", err)
	}
	if err := flock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock ports: %w", err)
	}
	return func() { f.Close() }, nil
}

func (d *Driver) relDir(dir string) string {
	rel, err := filepath.Rel(d.root, dir)
	if err != nil {
		return dir
	}
	return rel
}

func (d *Driver) readPortIndex() (map[string]int, error) {
	b, err := os.ReadFile(filepath.Join(d.root, portsIndex))
	if err != nil {
		return nil, err
	}
	index := map[string]int{}
	if err := json.Unmarshal(b, &index); err != nil {
		return nil, err
	}
	return index, nil
}

func (d *Driver) writePortIndex(index map[string]int) error {
	b, err := json.Marshal(index)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(d.root, portsIndex), append(b, '\n'))
}

// scanPorts reads the port of every Agent under the root from its
// run.json.
func (d *Driver) scanPorts() map[string]int {
	index := map[string]int{}
	d.scanRuns(func(dir string, st runState) {
		if st.Port > 0 {
			index[d.relDir(dir)] = st.Port
		}
	})
	return index
}

// scanRuns calls fn with the run.json of every Agent under the root (the
// readable ones).
func (d *Driver) scanRuns(fn func(dir string, st runState)) {
	files, _ := filepath.Glob(filepath.Join(d.root, "namespaces", "*", "agents", "*", runFile))
	for _, f := range files {
		if st, err := readRun(filepath.Dir(f)); err == nil {
			fn(filepath.Dir(f), st)
		}
	}
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

// portFree reports whether a listener can be opened on the loopback port.
func portFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}
