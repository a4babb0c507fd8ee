package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Gateway users. A gateway that occ running as root started as itself
// would be root too: it could read the database, the secrets keyset and
// every other Agent's tree. So when occ runs as root (SeparateUsers), each
// Agent's gateway runs as a user of its own: one ID of Options.UIDRange,
// the same number for its user and its only group, no supplementary
// groups, no /etc/passwd entry needed. The ID is recorded in run.json (UID)
// and claimed machine-wide (claims.go), and kept while the Agent exists; a
// new one is given only when its claim was taken or the range no longer
// holds it, and the Agent's tree is then handed over to it. An ID is given
// round-robin from the last one given (uids.json), never one that another
// Agent under the root holds or another root claims, nor one that any
// process runs as.
//
// What the gateway's user may touch: its own state/, workspace/, home/ and
// logs/ (owned by it, 0700), its openclaw.json (root:its group, 0640: read,
// never changed), and the Agent directory itself (root:its group, 0710: it
// passes through, cannot list it or create anything in it). run.json,
// token, lock and the console logs stay occ's (0600): the gateway gets its
// token in its environment and its console as an open file. The directories
// above (the root, namespaces/, <ns>/, agents/) are 0711, so gateways pass
// through them without listing them, and so must every directory above the
// root be (the data directory is made so by occ serve; Open refuses a root
// whose ancestors let no other user through). Everything else in the data
// directory is occ's own, 0600 or 0700.
//
// Not root, occ cannot run a process as another user: gateways run as
// occ's user, as before, and the layout is 0700/0600 throughout.

// UIDRange is a range of user and group IDs, First to Last inclusive.
type UIDRange struct{ First, Last uint32 }

// String is "First-Last".
func (r UIDRange) String() string { return fmt.Sprintf("%d-%d", r.First, r.Last) }

// Contains reports whether id lies in the range.
func (r UIDRange) Contains(id uint32) bool { return id >= r.First && id <= r.Last }

// SeparateUsers reports whether the gateways this process starts run as
// users of their own: it runs as root.
func SeparateUsers() bool { return os.Geteuid() == 0 }

// Modes of the directories on the way to an Agent's tree, and of the
// Agent directory and openclaw.json when gateways run as users of their own.
const (
	passDirMode  = 0o711 // others pass through, cannot list
	agentDirMode = 0o710 // root and the gateway's group pass through
	sharedMode   = 0o640 // root writes, the gateway's group reads
)

// dirMode is the mode of the directories above the Agent directories.
func (d *Driver) dirMode() os.FileMode {
	if d.separate {
		return passDirMode
	}
	return 0o700
}

// gatewayDirs are the Agent's tree that its gateway writes.
var gatewayDirs = []string{stateDir, workspace, homeDir, logsDir}

// checkUsers refuses a range that cannot give gateways users of their own,
// and a root that those users cannot reach.
func (d *Driver) checkUsers() error {
	r := d.uids
	if r.First == 0 || r.Last < r.First {
		return fmt.Errorf("gateways run as users of their own when occ runs as root: the user range %s must be FIRST-LAST with 0 < FIRST <= LAST", r)
	}
	for _, m := range []struct{ file, kind string }{{"/proc/self/uid_map", "user"}, {"/proc/self/gid_map", "group"}} {
		if b, err := os.ReadFile(m.file); err == nil && !mapped(r, string(b)) {
			return fmt.Errorf("the gateway user range %s is not wholly mapped in this process's user namespace (%s); choose a range it maps", r, m.file)
		}
	}
	for _, m := range []struct{ file, kind string }{{"/etc/passwd", "user"}, {"/etc/group", "group"}} {
		if name, id, ok := takenID(r, m.file); ok {
			return fmt.Errorf("the gateway user range %s holds the %s %s (%d) of this machine (%s); choose a range no user or group has", r, m.kind, name, id, m.file)
		}
	}
	if err := os.Chmod(d.root, passDirMode); err != nil {
		return fmt.Errorf("local compute root: %w", err)
	}
	return passable(d.root)
}

