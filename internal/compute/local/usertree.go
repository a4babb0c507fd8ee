package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Giving an Agent its gateway user and its tree (see users.go).

// gatewayCredential returns the user to start the Agent's gateway as, or
// nil when gateways run as occ's user. The Agent gets its user on its
// first start (or again when its claim was taken or the range no longer
// holds it), and its tree is handed over to that user.
func (d *Driver) gatewayCredential(a *agent, st *runState) (*syscall.Credential, error) {
	if !d.separate {
		return nil, nil
	}
	if err := d.ensureUID(a, st, &st.UID, "gateway"); err != nil {
		return nil, err
	}
	if err := d.prepareTree(a, st); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: st.UID, Gid: st.UID, Groups: []uint32{}}, nil
}

// harnessCredential returns the user to run the Agent's harness (every
// Codex command) as, or nil when occ is not root: a user of its own (st.
// HarnessUID), never the gateway's, whose primary group it is too, with
// the gateway's group as its only supplementary group so that it passes
// through the Agent directory (root:G 0710) and may read openclaw.json
// (which never holds a secret) and nothing else of the gateway's. harness/
// is its own (0700): the gateway's user cannot enter it, so it cannot read
// the Codex login there.
func (d *Driver) harnessCredential(a *agent, st *runState) (*syscall.Credential, error) {
	g, err := d.gatewayCredential(a, st)
	if g == nil || err != nil {
		return nil, err
	}
	if err := d.ensureUID(a, st, &st.HarnessUID, "harness"); err != nil {
		return nil, err
	}
	h := st.HarnessUID
	path := filepath.Join(a.dir, harnessDir)
	if st.HarnessTreeUID != h {
		// Handed over from its previous user, or from the gateway's user
		// (harness/ was the gateway's before harnesses had a user of their
		// own).
		for _, from := range []uint32{st.HarnessTreeUID, st.UID} {
			if err := chownTree(path, from, h); err != nil {
				return nil, fmt.Errorf("hand the Agent's harness over to its user: %w", err)
			}
		}
	}
	for _, dir := range []string{path, filepath.Join(path, codexHome)} {
		if err := os.Lchown(dir, int(h), int(h)); err != nil {
			return nil, fmt.Errorf("agent directory: %w", err)
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			return nil, fmt.Errorf("agent directory: %w", err)
		}
	}
	if st.HarnessTreeUID != h {
		st.HarnessTreeUID = h
		if err := writeRun(a.dir, st); err != nil {
			return nil, err
		}
	}
	return &syscall.Credential{Uid: h, Gid: h, Groups: []uint32{g.Gid}}, nil
}

// ensureUID gives the Agent the user *id (its gateway's or its harness's)
// unless it holds it already: claimed, in the range.
func (d *Driver) ensureUID(a *agent, st *runState, id *uint32, role string) error {
	if *id != 0 && d.uids.Contains(*id) && d.claim(uidClaim(*id), a.dir) {
		return nil
	}
	prev := *id
	if err := d.allocateUID(a, st, id); err != nil {
		return err
	}
	d.log.Info(role+" user given", "namespace", a.ref.NamespaceID, "agent", a.ref.AgentID, "uid", *id, "previous", prev)
	return nil
}

