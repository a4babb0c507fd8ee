package local_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
)

func TestCrashRestartsWithBackoff(t *testing.T) {
	d, ev := open(t, "")
	ag := newAgent(t, d)
	secret := canary(t)
	spec := newSpec(ag, 1)
	spec.Env = map[string]string{"FAKEGATEWAY_CRASH_AFTER": "300ms", "OCC_TEST_SECRET": secret}
	if _, err := d.PrepareRevision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}

	// While the gateway is down, PrepareRevision reports the exit.
	r := prepareUntil(t, d, spec, "a runtime failure", func(r compute.Readiness) bool { return r.RuntimeFailure != nil })
	if f := r.RuntimeFailure; r.Ready || f.Component != "gateway" || f.Check != "process" || f.Code != local.CodeStartupFailed || f.CheckedAt.IsZero() {
		t.Fatalf("readiness of a crashed gateway = %+v %+v", r, f)
	}

	// It is restarted again and again, never two at once, with the secret.
	seen := map[string]bool{}
	eventually(t, "restarted three times", func() bool {
		ws := observer{d}.Workloads(t, ag)
		if len(ws) > 1 {
			t.Fatalf("gateway processes %v at once", ws)
		}
		if len(ws) == 1 && !seen[ws[0]] {
			w := ws[0]
			seen[w] = true
			pid, _ := strconv.Atoi(strings.Split(w, ":")[0])
			if env, err := local.ReadEnviron(pid); err == nil && len(env) > 0 && !slices.Contains(env, "OCC_TEST_SECRET="+secret) {
				t.Fatalf("restarted gateway lacks the secret env")
			}
		}
		return len(seen) >= 3
	})
	if got := ev.delays(); len(got) < 2 || got[0] != "1s" || got[1] != "2s" {
		t.Fatalf("restart delays %v; want 1s, 2s, …", got)
	}

	if err := d.StopAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	if pids := gatewayPIDs(d, ag); len(pids) != 0 {
		t.Fatalf("gateway processes %v after StopAgent", pids)
	}
}

func TestStartupFailureIsReported(t *testing.T) {
	d, _ := open(t, "")
	ag := newAgent(t, d)
	spec := newSpec(ag, 1)
	spec.Document = map[string]any{"bogusKey": true} // the fake's invalid config: exit 78
	r := prepareUntil(t, d, spec, "a runtime failure", func(r compute.Readiness) bool { return r.RuntimeFailure != nil })
	if r.RuntimeFailure.Code != local.CodeStartupFailed {
		t.Fatalf("runtime failure = %+v", r.RuntimeFailure)
	}
	console, _ := os.ReadFile(filepath.Join(d.AgentDir(ag), "console.log"))
	if !strings.Contains(string(console), "Invalid config") {
		t.Fatalf("console.log = %q; want the gateway's start failure", console)
	}
	dg, err := d.Diagnose(context.Background(), spec.RevisionRef)
	if err != nil {
		t.Fatal(err)
	}
	if c := dg.Checks[0]; c.Check != local.CheckProcess || c.Status != "failed" || c.Code != local.CodeProcessExited {
		t.Fatalf("process check of an exited gateway = %+v", c)
	}

	// A good revision replaces the failing one.
	ready(t, d, newSpec(ag, 2))
}