// mapped reports whether a /proc/<pid>/uid_map text ("inside outside
// count" lines) maps every ID of r.
func mapped(r UIDRange, idMap string) bool {
	next := uint64(r.First)
	for progress := true; progress && next <= uint64(r.Last); {
		progress = false
		for _, l := range strings.Split(idMap, "\n") {
			f := strings.Fields(l)
			if len(f) != 3 {
				continue
			}
			in, err1 := strconv.ParseUint(f[0], 10, 32)
			n, err2 := strconv.ParseUint(f[2], 10, 32)
			if err1 == nil && err2 == nil && next >= in && next < in+n {
				next, progress = in+n, true
			}
		}
	}
	return next > uint64(r.Last)
}

// takenID finds an entry of a passwd or group file whose ID lies in r.
func takenID(r UIDRange, file string) (name string, id uint32, ok bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Split(l, ":")
		if len(f) < 3 {
			continue
		}
		if n, err := strconv.ParseUint(f[2], 10, 32); err == nil && r.Contains(uint32(n)) {
			return f[0], uint32(n), true
		}
	}
	return "", 0, false
}

// passable checks that users without any rights of their own may pass
// through every directory above path (search permission for others), as
// written and with symbolic links resolved.
func passable(path string) error {
	paths := []string{path}
	if real, err := filepath.EvalSymlinks(path); err == nil && real != path {
		paths = append(paths, real)
	}
	for _, p := range paths {
		for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
			fi, err := os.Stat(dir)
			if err != nil {
				return err
			}
			if fi.Mode().Perm()&0o001 == 0 {
				return fmt.Errorf("gateways run as users of their own and must pass through %s to reach %s, but its mode %04o lets no other user through: make it searchable by others (chmod o+x %s) or keep occ's data elsewhere", dir, path, fi.Mode().Perm(), dir)
			}
			if dir == filepath.Dir(dir) {
				break
			}
		}
	}
	return nil
}

// othersCanRun checks that a gateway's user can run program: every
// directory above it passable and the file executable by others.
func othersCanRun(program string) error {
	if err := passable(program); err != nil {
		return fmt.Errorf("the gateway program %s: %w", program, err)
	}
	fi, err := os.Stat(program)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o001 == 0 {
		return fmt.Errorf("the gateway program %s is mode %04o: gateways run as users of their own and need it executable by others (chmod o+x)", program, fi.Mode().Perm())
	}
	return nil
}

// gatewayCredential returns the user to start the Agent's gateway as, or
// nil when gateways run as occ's user. The Agent gets its user on its
// first start (or again when its claim was taken or the range no longer
// holds it), and its tree is handed over to that user.
func (d *Driver) gatewayCredential(a *agent, st *runState) (*syscall.Credential, error) {
	if !d.separate {
		return nil, nil
	}
	if st.UID == 0 || !d.uids.Contains(st.UID) || !d.claim(uidClaim(st.UID), a.dir) {
		prev := st.UID
		if err := d.allocateUID(a, st); err != nil {
			return nil, err
		}
		d.log.Info("gateway user given", "namespace", a.ref.NamespaceID, "agent", a.ref.AgentID, "uid", st.UID, "previous", prev)
	}
	if err := d.prepareTree(a, st); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: st.UID, Gid: st.UID, Groups: []uint32{}}, nil
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

// allocateUID gives the Agent a user ID, round-robin from the last one
// given, and records it in run.json before claiming it, under the root's
// allocation lock.
func (d *Driver) allocateUID(a *agent, st *runState) error {
	unlock, err := d.lockPorts()
	if err != nil {
		return err
	}
	defer unlock()
	used := map[uint32]bool{}
	d.scanRuns(func(dir string, other runState) {
		if dir != a.dir && other.UID != 0 {
			used[other.UID] = true
		}
	})
	running := processesByUser()
	prev := st.UID
	size := uint64(d.uids.Last) - uint64(d.uids.First) + 1
	next := d.readCursor(size)
	for i := uint64(0); i < size; i++ {
		off := (next + i) % size
		uid := uint32(uint64(d.uids.First) + off)
		if used[uid] || len(running[uid]) > 0 {
			continue
		}
		st.UID = uid
		if err := writeRun(a.dir, st); err != nil {
			return err
		}
		if !d.claim(uidClaim(uid), a.dir) {
			continue
		}
		b, _ := json.Marshal(map[string]uint64{"next": (off + 1) % size})
		return writeFileAtomic(filepath.Join(d.root, uidsCursor), append(b, '\n'))
	}
	st.UID = prev
	if err := writeRun(a.dir, st); err != nil {
		return err
	}
	return fmt.Errorf("no free gateway user in %s (%d Agents hold one)", d.uids, len(used))
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
