package local_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/occ"
)

// owner is the user and mode of a file, not following a link.
func owner(t *testing.T, path string) (uint32, os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Uid, fi.Mode().Perm()
}

// TestDedicatedCodexHarnessRunsAsItsOwnUser: occ running as root runs a
// dedicated Agent's harness (every Codex command: login, probe,
// app-server) as a second user of the Agent, not its gateway's: the
// harness's home and Codex login are that user's (0700, auth.json 0600)
// and the gateway's user can neither read the login nor write there. The
// harness user is kept across a stop and a new revision, and its claim is
// dropped when the Agent is deleted. Not root, there is no other user:
// the harness runs as occ's user, like the gateway, and its login is only
// kept 0600 under a 0700 home (docs/CODEX.md).
func TestDedicatedCodexHarnessRunsAsItsOwnUser(t *testing.T) {
	claims := t.TempDir()
	d, _ := openDedicated(t, func(o *local.Options) { o.Command, o.PortClaimDir = probeCommand, claims })
	ag := newAgent(t, d)
	dir := d.AgentDir(ag)
	home := filepath.Join(dir, "harness", "codex")
	spec := dedicatedSpec(ag, 1, map[string]string{"OPENAI_API_KEY": "sk-" + canary(t)})
	harnessProbes := []string{"r:" + home + "/auth.json", "w:" + home + "/planted", "w:" + dir + "/harness/planted", "r:" + dir + "/harness.log"}
	spec.Env = map[string]string{"OCC_TEST_PROBE": strings.Join(append(harnessProbes, "w:"+dir+"/state/probe"), " ")}
	ready(t, d, spec)

	hp := harnessPIDs(d, ag)
	if len(hp) != 1 {
		t.Fatalf("harness processes %v, want one", hp)
	}
	hid, gid := procIDs(t, hp[0]), procIDs(t, onlyPID(t, d, ag))
	authUID, authMode := owner(t, filepath.Join(home, "auth.json"))
	got := probes(t, d, ag)
	if got["w:"+dir+"/state/probe"] != "ok" {
		t.Fatalf("the gateway could not write its own state: %v", got)
	}
	if os.Geteuid() != 0 {
		me := strconv.Itoa(os.Getuid())
		if hid.uids != [4]string{me, me, me, me} {
			t.Fatalf("harness uids %v; want occ's own %s (occ is not root)", hid.uids, me)
		}
		if _, m := owner(t, home); m != 0o700 || authMode != 0o600 {
			t.Fatalf("Codex home %04o, auth.json %04o; want 0700 and 0600", m, authMode)
		}
		return
	}

	h, g := hid.uids[0], gid.uids[0]
	if h == "0" || h == g || hid.uids != [4]string{h, h, h, h} || hid.gids != [4]string{h, h, h, h} || hid.groups != g {
		t.Fatalf("harness ids %+v, gateway user %s; want a user and group of its own, not root, not the gateway's, with the gateway's group only to pass through the Agent directory", hid, g)
	}
	for _, p := range []string{filepath.Join(dir, "harness"), home} {
		if u, m := owner(t, p); strconv.Itoa(int(u)) != h || m != 0o700 {
			t.Fatalf("%s is %d %04o; want the harness user %s, 0700", p, u, m, h)
		}
	}
	if strconv.Itoa(int(authUID)) != h || authMode != 0o600 {
		t.Fatalf("auth.json is %d %04o; want the harness user %s, 0600", authUID, authMode, h)
	}
	for _, p := range harnessProbes {
		if got[p] != "denied" {
			t.Errorf("gateway probe %s: %q; want denied (the harness's files)", p, got[p])
		}
	}
	if _, err := os.Stat(filepath.Join(claims, "uid-"+h)); err != nil {
		t.Fatalf("the harness user is not claimed: %v", err)
	}

	// Kept across a stop and a new revision.
	if err := d.StopAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	ready(t, d, dedicatedSpec(ag, 2, map[string]string{"OPENAI_API_KEY": "sk-" + canary(t)}))
	if again := procIDs(t, harnessPIDs(d, ag)[0]).uids[0]; again != h {
		t.Fatalf("harness user %s after a stop and a new revision; was %s", again, h)
	}

	// Deleted: no process of either user is left, and both claims are
	// dropped.
	if err := d.DeleteAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	if p := append(gatewayPIDs(d, ag), harnessPIDs(d, ag)...); len(p) != 0 {
		t.Fatalf("processes %v after DeleteAgent", p)
	}
	for _, u := range []string{h, g} {
		if _, err := os.Stat(filepath.Join(claims, "uid-"+u)); !os.IsNotExist(err) {
			t.Errorf("claim of user %s after DeleteAgent: %v; want it dropped", u, err)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("Agent directory after DeleteAgent: %v", err)
	}
}

// TestDedicatedCodexEmbeddedAgentGetsNoHarnessUser: an embedded Agent's
// run.json names no harness user (only dedicated revisions take one).
func TestDedicatedCodexEmbeddedAgentGetsNoHarnessUser(t *testing.T) {
	d, _ := openDedicated(t)
	ag := newAgent(t, d)
	spec := newSpec(ag, 1)
	spec.ExecutionMode = occ.ExecutionEmbedded
	ready(t, d, spec)
	b, err := os.ReadFile(filepath.Join(d.AgentDir(ag), "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "harnessUid") {
		t.Fatalf("an embedded Agent's run.json names a harness user: %s", b)
	}
}
