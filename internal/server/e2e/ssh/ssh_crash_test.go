package ssh_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute/ssh/sshtest"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/server/servertest"
)

// sshCrashRounds is the SSH lane's deploy crash rounds.
const sshCrashRounds = 20

// TestSSHDeployCrashRestart is TestDeployCrashRestart on the SSH lane: occ
// runs with --compute ssh against a real host (sshtest) whose units run
// the fake gateway; occ is SIGKILLed at a random moment of a burst of
// deploys, stops, deletes and workspace writes, started again, and once
// everything settled: no Agent has two gateway processes, a running Agent
// has one and a stopped one none, nothing of a deleted Agent is left on
// the host (tree, unit, account mark), nothing belongs to an Agent occ
// does not know, every deployment is terminal, and River holds no
// unfinished work. At the end every Agent and the Namespace are deleted
// and the host holds nothing of them. The host lock is the driver's only
// serialisation: a killed occ's script runs to its end on the host.
func TestSSHDeployCrashRestart(t *testing.T) {
	t.Parallel()
	h := sshtest.Start(t)
	k := &sshCrashCompute{t: t, h: h, stateRoot: "/var/lib/occ-ssh-crash"}
	k.install(gatewaytest.BuildStaticBinary(t))
	w := servertest.DeployCrashLoop(t, servertest.BuildOCC(t), k, gatewaytest.ReachableDir(t), "", sshCrashRounds)
	w.DeleteEverything()
	k.awaitNone()
	w.Last.Stop()
}

// sshCrashCompute sees the host from outside occ.
type sshCrashCompute struct {
	t         *testing.T
	h         *sshtest.Host
	stateRoot string
	config    string // occ's configuration file (compute.ssh)
}

// install copies the fake gateway into the host, with a "node" that drops
// its first argument (the OpenClaw entry point the unit passes) and runs
// the fake gateway with the rest, and writes occ's configuration.
func (k *sshCrashCompute) install(fake string) {
	t := k.t
	b, err := os.ReadFile(fake)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(k.h.Root(), "opt/occ-test")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{"fakegateway": b, "node": []byte("#!/bin/sh\nshift\nexec /opt/occ-test/fakegateway \"$@\"\n"),
		"openclaw.mjs": nil} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	k.config = filepath.Join(t.TempDir(), "occ.yaml")
	y := fmt.Sprintf(`compute:
  ssh:
    identityFile: %s
    knownHostsFile: %s
    hosts:
      default: {address: %s, port: %d}
      deploy-crash: {address: %s, port: %d}
    runtime:
      nodePath: /opt/occ-test/node
      openclawPath: /opt/occ-test/openclaw.mjs
      stateRoot: %s
    portRange: {start: 17900, end: 17999}
`, k.h.IdentityFile, k.h.KnownHostsFile, k.h.Address, k.h.Port, k.h.Address, k.h.Port, k.stateRoot)
	if err := os.WriteFile(k.config, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
}

// env selects the ssh driver. Every operation on the host holds the
// host's lock, so the worker's jobs (4 at once with this driver) queue on
// it: on a loaded machine their operations outlasted the crash world's 3 s
// job timeout until an Agent's job ran out of attempts. These bounds (the
// later values win over childEnv's) leave room for the queue.
func (k *sshCrashCompute) Env() []string {
	return []string{"OCC_COMPUTE=ssh", "OCC_CONFIG=" + k.config, "OCC_WORKER_JOB_TIMEOUT=8s", "OCC_WORKER_RESCUE_AFTER=9s"}
}

// harnessAuth: the only method of the driver.
// The SSH driver's harness takes the runtime method.
var _ servertest.HarnessAuther = (*sshCrashCompute)(nil)

func (k *sshCrashCompute) HarnessAuth() map[string]any { return map[string]any{"method": "runtime"} }

func (k *sshCrashCompute) SettleWait() time.Duration { return 2 * time.Minute }

// workloads: every unit of occ's with a main process, by Agent.
func (k *sshCrashCompute) Workloads() map[string][]string {
	out, err := k.h.Run(`for u in /etc/systemd/system/occ-gateway-*.service; do
	[ -e "$u" ] || continue
	n=${u##*/}
	echo "$n $(systemctl show -p MainPID --value "$n")"
done`)
	if err != nil {
		k.t.Fatal(err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		unit, pid, ok := strings.Cut(line, " ")
		if !ok || pid == "0" || pid == "" {
			continue
		}
		agent := strings.TrimSuffix(strings.TrimPrefix(unit, "occ-gateway-"), ".service")
		m[agent] = append(m[agent], unit+" pid "+pid)
	}
	return m
}

// held: each Agent's tree, unit and account mark.
func (k *sshCrashCompute) Held() map[string][]string {
	root := k.h.Root()
	m := map[string][]string{}
	dirs, _ := filepath.Glob(filepath.Join(root, k.stateRoot, "namespaces", "*", "agents", "*"))
	for _, d := range dirs {
		m[filepath.Base(d)] = append(m[filepath.Base(d)], "tree "+strings.TrimPrefix(d, root))
	}
	units, _ := filepath.Glob(filepath.Join(root, "etc/systemd/system/occ-gateway-*.service"))
	for _, u := range units {
		agent := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(u), "occ-gateway-"), ".service")
		m[agent] = append(m[agent], "unit "+filepath.Base(u))
	}
	marks, _ := filepath.Glob(filepath.Join(root, k.stateRoot, "accounts", "*"))
	for _, f := range marks {
		b, _ := os.ReadFile(f)
		if _, agent, ok := strings.Cut(strings.TrimSpace(string(b)), " "); ok {
			m[agent] = append(m[agent], "account "+filepath.Base(f))
		}
	}
	return m
}

// awaitNone waits (bounded) until the host holds nothing of any Agent and
// nothing of the deleted Namespace.
func (k *sshCrashCompute) awaitNone() {
	deadline := time.Now().Add(k.SettleWait())
	for {
		held := k.Held()
		nss, _ := filepath.Glob(filepath.Join(k.h.Root(), k.stateRoot, "namespaces", "*"))
		var left []string
		for _, n := range nss {
			if _, err := os.Stat(filepath.Join(n, "namespace.json")); err == nil && len(held) == 0 {
				// the installation's "default" Namespace stays
				if b, _ := os.ReadFile(filepath.Join(n, "namespace.json")); strings.Contains(string(b), `"name":"default"`) {
					continue
				}
			}
			left = append(left, strings.TrimPrefix(n, k.h.Root()))
		}
		if len(held) == 0 && len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			k.t.Fatalf("%v after everything was deleted, the host holds %v and Namespaces %v", k.SettleWait(), held, left)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