// prepareTree sets the owners and modes of the Agent's tree for its
// gateway's user (see above). What the tree holds of its previous owner
// (TreeUID: root before the first start) is handed over once; only entries
// of that owner change hands, so a link the gateway planted to a file of
// someone else never gives it that file.
func (d *Driver) prepareTree(a *agent, st *runState) error {
	for dir := filepath.Dir(a.dir); len(dir) > len(d.root); dir = filepath.Dir(dir) {
		if err := os.Chmod(dir, passDirMode); err != nil {
			return fmt.Errorf("agent directory: %w", err)
		}
	}
	if err := share(a.dir, st.UID, agentDirMode); err != nil {
		return err
	}
	for _, sub := range gatewayDirs {
		path := filepath.Join(a.dir, sub)
		if st.TreeUID != st.UID {
			if err := chownTree(path, st.TreeUID, st.UID); err != nil {
				return fmt.Errorf("hand the Agent's %s over to its gateway's user: %w", sub, err)
			}
		}
		if err := os.Lchown(path, int(st.UID), int(st.UID)); err != nil {
			return fmt.Errorf("agent directory: %w", err)
		}
		if err := os.Chmod(path, 0o700); err != nil {
			return fmt.Errorf("agent directory: %w", err)
		}
	}
	if st.TreeUID != st.UID {
		st.TreeUID = st.UID
		return writeRun(a.dir, st)
	}
	return nil
}

// share gives path to occ's user with gid as its group, at mode.
func share(path string, gid uint32, mode os.FileMode) error {
	if err := os.Chown(path, -1, int(gid)); err != nil {
		return fmt.Errorf("share %s with the gateway: %w", filepath.Base(path), err)
	}
	if err := os.Chmod(path, mode); err != nil {
		return fmt.Errorf("share %s with the gateway: %w", filepath.Base(path), err)
	}
	return nil
}

// chownTree gives every entry under root (root too) owned by from to the
// user and group to, without following symbolic links.
func chownTree(root string, from, to uint32) error {
	return filepath.WalkDir(root, func(path string, _ fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		var s syscall.Stat_t
		if err := syscall.Lstat(path, &s); err != nil {
			return err
		}
		if s.Uid != from {
			return nil
		}
		return os.Lchown(path, int(to), int(to))
	})
}

// uidsCursor is the root's file that names the offset in the range of the
// next ID to try.
const uidsCursor = "uids.json"

// allocateUID gives the Agent a user ID in *id (st.UID or st.HarnessUID),
// round-robin from the last one given, never the Agent's other one, and
// records it in run.json before claiming it, under the root's allocation
// lock.
func (d *Driver) allocateUID(a *agent, st *runState, id *uint32) error {
	unlock, err := d.lockPorts()
	if err != nil {
		return err
	}
	defer unlock()
	used := map[uint32]bool{}
	d.scanRuns(func(dir string, other runState) {
		if dir != a.dir {
			used[other.UID], used[other.HarnessUID] = true, true
		}
	})
	used[st.UID], used[st.HarnessUID] = true, true
	delete(used, 0)
	running := processesByUser()
	prev := *id
	size := uint64(d.uids.Last) - uint64(d.uids.First) + 1
	next := d.readCursor(size)
	for i := uint64(0); i < size; i++ {
		off := (next + i) % size
		uid := uint32(uint64(d.uids.First) + off)
		if used[uid] || len(running[uid]) > 0 {
			continue
		}
		*id = uid
		if err := writeRun(a.dir, st); err != nil {
			return err
		}
		if !d.claim(uidClaim(uid), a.dir) {
			continue
		}
		b, _ := json.Marshal(map[string]uint64{"next": (off + 1) % size})
		return writeFileAtomic(filepath.Join(d.root, uidsCursor), append(b, '\n'))
	}
	*id = prev
	if err := writeRun(a.dir, st); err != nil {
		return err
	}
	return fmt.Errorf("no free user for a gateway or harness in %s (%d are held)", d.uids, len(used))
}

// readCursor returns the offset to try first: the cursor, or one derived
// from the root on the first allocation (drivers on different roots rarely
// try the same IDs).
func (d *Driver) readCursor(size uint64) uint64 {
	var c struct {
		Next uint64 `json:"next"`
	}
	if b, err := os.ReadFile(filepath.Join(d.root, uidsCursor)); err == nil && json.Unmarshal(b, &c) == nil {
		return c.Next % size
	}
	h := fnv.New64a()
	h.Write([]byte(d.root))
	return h.Sum64() % size
}
