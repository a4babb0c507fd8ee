package local_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
)

// TestConformance runs the driver contract's suite on fresh local drivers
// running the fake gateway.
func TestConformance(t *testing.T) {
	computetest.Run(t, harness)
}

// harness is a local driver on a new root, running the fake gateway (and,
// for dedicated revisions, the fake Codex CLI); its switches stand in for a
// slow start and a rejected model credential.
func harness(t *testing.T) computetest.Harness {
	root := gatewaytest.ReachableDir(t)
	short := func(o *local.Options) {
		o.StopTimeout = 5 * time.Second
		o.Harness = local.BinaryHarness(fakeCodex, fakeGateway)
	}
	d, _ := open(t, root, short)
	return computetest.Harness{
		Driver:   d,
		Observer: observer{d},
		Reopen: func(t *testing.T) compute.Driver {
			d2, _ := open(t, root, short)
			return d2
		},
		Options: computetest.Options{
			// A dedicated revision (the driver declares dedicated with its
			// fake Codex harness) gets its model key and primary model.
			Spec: func(s compute.RevisionSpec) compute.RevisionSpec {
				if s.ExecutionMode == "dedicated" {
					d := dedicatedSpec(s.AgentRef, s.Number, map[string]string{"OPENAI_API_KEY": "sk-conformance"})
					s.Document, s.HarnessEnv = withDoc(s.Document, d.Document), d.HarnessEnv
				}
				return s
			},
			SlowStart:        computetest.FakeGatewaySlowStart,
			RejectCredential: computetest.FakeGatewayRejectCredential,
		},
	}
}

// modelDoc configures a model provider whose key comes from
// FAKEPROV_API_KEY, so that the gateway probes it at start.
var modelDoc = computetest.FakeModelDocument()

// observer looks at a local driver's Agents from outside: processes through
// /proc (a gateway is a process whose environment names the Agent's state
// directory, and so are its children), files on disk.
type observer struct{ d *local.Driver }

func (o observer) Workloads(t *testing.T, ag compute.AgentRef) []string {
	var ws []string
	for _, pid := range gatewayPIDs(o.d, ag) {
		ws = append(ws, workloadID(t, pid))
	}
	return ws
}

func (o observer) WorkloadEnv(t *testing.T, ag compute.AgentRef) (map[string]string, bool) {
	t.Helper()
	switch pids := gatewayPIDs(o.d, ag); len(pids) {
	case 0:
		return nil, false
	case 1:
		return environ(t, pids[0]), true
	default:
		t.Fatalf("Agent %s has %d gateway processes: %v", ag.AgentID, len(pids), pids)
		return nil, false
	}
}

func (o observer) WorkspaceFile(t *testing.T, ag compute.AgentRef, name string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(o.d.AgentDir(ag), "workspace", name))
	return string(b), err == nil
}

// WriteWorkspaceFile writes as the workspace's owner (the gateway's user
// when occ is root), as a user's edit through the gateway would.
func (o observer) WriteWorkspaceFile(t *testing.T, ag compute.AgentRef, name, content string) {
	t.Helper()
	ws := filepath.Join(o.d.AgentDir(ag), "workspace")
	path := filepath.Join(ws, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	var s syscall.Stat_t
	if err := syscall.Stat(ws, &s); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(path, int(s.Uid), int(s.Gid)); err != nil {
		t.Fatal(err)
	}
}

func (o observer) AgentExists(t *testing.T, ag compute.AgentRef) bool {
	_, err := os.Stat(o.d.AgentDir(ag))
	return err == nil
}

func (o observer) NamespaceExists(t *testing.T, id string) bool {
	_, err := os.Stat(o.d.NamespaceDir(id))
	return err == nil
}

// ScanState reads every regular file under the driver's root.
func (o observer) ScanState(t *testing.T, visit func(where string, content []byte)) {
	t.Helper()
	err := filepath.WalkDir(o.d.Root(), func(path string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) || (err == nil && !e.Type().IsRegular()) {
			return nil // gone meanwhile, or not a file
		}
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		visit(path, b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
