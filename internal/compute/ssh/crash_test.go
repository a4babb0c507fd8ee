package ssh_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/ssh"
	"github.com/openclaw/occ/internal/occ"
)

// crashChildEnv holds the JSON of a crashJob: set, the test binary is the
// occ that TestCrashRounds kills (crashChild runs instead of the tests).
const crashChildEnv = "OCC_TEST_SSH_CRASH_CHILD"

// crashJob is what the killed process does: the driver's options and one
// operation on one Agent, repeated until it is done.
type crashJob struct {
	Options ssh.Options
	Op      string // prepare | stop | delete | deleteNamespace
	NS      compute.NamespaceRef
	Rev     compute.RevisionRef
	Number  int64
}

// spec is the job's revision (the test's spec of it).
func (j crashJob) spec() compute.RevisionSpec {
	s := spec(j.Rev.AgentRef, j.Number)
	s.RevisionID = j.Rev.RevisionID
	return s
}

// crashChild runs a crashJob until it is done or the process is killed.
func crashChild(raw string) int {
	var j crashJob
	if err := json.Unmarshal([]byte(raw), &j); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	d, err := ssh.New(j.Options)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx := context.Background()
	for {
		var err error
		done := true
		switch j.Op {
		case "prepare":
			var r compute.Readiness
			r, err = d.PrepareRevision(ctx, j.spec())
			done = err == nil && r.Ready
		case "stop":
			err = d.StopAgent(ctx, j.Rev.AgentRef)
		case "delete":
			err = d.DeleteAgent(ctx, j.Rev.AgentRef)
		case "deleteNamespace":
			_, err = d.DeleteNamespace(ctx, j.NS)
		}
		if err == nil && done {
			return 0
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCrashRounds kills occ (a child process running one driver
// operation) with SIGKILL at a random moment, 24 rounds over prepare,
// stop, delete and Namespace delete, and checks the host after each: the
// host lock is free once the host's last script ended, every account of
// occ's prefix carries occ's mark, every unit of occ's belongs to an Agent
// occ marked, and a new occ converges (the same operation completes).
// At the end nothing of occ's is left but the state root's empty
// directories.
func TestCrashRounds(t *testing.T) {
	h := testHost(t)
	o := options(t)
	o.StateRoot, o.UserPrefix, o.PortStart, o.PortEnd = "/var/lib/occ-crash", "occcrash", 17500, 17599
	d, err := ssh.New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	ns := compute.NamespaceRef{ID: occ.NewID(occ.PrefixNamespace), Name: "team"}
	if _, err := d.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	agents := []compute.AgentRef{{NamespaceID: ns.ID, AgentID: occ.NewID(occ.PrefixAgent)}, {NamespaceID: ns.ID, AgentID: occ.NewID(occ.PrefixAgent)}}
	ops := []string{"prepare", "prepare", "stop", "prepare", "delete", "prepare"}
	rounds := 24
	for round := range rounds {
		a := agents[round%len(agents)]
		op := ops[(round/len(agents))%len(ops)]
		if round == rounds-1 {
			op = "deleteNamespace"
		}
		job := crashJob{Options: o, Op: op, NS: ns, Rev: spec(a, 1).RevisionRef, Number: int64(round + 1)}
		raw, err := json.Marshal(job)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+string(raw))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		kill := time.Duration(rand.IntN(1500)) * time.Millisecond
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("round %d: the %s process failed: %v\n%s", round+1, op, err, stderr.String())
			}
			t.Logf("round %d: %s of %s finished before the kill at %s", round+1, op, a.AgentID, kill)
		case <-time.After(kill):
			_ = cmd.Process.Kill()
			<-exited
			t.Logf("round %d: killed %s of %s after %s", round+1, op, a.AgentID, kill)
		}
		waitScriptsEnded(t, h, o.StateRoot)
		checkHost(t, h, o)

		// A new occ converges: the same operation completes.
		lockFree := o
		lockFree.OperationTimeout = time.Minute
		d2, err := ssh.New(lockFree)
		if err != nil {
			t.Fatal(err)
		}
		switch op {
		case "prepare":
			awaitReady(t, d2, job.spec())
			if unitShow(t, h, a, "ActiveState") != "active" {
				t.Fatalf("round %d: the unit is not active after the revision became ready", round+1)
			}
		case "stop":
			if err := d2.StopAgent(ctx, a); err != nil {
				t.Fatal(err)
			}
		case "delete":
			if err := d2.DeleteAgent(ctx, a); err != nil {
				t.Fatal(err)
			}
			if exists(h, d2.Paths(a).Dir) || exists(h, d2.UnitPath(a)) {
				t.Fatalf("round %d: DeleteAgent after the crash left the tree or the unit", round+1)
			}
		case "deleteNamespace":
			if _, err := d2.DeleteNamespace(ctx, ns); err != nil {
				t.Fatal(err)
			}
		}
		checkHost(t, h, o)
		d2.Close()
	}
	for _, a := range agents {
		if _, ok := accounts(t, h)[d.User(a)]; ok || exists(h, d.UnitPath(a)) || exists(h, d.Paths(a).Dir) {
			t.Fatalf("Agent %s left after the Namespace's deletion", a.AgentID)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(h.Root(), o.StateRoot, "ports", "*")); len(left) != 0 {
		t.Fatalf("port claims left: %v", left)
	}
}

// waitScriptsEnded waits until no operation holds or waits for the host
// lock of the state root (a killed occ's script goes on to its end on the
// host), then checks the lock is free: flock -n takes it at once.
func waitScriptsEnded(t *testing.T, h interface{ Run(string) (string, error) }, root string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, _ := h.Run("pgrep -fc '^flock -w [0-9]+ -E 75 " + root + "/[.]compute-lock' || true")
		if strings.TrimSpace(out) == "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("operations still on the host lock after 2 min: %s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := h.Run("flock -n " + root + "/.compute-lock true"); err != nil {
		t.Fatalf("the host lock is held with no operation running: %v", err)
	}
}

// checkHost: every account of occ's prefix carries occ's mark, and every
// unit of occ's belongs to an Agent directory with occ's mark.
func checkHost(t *testing.T, h interface {
	Root() string
}, o ssh.Options) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.Root(), "etc/passwd"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, _, _ := strings.Cut(line, ":")
		if strings.HasPrefix(name, o.UserPrefix+"-") {
			if _, err := os.Stat(filepath.Join(h.Root(), o.StateRoot, "accounts", name)); err != nil {
				t.Fatalf("account %s has no mark of occ's: %v", name, err)
			}
		}
	}
	units, _ := filepath.Glob(filepath.Join(h.Root(), o.UnitDir, "occ-gateway-*.service"))
	for _, u := range units {
		agent := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(u), "occ-gateway-"), ".service")
		marks, _ := filepath.Glob(filepath.Join(h.Root(), o.StateRoot, "namespaces", "*", "agents", agent, "agent.json"))
		other, _ := filepath.Glob(filepath.Join(h.Root(), testStateRoot, "namespaces", "*", "agents", agent))
		if len(marks) == 0 && len(other) == 0 {
			t.Fatalf("unit %s belongs to no Agent occ marked", u)
		}
	}
}
