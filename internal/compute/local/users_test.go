package local_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
)

// probeCommand runs, as the gateway (same user, same environment), the
// file probes listed in OCC_TEST_PROBE ("r:PATH" reads, "w:PATH" opens for
// appending, creating a missing file, and writes nothing)
// and prints one line per probe to the console ("probe r:PATH ok" or
// "probe r:PATH denied"), then becomes the fake gateway.
func probeCommand(port int) ([]string, error) {
	script := `for p in $OCC_TEST_PROBE; do
  f=${p#*:}
  case $p in
    r:*) if cat "$f" >/dev/null 2>&1; then echo "probe $p ok"; else echo "probe $p denied"; fi;;
    w:*) if (: >>"$f") 2>/dev/null; then echo "probe $p ok"; else echo "probe $p denied"; fi;;
  esac
done
exec "$0" gateway run --port "$1"`
	return []string{"/bin/sh", "-c", script, fakeGateway, strconv.Itoa(port)}, nil
}

// probes returns the probe lines of the Agent's console.
func probes(t *testing.T, d *local.Driver, ag compute.AgentRef) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.AgentDir(ag), "console.log"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "probe" {
			out[f[1]] = f[2]
		}
	}
	return out
}

// ids is what /proc/<pid>/status says of a process's user and groups.
type ids struct {
	uids, gids [4]string // real, effective, saved, filesystem
	groups     string
}

func procIDs(t *testing.T, pid int) ids {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	var id ids
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(l, ":")
		f := strings.Fields(v)
		switch {
		case k == "Uid" && len(f) == 4:
			copy(id.uids[:], f)
		case k == "Gid" && len(f) == 4:
			copy(id.gids[:], f)
		case k == "Groups":
			id.groups = strings.Join(f, " ")
		}
	}
	return id
}

