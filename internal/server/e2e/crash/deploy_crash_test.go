package crash_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestDeployCrashRestart kills occ with SIGKILL at a random moment of a
// burst of deploys, stops, deletes and workspace-file writes of a handful
// of Agents (the local
// driver running the fake gateway binary, OCC_COMPUTE_GATEWAY_COMMAND),
// starts it again on the same data directory and checks, once everything
// settled: every admitted deployment is terminal and stays so, no Agent has
// (or ever had, at any scan) two gateway processes, no process or directory
// outlives a deleted Agent, every running Agent has exactly one live
// gateway and every stopped one none, no revision changed, and a running
// Agent's SOUL.md holds its last acknowledged write (or a later one whose
// answer the kill cut off). Every other Agent is dedicated: its Codex
// harness (the fake Codex CLI, compute.harnessCommand) is a second
// workload, held to the same rules (exactly one while the Agent runs,
// none otherwise or once it is deleted).
//
// OCC_TEST_CRASH_ROUNDS raises the SQLite rounds (default 50); the
// PostgreSQL lane runs a few rounds, as each may wait for River's rescuer.
func TestDeployCrashRestart(t *testing.T) {
	// Not parallel: it runs alone in this package (see TestMain).
	rounds := 50
	if s := os.Getenv("OCC_TEST_CRASH_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("OCC_TEST_CRASH_ROUNDS=%q: want a positive number", s)
		}
		rounds = max(n, rounds)
	}
	bin := servertest.BuildOCC(t)
	fake, codex := gatewaytest.BuildBinary(t), gatewaytest.BuildCodexBinary(t)
	t.Run("sqlite", func(t *testing.T) {
		l := newLocalCrashCompute(t, fake, codex)
		servertest.DeployCrashLoop(t, bin, l, l.dataDir, "", rounds).Last.Stop()
	})
	t.Run("postgres", func(t *testing.T) {
		l := newLocalCrashCompute(t, fake, codex)
		servertest.DeployCrashLoop(t, bin, l, l.dataDir, storetest.URL(t, "postgres"), 3).Last.Stop()
	})
}

// localCrashCompute is the local driver running the fake gateway binary
// (OCC_COMPUTE_GATEWAY_COMMAND) under the test's data directory.
type localCrashCompute struct {
	t       *testing.T
	fake    string
	codex   string // the fake Codex CLI: dedicated Agents' harness
	dataDir string
}

// newLocalCrashCompute makes the data directory occ runs on; the gateways
// left running under it are killed when the test ends (occ leaves Agents
// running when it stops).
func newLocalCrashCompute(t *testing.T, fake, codex string) *localCrashCompute {
	l := &localCrashCompute{t: t, fake: fake, codex: codex, dataDir: gatewaytest.ReachableDir(t)}
	t.Cleanup(func() { servertest.KillGatewayProcs(l.root()) })
	return l
}

func (l *localCrashCompute) Env() []string {
	return []string{"OCC_COMPUTE_GATEWAY_COMMAND=" + l.fake, "OCC_COMPUTE_HARNESS_COMMAND=" + l.codex}
}

// runsDedicated: with the fake Codex as its harness command, occ runs
// dedicated Agents.
// The rounds deploy dedicated Agents on the local driver.
var _ servertest.DedicatedRunner = (*localCrashCompute)(nil)

func (l *localCrashCompute) RunsDedicated() {}

func (l *localCrashCompute) SettleWait() time.Duration { return 60 * time.Second }

func (l *localCrashCompute) root() string { return filepath.Join(l.dataDir, "compute", "namespaces") }

// workloads: the gateway and harness processes of the data directory.
func (l *localCrashCompute) Workloads() map[string][]string {
	out := map[string][]string{}
	for agt, procs := range servertest.GatewayProcs(l.root()) {
		for pid, cmd := range procs {
			out[agt] = append(out[agt], pid+" "+cmd)
		}
	}
	for agt, procs := range servertest.HarnessProcs(l.root()) {
		for pid, cmd := range procs {
			out[agt] = append(out[agt], servertest.HarnessLine+pid+" "+cmd)
		}
	}
	return out
}

// held: the Agents' directories.
func (l *localCrashCompute) Held() map[string][]string {
	out := map[string][]string{}
	nss, _ := os.ReadDir(l.root())
	for _, ns := range nss {
		dir := filepath.Join(l.root(), ns.Name(), "agents")
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			l.t.Fatal(err)
		}
		for _, e := range entries {
			out[e.Name()] = append(out[e.Name()], "directory "+filepath.Join(dir, e.Name()))
		}
	}
	return out
}
