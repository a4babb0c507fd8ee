package server_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/local"
)

// fakeCompute is an in-memory revision driver over the local Namespace
// driver, with switches for the worker's branches. It records what runs.
type fakeCompute struct {
	*local.Driver
	mu         sync.Mutex
	notReady   map[string]int                     // agent → prepare calls still not ready (-1: never)
	held       map[string]*compute.RuntimeFailure // agent → the runtime holds this failure
	warnings   map[string][]compute.Warning       // agent → plugin warnings of a ready revision
	failDelete map[string]bool                    // agent → DeleteAgent fails (retryable)
	running    map[string]string                  // agent → revision whose gateway runs
	active     map[string]string                  // agent → activated revision
	envSeen    map[string]map[string]string
	files      map[string]map[string]string
	deleted    map[string]bool
	// diagnosis, when set for an agent, is what Diagnose answers for it
	// (with diagnoseErr, the error); otherwise one check per gateway state.
	diagnosis   map[string]func(compute.RevisionRef) compute.Diagnosis
	diagnoseErr map[string]error
}

func newFakeCompute(t *testing.T) *fakeCompute {
	d, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &fakeCompute{Driver: d, notReady: map[string]int{}, held: map[string]*compute.RuntimeFailure{}, warnings: map[string][]compute.Warning{}, failDelete: map[string]bool{},
		diagnosis: map[string]func(compute.RevisionRef) compute.Diagnosis{}, diagnoseErr: map[string]error{},
		running: map[string]string{}, active: map[string]string{}, envSeen: map[string]map[string]string{},
		files: map[string]map[string]string{}, deleted: map[string]bool{}}
}

func (f *fakeCompute) set(fn func(f *fakeCompute)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeCompute) get(fn func(f *fakeCompute)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeCompute) PrepareRevision(ctx context.Context, s compute.RevisionSpec) (compute.Readiness, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := s.AgentID
	if f.running[a] != s.RevisionID {
		f.running[a] = s.RevisionID
		env := map[string]string{}
		for k, v := range s.Env {
			env[k] = v
		}
		f.envSeen[a] = env
		if s.InitialFiles != nil && f.files[a] == nil {
			f.files[a] = s.InitialFiles
		}
	}
	if rf := f.held[a]; rf != nil {
		return compute.Readiness{Held: true, RuntimeFailure: rf}, nil
	}
	if n := f.notReady[a]; n != 0 {
		if n > 0 {
			f.notReady[a] = n - 1
		}
		return compute.Readiness{PendingReason: "AGENT_GATEWAY_STARTING", RuntimeFailure: &compute.RuntimeFailure{
			Component: "gateway", Check: "readyz", CheckedAt: time.Now(), Code: "UNAVAILABLE"}}, nil
	}
	return compute.Readiness{Ready: true, Warnings: f.warnings[a]}, nil
}

// Capabilities: the fake runs both execution modes with every harness
// method, plugins whose approval policy is provider_default or none, and
// Secret bindings.
func (f *fakeCompute) Capabilities() compute.Capabilities {
	return compute.Capabilities{ExecutionModes: []string{"embedded", "dedicated"},
		HarnessAuthMethods:     []string{"api_key", "codex_pat", "chatgpt_service_account", "credential_source"},
		PluginApprovalPolicies: []string{"provider_default", "none"}, WorkspaceSetup: true, NativeAdmin: true, PersistentState: true,
		SecretEnvironment: true}
}

func (f *fakeCompute) ActivateRevision(ctx context.Context, r compute.RevisionRef) error {
	f.set(func(f *fakeCompute) { f.active[r.AgentID] = r.RevisionID })
	return nil
}

func (f *fakeCompute) RetireRevision(ctx context.Context, r compute.RevisionRef) error {
	f.set(func(f *fakeCompute) {
		if f.running[r.AgentID] == r.RevisionID {
			delete(f.running, r.AgentID)
		}
	})
	return nil
}

func (f *fakeCompute) StopAgent(ctx context.Context, a compute.AgentRef) error {
	f.set(func(f *fakeCompute) { delete(f.running, a.AgentID); delete(f.active, a.AgentID) })
	return nil
}

var errFakeDelete = errors.New("fake: delete failed")

func (f *fakeCompute) DeleteAgent(ctx context.Context, a compute.AgentRef) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failDelete[a.AgentID] {
		return errFakeDelete
	}
	delete(f.running, a.AgentID)
	delete(f.active, a.AgentID)
	f.deleted[a.AgentID] = true
	return nil
}

func (f *fakeCompute) GatewayEndpoint(ctx context.Context, a compute.AgentRef) (compute.Endpoint, bool) {
	return compute.Endpoint{}, false
}

func (f *fakeCompute) Diagnose(ctx context.Context, r compute.RevisionRef) (compute.Diagnosis, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.diagnoseErr[r.AgentID]; err != nil {
		return compute.Diagnosis{}, err
	}
	if fn := f.diagnosis[r.AgentID]; fn != nil {
		return fn(r), nil
	}
	c := compute.Check{Component: "gateway", Check: "process", Status: "unknown", Code: "UNAVAILABLE", Message: "No gateway runs this revision."}
	if f.running[r.AgentID] == r.RevisionID {
		c.Status, c.Code, c.Message = "succeeded", "OK", "The check succeeded."
	}
	return compute.Diagnosis{RevisionID: r.RevisionID, Checks: []compute.Check{c}}, nil
}
