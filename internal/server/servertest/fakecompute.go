package servertest

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
type FakeCompute struct {
	*local.Driver
	mu         sync.Mutex
	NotReady   map[string]int                     // agent → prepare calls still not ready (-1: never)
	Held       map[string]*compute.RuntimeFailure // agent → the runtime holds this failure
	Warnings   map[string][]compute.Warning       // agent → plugin warnings of a ready revision
	FailDelete map[string]bool                    // agent → DeleteAgent fails (retryable)
	Running    map[string]string                  // agent → revision whose gateway runs
	Active     map[string]string                  // agent → activated revision
	EnvSeen    map[string]map[string]string
	Files      map[string]map[string]string
	Deleted    map[string]bool
	// diagnosis, when set for an agent, is what Diagnose answers for it
	// (with diagnoseErr, the error); otherwise one check per gateway state.
	Diagnosis   map[string]func(compute.RevisionRef) compute.Diagnosis
	DiagnoseErr map[string]error
}

func NewFakeCompute(t *testing.T) *FakeCompute {
	d, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &FakeCompute{Driver: d, NotReady: map[string]int{}, Held: map[string]*compute.RuntimeFailure{}, Warnings: map[string][]compute.Warning{}, FailDelete: map[string]bool{},
		Diagnosis: map[string]func(compute.RevisionRef) compute.Diagnosis{}, DiagnoseErr: map[string]error{},
		Running: map[string]string{}, Active: map[string]string{}, EnvSeen: map[string]map[string]string{},
		Files: map[string]map[string]string{}, Deleted: map[string]bool{}}
}

func (f *FakeCompute) Set(fn func(f *FakeCompute)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *FakeCompute) Get(fn func(f *FakeCompute)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *FakeCompute) PrepareRevision(ctx context.Context, s compute.RevisionSpec) (compute.Readiness, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := s.AgentID
	if f.Running[a] != s.RevisionID {
		f.Running[a] = s.RevisionID
		env := map[string]string{}
		for k, v := range s.Env {
			env[k] = v
		}
		f.EnvSeen[a] = env
		if s.InitialFiles != nil && f.Files[a] == nil {
			f.Files[a] = s.InitialFiles
		}
	}
	if rf := f.Held[a]; rf != nil {
		return compute.Readiness{Held: true, RuntimeFailure: rf}, nil
	}
	if n := f.NotReady[a]; n != 0 {
		if n > 0 {
			f.NotReady[a] = n - 1
		}
		return compute.Readiness{PendingReason: "AGENT_GATEWAY_STARTING", RuntimeFailure: &compute.RuntimeFailure{
			Component: "gateway", Check: "readyz", CheckedAt: time.Now(), Code: "UNAVAILABLE"}}, nil
	}
	return compute.Readiness{Ready: true, Warnings: f.Warnings[a]}, nil
}

// Capabilities: the fake runs both execution modes with every harness
// method, plugins whose approval policy is provider_default or none, and
// Secret bindings.
func (f *FakeCompute) Capabilities() compute.Capabilities {
	return compute.Capabilities{ExecutionModes: []string{"embedded", "dedicated"},
		HarnessAuthMethods:     []string{"api_key", "codex_pat", "chatgpt_service_account", "credential_source"},
		PluginApprovalPolicies: []string{"provider_default", "none"}, WorkspaceSetup: true, NativeAdmin: true, PersistentState: true,
		SecretEnvironment: true}
}

func (f *FakeCompute) ActivateRevision(ctx context.Context, r compute.RevisionRef) error {
	f.Set(func(f *FakeCompute) { f.Active[r.AgentID] = r.RevisionID })
	return nil
}

func (f *FakeCompute) RetireRevision(ctx context.Context, r compute.RevisionRef) error {
	f.Set(func(f *FakeCompute) {
		if f.Running[r.AgentID] == r.RevisionID {
			delete(f.Running, r.AgentID)
		}
	})
	return nil
}

func (f *FakeCompute) StopAgent(ctx context.Context, a compute.AgentRef) error {
	f.Set(func(f *FakeCompute) { delete(f.Running, a.AgentID); delete(f.Active, a.AgentID) })
	return nil
}

var errFakeDelete = errors.New("fake: delete failed")

func (f *FakeCompute) DeleteAgent(ctx context.Context, a compute.AgentRef) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.FailDelete[a.AgentID] {
		return errFakeDelete
	}
	delete(f.Running, a.AgentID)
	delete(f.Active, a.AgentID)
	f.Deleted[a.AgentID] = true
	return nil
}

func (f *FakeCompute) GatewayEndpoint(ctx context.Context, a compute.AgentRef) (compute.Endpoint, bool) {
	return compute.Endpoint{}, false
}

func (f *FakeCompute) Diagnose(ctx context.Context, r compute.RevisionRef) (compute.Diagnosis, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.DiagnoseErr[r.AgentID]; err != nil {
		return compute.Diagnosis{}, err
	}
	if fn := f.Diagnosis[r.AgentID]; fn != nil {
		return fn(r), nil
	}
	c := compute.Check{Component: "gateway", Check: "process", Status: "unknown", Code: "UNAVAILABLE", Message: "No gateway runs this revision."}
	if f.Running[r.AgentID] == r.RevisionID {
		c.Status, c.Code, c.Message = "succeeded", "OK", "The check succeeded."
	}
	return compute.Diagnosis{RevisionID: r.RevisionID, Checks: []compute.Check{c}}, nil
}
