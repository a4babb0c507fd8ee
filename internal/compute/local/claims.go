package local

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Claims across roots. Each root keeps its own Agents apart (the port
// index, the run.json files), and portFree sees a port another process
// listens on; neither sees a port that a driver on another root (a second
// installation, tests side by side) has just given a gateway that is still
// starting and not yet listening (a real gateway takes 20-80 s to open its
// port), nor a gateway user another root gave an Agent whose gateway does
// not run. So every driver on the machine also claims its gateways' ports
// and users in one shared directory (Options.PortClaimDir): a file per port
// ("20000") or user ("uid-2000000000") naming the Agent directory that
// holds it. A claim whose Agent no longer has that port or user in its
// run.json (deleted, moved) is stale and can be taken over. When the
// directory cannot be used, claims are skipped (the old behaviour).

// claimsLock serializes claim changes across processes.
const claimsLock = ".lock"

// DefaultPortClaimDir is the machine-wide claim directory (ports and
// gateway users).
func DefaultPortClaimDir() string { return filepath.Join(os.TempDir(), "occ-local-ports") }

// A claimable is what can be claimed: its file name in the claim directory
// and whether an Agent's run.json holds it.
type claimable struct {
	name  string
	holds func(st runState) bool
}

func portClaim(port int) claimable {
	return claimable{strconv.Itoa(port), func(st runState) bool { return st.Port == port }}
}

func uidClaim(uid uint32) claimable {
	return claimable{"uid-" + strconv.FormatUint(uint64(uid), 10), func(st runState) bool { return st.UID == uid || st.HarnessUID == uid }}
}

// claim claims c for the Agent directory dir, or reports that a live claim
// of another Agent holds it.
func (d *Driver) claim(c claimable, dir string) bool {
	unlock, ok := d.lockClaims()
	if !ok {
		return true
	}
	defer unlock()
	path := filepath.Join(d.claimDir, c.name)
	if b, err := os.ReadFile(path); err == nil {
		owner := strings.TrimSpace(string(b))
		if owner != dir && holds(owner, c) {
			return false
		}
	}
	if err := writeFileAtomic(path, []byte(dir+"\n")); err != nil {
		d.log.Warn("cannot record a claim; going on without it", "claim", c.name, "error", err)
	}
	return true
}

// release drops the Agent directory's claim on c, if it has it.
func (d *Driver) release(c claimable, dir string) {
	unlock, ok := d.lockClaims()
	if !ok {
		return
	}
	defer unlock()
	path := filepath.Join(d.claimDir, c.name)
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

// holds reports whether the Agent directory's run.json still holds c (an
// unreadable one counts as holding it: better a port or user skipped than
// given twice).
func holds(dir string, c claimable) bool {
	b, err := os.ReadFile(filepath.Join(dir, runFile))
	if os.IsNotExist(err) {
		return false
	}
	if err != nil {
		return true
	}
	var st runState
	if json.Unmarshal(b, &st) != nil {
		return true
	}
	return c.holds(st)
}

// releaseClaims drops the claims of a deleted Agent (port, gateway user
// and harness user).
func (d *Driver) releaseClaims(dir string, st *runState) {
	if st.Port != 0 {
		d.release(portClaim(st.Port), dir)
	}
	for _, uid := range []uint32{st.UID, st.HarnessUID} {
		if uid != 0 {
			d.release(uidClaim(uid), dir)
		}
	}
}
