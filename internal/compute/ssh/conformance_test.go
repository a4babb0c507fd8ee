package ssh_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/compute/ssh"
	"github.com/openclaw/occ/internal/compute/ssh/sshtest"
)

// observer sees the test host from outside the driver: its file system
// (the copy systemd-nspawn booted) and, for what only the host's kernel
// and systemd know, commands run over the test's own SSH login.
type observer struct {
	h *sshtest.Host
	d *ssh.Driver // for paths and names only
}

func (o observer) NamespaceExists(t *testing.T, id string) bool {
	return exists(o.h, testStateRoot+"/namespaces/"+id)
}

// unit is systemd's view of the Agent's unit: its main PID ("0" when none
// runs) and when that process started.
func (o observer) unit(t *testing.T, ag compute.AgentRef) (pid, started string) {
	t.Helper()
	out, err := o.h.Run("systemctl show -p MainPID -p ExecMainStartTimestampMonotonic " + ssh.UnitName(ag))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "MainPID="); ok {
			pid = v
		}
		if v, ok := strings.CutPrefix(line, "ExecMainStartTimestampMonotonic="); ok {
			started = v
		}
	}
	return pid, started
}

// Workloads are the unit's running process and every other process of
// the Agent's account (strays).
func (o observer) Workloads(t *testing.T, ag compute.AgentRef) []string {
	t.Helper()
	var out []string
	pid, started := o.unit(t, ag)
	if pid != "" && pid != "0" {
		out = append(out, pid+"@"+started)
	}
	if a, ok := accounts(t, o.h)[o.d.User(ag)]; ok {
		ps, _ := o.h.Run("pgrep -u " + strconv.Itoa(a.uid) + " || true")
		for _, p := range strings.Fields(ps) {
			if p != pid {
				out = append(out, p+"@stray")
			}
		}
	}
	return out
}

func (o observer) WorkloadEnv(t *testing.T, ag compute.AgentRef) (map[string]string, bool) {
	t.Helper()
	if pid, _ := o.unit(t, ag); pid == "" || pid == "0" {
		return nil, false
	}
	return gatewayEnv(t, o.h, ag), true
}

func (o observer) WorkspaceFile(t *testing.T, ag compute.AgentRef, name string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(o.h.Root(), o.d.Paths(ag).Workspace, name))
	return string(b), err == nil
}

// WriteWorkspaceFile writes as the gateway would: owned by the Agent's
// account.
func (o observer) WriteWorkspaceFile(t *testing.T, ag compute.AgentRef, name, content string) {
	t.Helper()
	a, ok := accounts(t, o.h)[o.d.User(ag)]
	if !ok {
		t.Fatalf("no account of Agent %s", ag.AgentID)
	}
	p := filepath.Join(o.h.Root(), o.d.Paths(ag).Workspace, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, a.uid, a.gid); err != nil {
		t.Fatal(err)
	}
}

// AgentExists: its tree, its unit or its account.
func (o observer) AgentExists(t *testing.T, ag compute.AgentRef) bool {
	t.Helper()
	_, acct := accounts(t, o.h)[o.d.User(ag)]
	return acct || exists(o.h, o.d.Paths(ag).Dir) || exists(o.h, o.d.UnitPath(ag))
}

// ScanState visits every file under the state root and every unit occ
// wrote.
func (o observer) ScanState(t *testing.T, visit func(where string, content []byte)) {
	t.Helper()
	walk := func(root string, keep func(string) bool) {
		_ = filepath.WalkDir(filepath.Join(o.h.Root(), root), func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() || !e.Type().IsRegular() || !keep(e.Name()) {
				return nil
			}
			if b, err := os.ReadFile(p); err == nil {
				visit(strings.TrimPrefix(p, o.h.Root()), b)
			}
			return nil
		})
	}
	walk(testStateRoot, func(string) bool { return true })
	walk("/etc/systemd/system", func(name string) bool { return strings.HasPrefix(name, "occ-gateway-") })
}

// TestSSHConformance runs the driver contract's suite against the real
// host (systemd, sshd, useradd) with the fake gateway as each Agent's
// service.
func TestSSHConformance(t *testing.T) {
	h := testHost(t)
	computetest.Run(t, func(t *testing.T) computetest.Harness {
		d := open(t)
		return computetest.Harness{
			Driver:   d,
			Observer: observer{h: h, d: d},
			Reopen:   func(t *testing.T) compute.Driver { return open(t) },
			Options: computetest.Options{
				ReadyTimeout: 3 * time.Minute,
				Poll:         250 * time.Millisecond,
				SlowStart: func(s compute.RevisionSpec) compute.RevisionSpec {
					return viaOperatorEnv(t, d, computetest.FakeGatewaySlowStart(s))
				},
				RejectCredential: func(s compute.RevisionSpec) compute.RevisionSpec {
					return viaOperatorEnv(t, d, computetest.FakeGatewayRejectCredential(s))
				},
			},
		}
	})
}