// TestAdoptedGatewayRestarts: after the driver that started a gateway is
// closed, a new driver on the root adopts it (Adopt) and, when it dies,
// restarts it with the secret environment read back from /proc; a third
// driver stops it and the second does not bring it back. (Adoption itself
// is the conformance suite's Adoption obligation.)
func TestAdoptedGatewayRestarts(t *testing.T) {
	root := gatewaytest.ReachableDir(t)
	d1, _ := open(t, root)
	ag := newAgent(t, d1)
	secret := canary(t)
	spec := newSpec(ag, 1)
	spec.Env = map[string]string{"OCC_TEST_SECRET": secret}
	ready(t, d1, spec)
	pid := onlyPID(t, d1, ag)
	w1 := workloadID(t, pid)
	ep1, _ := d1.GatewayEndpoint(context.Background(), ag)
	d1.Close() // occ stops supervising; the gateway keeps running

	d2, _ := open(t, root)
	if err := d2.Adopt(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ep, ok := d2.GatewayEndpoint(context.Background(), ag); !ok || ep != ep1 {
		t.Fatalf("endpoint after Adopt = %+v, %v; want %+v", ep, ok, ep1)
	}
	ready(t, d2, spec)
	if w := workloadID(t, onlyPID(t, d2, ag)); w != w1 {
		t.Fatalf("PrepareRevision after Adopt replaced the gateway: %s, then %s", w1, w)
	}

	// The adopted gateway dies: the new driver restarts it, with the secret
	// environment it read back from the adopted process.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// A restarted process that is itself gone before its environment is
	// read (a slow start on a loaded machine) is passed over for the next.
	var env []string
	eventually(t, "restarted", func() bool {
		pids := gatewayPIDs(d2, ag)
		if len(pids) > 1 {
			t.Fatalf("two gateway processes %v", pids)
		}
		if len(pids) == 1 && workloadID(t, pids[0]) != w1 {
			var err error
			env, err = local.ReadEnviron(pids[0])
			return err == nil
		}
		return false
	})
	if !slices.Contains(env, "OCC_TEST_SECRET="+secret) {
		t.Fatal("the restarted gateway lacks the secret environment of the adopted one")
	}
	ready(t, d2, spec)

	// A third driver, stopping it: an adopted process is stopped too.
	d3, _ := open(t, root)
	if err := d3.StopAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	if pids := gatewayPIDs(d3, ag); len(pids) != 0 {
		t.Fatalf("gateway processes %v after StopAgent of a new driver", pids)
	}
	// The driver that supervised it before does not bring it back.
	if ep, ok := d2.GatewayEndpoint(context.Background(), ag); ok {
		t.Fatalf("the old driver still reports an endpoint %+v", ep)
	}
}

func TestInterruptedStopIsFinished(t *testing.T) {
	root := gatewaytest.ReachableDir(t)
	d1, ag := readyOn(t, root)
	d1.Close()
	// As if occ died after recording the stop and before signalling.
	editRun(t, d1, ag, func(st map[string]any) { st["running"] = false })
	d2, _ := open(t, root)
	if err := d2.Adopt(context.Background()); err != nil {
		t.Fatal(err)
	}
	if pids := gatewayPIDs(d2, ag); len(pids) != 0 {
		t.Fatalf("gateway processes %v after an interrupted stop was found", pids)
	}
}

func TestInterruptedStartOrphanIsKilled(t *testing.T) {
	root := gatewaytest.ReachableDir(t)
	d1, ag := readyOn(t, root)
	pid := onlyPID(t, d1, ag)
	d1.Close()
	// As if occ died after starting the process and before recording it.
	editRun(t, d1, ag, func(st map[string]any) {
		delete(st, "pid")
		delete(st, "startTime")
		st["launching"] = true
	})
	d2, _ := open(t, root)
	spec := newSpec(ag, 2)
	ready(t, d2, spec)
	pids := gatewayPIDs(d2, ag)
	if len(pids) != 1 || pids[0] == pid {
		t.Fatalf("gateway processes %v (orphan %d); want one new process", pids, pid)
	}
}

func TestStopSendsSIGKILLAfterTimeout(t *testing.T) {
	// The fake gateway has no switch to ignore SIGTERM; a shell that ignores
	// it (SIG_IGN survives exec) stands in for a gateway that hangs.
	d, ev := open(t, "", func(o *local.Options) {
		o.Command = func(int) ([]string, error) {
			return []string{"/bin/sh", "-c", "trap '' TERM; exec sleep 600"}, nil
		}
		o.StopTimeout = 200 * time.Millisecond
	})
	ag := newAgent(t, d)
	r, err := d.PrepareRevision(context.Background(), newSpec(ag, 1))
	if err != nil || r.Ready {
		t.Fatalf("PrepareRevision of a gateway that never answers = %+v, %v", r, err)
	}
	var pid int
	eventually(t, "running", func() bool {
		pids := gatewayPIDs(d, ag)
		if len(pids) == 1 {
			if s, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pids[0])); strings.HasPrefix(string(s), "sleep") {
				pid = pids[0]
				return true
			}
		}
		return false
	})
	if err := d.StopAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	if !ev.has("gateway ignored SIGTERM; sending SIGKILL") {
		t.Fatal("no SIGKILL was needed")
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
		t.Fatalf("process %d still exists after StopAgent", pid)
	}
}

func TestStopLeavesNoStrayProcess(t *testing.T) {
	// A gateway whose child outlives it (as the real gateway's spawn broker
	// could after SIGKILL): the child inherits the environment and is
	// stopped with the Agent.
	d, ag := gatewayWithChild(t, "sleep 600")
	eventually(t, "two processes", func() bool { return len(gatewayPIDs(d, ag)) == 2 })
	if err := d.StopAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	if pids := gatewayPIDs(d, ag); len(pids) != 0 {
		t.Fatalf("processes %v outlived StopAgent", pids)
	}
}

// readyOn is a driver on root and an Agent whose first revision is ready
// on it.
func readyOn(t *testing.T, root string) (*local.Driver, compute.AgentRef) {
	t.Helper()
	d, _ := open(t, root)
	ag := newAgent(t, d)
	ready(t, d, newSpec(ag, 1))
	return d, ag
}

// gatewayWithChild is a driver whose gateway first starts child in the
// background (sh -c "CHILD & exec fakegateway …"), and a ready Agent on it.
func gatewayWithChild(t *testing.T, child string) (*local.Driver, compute.AgentRef) {
	t.Helper()
	d, _ := open(t, "", func(o *local.Options) {
		o.Command = func(port int) ([]string, error) {
			return []string{"/bin/sh", "-c", child + " & exec " + fakeGateway + " gateway run --port " + strconv.Itoa(port)}, nil
		}
	})
	ag := newAgent(t, d)
	ready(t, d, newSpec(ag, 1))
	return d, ag
}

// editRun changes the Agent's run.json as an interrupted occ would have
// left it.
func editRun(t *testing.T, d *local.Driver, ag compute.AgentRef, edit func(st map[string]any)) {
	t.Helper()
	path := filepath.Join(d.AgentDir(ag), "run.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	edit(st)
	if b, err = json.Marshal(st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
