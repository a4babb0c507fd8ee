package local

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Port claims across roots. Each root's port index keeps its own Agents
// apart, and portFree sees a port another process listens on; neither sees
// a port that a driver on another root (a second installation, tests side
// by side) has just given a gateway that is still starting and not yet
// listening (a real gateway takes 20-80 s to open its port). So every
// driver on the machine also claims its ports in one shared directory
// (Options.PortClaimDir): a file per port naming the Agent directory that
// holds it. A claim whose Agent no longer has that port in its run.json
// (deleted, moved to another port) is stale and can be taken over. When the
// directory cannot be used, claims are skipped (the old behaviour).

// claimsLock serializes claim changes across processes.
const claimsLock = ".lock"

// DefaultPortClaimDir is the machine-wide claim directory.
func DefaultPortClaimDir() string { return filepath.Join(os.TempDir(), "occ-local-ports") }

// claimPort claims port for the Agent directory dir, or reports that a
// live claim of another Agent holds it.
func (d *Driver) claimPort(port int, dir string) bool {
	unlock, ok := d.lockClaims()
	if !ok {
		return true
	}
	defer unlock()
	path := filepath.Join(d.claimDir, strconv.Itoa(port))
	if b, err := os.ReadFile(path); err == nil {
		owner := strings.TrimSpace(string(b))
		if owner != dir && holdsPort(owner, port) {
			return false
		}
	}
	if err := writeFileAtomic(path, []byte(dir+"\n")); err != nil {
		d.log.Warn("cannot record a port claim; going on without it", "port", port, "error", err)
	}
	return true
}

// releaseClaim drops the Agent directory's claim on port, if it has it.
func (d *Driver) releaseClaim(port int, dir string) {
	if port == 0 {
		return
	}
	unlock, ok := d.lockClaims()
	if !ok {
		return
	}
	defer unlock()
	path := filepath.Join(d.claimDir, strconv.Itoa(port))
	if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) == dir {
		_ = os.Remove(path)
	}
}

// lockClaims takes the claim directory's lock; ok false means claims are
// not in use (no directory configured, or it cannot be made).
func (d *Driver) lockClaims() (unlock func(), ok bool) {
	if d.claimDir == "" {
		return nil, false
	}
	if err := os.MkdirAll(d.claimDir, 0o700); err != nil {
		return nil, false
	}
	f, err := os.OpenFile(filepath.Join(d.claimDir, claimsLock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false
	}
	if err := flock(f); err != nil {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}

// holdsPort reports whether the Agent directory's run.json still has port
// (an unreadable one counts as holding it: better a port skipped than
// given twice).
func holdsPort(dir string, port int) bool {
	b, err := os.ReadFile(filepath.Join(dir, runFile))
	if os.IsNotExist(err) {
		return false
	}
	if err != nil {
		return true
	}
	var st struct {
		Port int `json:"port"`
	}
	if json.Unmarshal(b, &st) != nil {
		return true
	}
	return st.Port == port
}
