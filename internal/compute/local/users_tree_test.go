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

	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
)

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
	d, ag := gatewayWithChild(t, "env -i /bin/sleep 600")
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

// TestAdoptClaimsUsersAgain: the claim directory emptied (a reboot), a
// driver on another root gives its Agent the user of a stopped Agent of
// this root; when this root's driver starts again (Adopt), its Agent gets a
// new user and its tree at once, so no file of it stays with the other
// root's gateway. Not root, there are no users to claim: both run as
// occ's user.
func TestAdoptClaimsUsersAgain(t *testing.T) {
	claims := t.TempDir()
	root := gatewaytest.ReachableDir(t)
	d1, _ := open(t, root, func(o *local.Options) { o.PortClaimDir = claims })
	a := newAgent(t, d1)
	ready(t, d1, newSpec(a, 1))
	uid := gatewayUID(t, d1, a)
	if err := d1.StopAgent(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	d1.Close()
	if err := os.RemoveAll(claims); err != nil {
		t.Fatal(err)
	}

	n, _ := strconv.ParseUint(uid, 10, 32)
	other, _ := open(t, "", func(o *local.Options) {
		o.PortClaimDir, o.UIDRange = claims, local.UIDRange{First: uint32(n), Last: uint32(n)}
	})
	b := newAgent(t, other)
	ready(t, other, newSpec(b, 1))
	if got := gatewayUID(t, other, b); got != uid && os.Geteuid() == 0 {
		t.Fatalf("the other root's gateway runs as %s; want %s, the only user of its range", got, uid)
	}

	d2, _ := open(t, root, func(o *local.Options) { o.PortClaimDir = claims })
	if err := d2.Adopt(context.Background()); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		return
	}
	if owner := ownerOf(t, filepath.Join(d2.AgentDir(a), "workspace")); strconv.Itoa(owner) == uid {
		t.Fatalf("after Adopt the Agent's workspace is still owned by %s, the other root's gateway user", uid)
	}
	ready(t, d2, newSpec(a, 2))
	if got := gatewayUID(t, d2, a); got == uid {
		t.Fatalf("the Agent's gateway runs as %s, the other root's gateway user", got)
	}
}
