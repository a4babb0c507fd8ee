package local

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
// A dedicated Agent's harness runs as a second user of its own from the
// same range (HarnessUID, claimed and kept the same way;
// harnessCredential): harness/ is that user's (0700), its only
// supplementary group is the gateway's (to pass through the Agent
// directory), and the gateway's user cannot enter harness/.
//
// Not root, occ cannot run a process as another user: gateways and
// harnesses run as occ's user, as before, and the layout is 0700/0600
// throughout (the gateway process could then read the harness's login:
// only the gateway's environment and document are kept free of it).

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
