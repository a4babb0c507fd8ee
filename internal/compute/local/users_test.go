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
	d1, ag := readyOn(t, root)
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