// TestGatewayRunsAsItsOwnUser: occ running as root (CI) runs each Agent's
// gateway as a user and group of its own, never root, with no
// supplementary groups: the gateway writes its own tree (workspace, state,
// home), reads its openclaw.json but cannot change it, and cannot read
// occ's database, keyset or port index, nor another Agent's files. Not
// root, there is no other user to run it as: the gateway runs as occ's
// user.
func TestGatewayRunsAsItsOwnUser(t *testing.T) {
	dataDir := gatewaytest.ReachableDir(t)
	for _, f := range []string{"occ.db", "secrets.keyset"} {
		if err := os.WriteFile(filepath.Join(dataDir, f), []byte("private\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d, _ := open(t, filepath.Join(dataDir, "compute"), func(o *local.Options) { o.Command = probeCommand })
	ag1, ag2 := newAgent(t, d), newAgent(t, d)
	spec1 := newSpec(ag1, 1)
	spec1.InitialFiles = map[string]string{"USER.md": "initial\n"}
	ready(t, d, spec1)

	dir1, dir2 := d.AgentDir(ag1), d.AgentDir(ag2)
	spec2 := newSpec(ag2, 1)
	own := []string{"w:" + dir2 + "/workspace/NOTES.md", "w:" + dir2 + "/state/probe", "w:" + dir2 + "/home/probe", "r:" + dir2 + "/openclaw.json"}
	occs := []string{"w:" + dir2 + "/openclaw.json", "w:" + dir2 + "/run.json", "r:" + dir2 + "/token",
		"r:" + dataDir + "/occ.db", "r:" + dataDir + "/secrets.keyset", "r:" + d.Root() + "/ports.json",
		"r:" + dir1 + "/openclaw.json", "r:" + dir1 + "/workspace/USER.md", "w:" + dir1 + "/workspace/NOTES.md"}
	spec2.Env = map[string]string{"OCC_TEST_PROBE": strings.Join(append(own, occs...), " ")}
	ready(t, d, spec2)

	id1, id2 := procIDs(t, onlyPID(t, d, ag1)), procIDs(t, onlyPID(t, d, ag2))
	got := probes(t, d, ag2)
	for _, p := range own {
		if got[p] != "ok" {
			t.Errorf("gateway probe %s: %q; want ok (its own tree)", p, got[p])
		}
	}
	if os.Geteuid() != 0 {
		me := strconv.Itoa(os.Getuid())
		if id2.uids != [4]string{me, me, me, me} {
			t.Fatalf("gateway uids %v; want occ's own %s (occ is not root)", id2.uids, me)
		}
		return
	}
	for _, p := range occs {
		if got[p] != "denied" {
			t.Errorf("gateway probe %s: %q; want denied", p, got[p])
		}
	}
	for _, id := range []ids{id1, id2} {
		u, g := id.uids[0], id.gids[0]
		if u == "0" || g == "0" || id.uids != [4]string{u, u, u, u} || id.gids != [4]string{g, g, g, g} || id.groups != "" {
			t.Fatalf("gateway ids %+v; want one user and group, not root, no supplementary groups", id)
		}
	}
	if id1.uids[0] == id2.uids[0] || id1.gids[0] == id2.gids[0] {
		t.Fatalf("two Agents' gateways run as %s:%s and %s:%s; want a user and group each", id1.uids[0], id1.gids[0], id2.uids[0], id2.gids[0])
	}
}

// gatewayUID is the user the Agent's only gateway process runs as.
func gatewayUID(t *testing.T, d *local.Driver, ag compute.AgentRef) string {
	t.Helper()
	return procIDs(t, onlyPID(t, d, ag)).uids[0]
}

// TestGatewayUserIsKept: an Agent's gateway runs as the same user across a
// stop, a new revision, a reopened driver and the restart of a re-adopted
// gateway; a deleted Agent's user is not given to the next Agent at once.
// Not root, every gateway runs as occ's user.
func TestGatewayUserIsKept(t *testing.T) {
	root := gatewaytest.ReachableDir(t)
	d1, _ := open(t, root)
	ag := newAgent(t, d1)
	ready(t, d1, newSpec(ag, 1))
	uid := gatewayUID(t, d1, ag)
	if want := strconv.Itoa(os.Getuid()); (os.Geteuid() == 0) == (uid == want) {
		t.Fatalf("gateway user %s (occ's is %s, root %v)", uid, want, os.Geteuid() == 0)
	}
	if err := d1.StopAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	ready(t, d1, newSpec(ag, 2))
	if got := gatewayUID(t, d1, ag); got != uid {
		t.Fatalf("gateway user %s after a stop and a new revision; was %s", got, uid)
	}
	d1.Close()

	d2, _ := open(t, root)
	if err := d2.Adopt(context.Background()); err != nil {
		t.Fatal(err)
	}
	pid := onlyPID(t, d2, ag)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, "restarted", func() bool {
		pids := gatewayPIDs(d2, ag)
		return len(pids) == 1 && pids[0] != pid
	})
	if got := gatewayUID(t, d2, ag); got != uid {
		t.Fatalf("gateway user %s after re-adoption and a restart; was %s", got, uid)
	}
	ready(t, d2, newSpec(ag, 3))
	if got := gatewayUID(t, d2, ag); got != uid {
		t.Fatalf("gateway user %s after a new revision on a reopened driver; was %s", got, uid)
	}

	if err := d2.DeleteAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	next := newAgent(t, d2)
	ready(t, d2, newSpec(next, 1))
	if got := gatewayUID(t, d2, next); os.Geteuid() == 0 && got == uid {
		t.Fatalf("the next Agent got the deleted Agent's user %s at once", got)
	}
}

// TestOpenRefusesUnusableUsers: as root, Open refuses a range that starts
// at 0, a range that holds a user of this machine, and a root that other
// users cannot pass through to; each refusal says what to change. Not
// root, gateways run as occ's user and none of that matters: Open opens.
func TestOpenRefusesUnusableUsers(t *testing.T) {
	user, id := machineUser(t)
	closed := t.TempDir()
	if err := os.Chmod(closed, 0o700); err != nil { // nobody else passes
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, root string
		uids       local.UIDRange
		want       string
	}{
		{"range from 0", gatewaytest.ReachableDir(t), local.UIDRange{First: 0, Last: 10}, "must be FIRST-LAST with 0 < FIRST <= LAST"},
		{"a machine user", gatewaytest.ReachableDir(t), local.UIDRange{First: id, Last: id}, "holds the user " + user},
		{"a closed directory above", filepath.Join(closed, "compute"), testUIDs, "chmod o+x " + closed},
	} {
		d, err := local.Open(local.Options{Root: c.root, Command: local.BinaryCommand(fakeGateway), UIDRange: c.uids})
		if os.Geteuid() != 0 {
			if err != nil {
				t.Fatalf("%s: Open (not root) = %v; want it open", c.name, err)
			}
			d.Close()
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: Open = %v; want an error saying %q", c.name, err, c.want)
		}
	}
}

// machineUser is a user of /etc/passwd other than root.
func machineUser(t *testing.T) (string, uint32) {
	t.Helper()
	b, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Split(l, ":")
		if len(f) > 2 && f[2] != "0" {
			if n, err := strconv.ParseUint(f[2], 10, 32); err == nil {
				return f[0], uint32(n)
			}
		}
	}
	t.Fatal("/etc/passwd has no user but root")
	return "", 0
}

func TestMappedUserNamespace(t *testing.T) {
	r := local.UIDRange{First: 100, Last: 200}
	for _, c := range []struct {
		idMap string
		want  bool
	}{
		{"0 0 4294967295\n", true},                                // the initial namespace
		{"0 1000 1\n1 100000 65536\n", true},                      // rootless: 0 and 1-65536
		{"         0          0        150\n150 5000 51\n", true}, // two pieces, joined
		{"0 0 150\n151 5000 100\n", false},                        // a hole at 150
		{"0 1000 1\n1 100000 150\n", false},                       // ends at 150
		{"", false},
	} {
		if got := local.Mapped(r, c.idMap); got != c.want {
			t.Errorf("mapped(%v, %q) = %v; want %v", r, c.idMap, got, c.want)
		}
	}
}

// TestNewRangeHandsTreeOver: reopened with a range that no longer holds
// the Agent's user, the driver gives the Agent a new user and hands its
// tree over; a link planted in the tree to someone else's file never
// gives the gateway that file. Not root, nothing changes hands: the
// gateway runs as occ's user.
func TestNewRangeHandsTreeOver(t *testing.T) {
	dataDir := gatewaytest.ReachableDir(t)
	root := filepath.Join(dataDir, "compute")
	secret := filepath.Join(dataDir, "occ.db")
	if err := os.WriteFile(secret, []byte("private\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d1, _ := open(t, root)
	ag := newAgent(t, d1)
	spec := newSpec(ag, 1)
	spec.InitialFiles = map[string]string{"USER.md": "initial\n"}
	ready(t, d1, spec)
	uid1 := gatewayUID(t, d1, ag)
	state := filepath.Join(d1.AgentDir(ag), "state")
	if err := os.Symlink(secret, filepath.Join(state, "soft")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(secret, filepath.Join(state, "hard")); err != nil {
		t.Fatal(err)
	}
	n1, _ := strconv.Atoi(uid1)
	_ = os.Lchown(filepath.Join(state, "soft"), n1, n1) // planted by the gateway
	d1.Close()

	other := local.UIDRange{First: testUIDs.Last + 1, Last: testUIDs.Last + 1000}
	d2, _ := open(t, root, func(o *local.Options) { o.UIDRange = other })
	ready(t, d2, newSpec(ag, 2))
	uid2 := gatewayUID(t, d2, ag)
	n2, _ := strconv.Atoi(uid2)
	if os.Geteuid() != 0 {
		if uid2 != uid1 {
			t.Fatalf("gateway user %s, then %s; want occ's own", uid1, uid2)
		}
		return
	}
	if !other.Contains(uint32(n2)) {
		t.Fatalf("gateway user %s after a new range %v", uid2, other)
	}
	for _, name := range []string{"state", "state/soft", "workspace", "workspace/USER.md", "home", "logs"} {
		if owner := ownerOf(t, filepath.Join(d2.AgentDir(ag), name)); owner != n2 {
			t.Errorf("%s owned by %d; want the new gateway user %d", name, owner, n2)
		}
	}
	if owner := ownerOf(t, secret); owner != 0 {
		t.Fatalf("the file a planted link names is owned by %d; want root's still", owner)
	}
}

func ownerOf(t *testing.T, path string) int {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return int(st.Uid)
}

// TestStopEndsProcessesOfTheAgentsUser: a process the gateway left behind
// with an environment of its own, outliving the stop, is stopped with the
// Agent when occ is root, since it runs as the Agent's user. Not root such
// a process cannot be told from any other of occ's user, and it survives.
func TestStopEndsProcessesOfTheAgentsUser(t *testing.T) {
	d, _ := open(t, "", func(o *local.Options) {
		o.Command = func(port int) ([]string, error) {
			return []string{"/bin/sh", "-c", "env -i /bin/sleep 600 & exec " + fakeGateway + " gateway run --port " + strconv.Itoa(port)}, nil
		}
	})
	ag := newAgent(t, d)
	ready(t, d, newSpec(ag, 1))
	gw := onlyPID(t, d, ag)
	var child int
	eventually(t, "the child running", func() bool { child = childOf(gw); return child != 0 })
	if err := d.StopAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	_, err := os.Stat(fmt.Sprintf("/proc/%d", child))
	if os.Geteuid() != 0 {
		if err != nil {
			t.Fatalf("the child %d was stopped (not root)", child)
		}
		syscall.Kill(child, syscall.SIGKILL)
		return
	}
	if err == nil {
		state, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child))
		if f := strings.Fields(string(state)); len(f) > 2 && f[2] != "Z" {
			t.Fatalf("the Agent's process %d outlived StopAgent", child)
		}
	}
}

// childOf is a live child of pid, or 0.
func childOf(pid int) int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) && f[0] != "Z" {
			n, _ := strconv.Atoi(filepath.Base(filepath.Dir(s)))
			return n
		}
	}
	return 0
}
