package computetest

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// fakeObserver looks at a Fake's state directly.
type fakeObserver struct{ f *Fake }

// agent runs fn on the Agent's record (nil when it has none) under the
// Fake's lock.
func (o fakeObserver) agent(ag compute.AgentRef, fn func(a *fakeAgent)) {
	o.f.w.mu.Lock()
	defer o.f.w.mu.Unlock()
	fn(o.f.w.agents[ag.AgentID])
}

func (o fakeObserver) NamespaceExists(t *testing.T, id string) bool { return o.f.NamespaceExists(id) }

func (o fakeObserver) Workloads(t *testing.T, ag compute.AgentRef) (ws []string) {
	o.agent(ag, func(a *fakeAgent) {
		if a != nil && a.workload != "" {
			ws = []string{a.workload}
		}
	})
	return ws
}

func (o fakeObserver) WorkloadEnv(t *testing.T, ag compute.AgentRef) (env map[string]string, ok bool) {
	o.agent(ag, func(a *fakeAgent) {
		if a != nil && a.workload != "" {
			env, ok = maps.Clone(a.env), true
		}
	})
	return env, ok
}

func (o fakeObserver) WorkspaceFile(t *testing.T, ag compute.AgentRef, name string) (content string, ok bool) {
	o.agent(ag, func(a *fakeAgent) {
		if a != nil {
			content, ok = a.files[name]
		}
	})
	return content, ok
}

func (o fakeObserver) WriteWorkspaceFile(t *testing.T, ag compute.AgentRef, name, content string) {
	t.Helper()
	exists := false
	o.agent(ag, func(a *fakeAgent) {
		if a != nil {
			a.files[name], exists = content, true
		}
	})
	if !exists {
		t.Fatalf("no workspace for Agent %s", ag.AgentID)
	}
}

func (o fakeObserver) AgentExists(t *testing.T, ag compute.AgentRef) (ok bool) {
	o.agent(ag, func(a *fakeAgent) { ok = a != nil })
	return ok
}

func (o fakeObserver) ScanState(t *testing.T, visit func(where string, content []byte)) {
	o.f.w.mu.Lock()
	defer o.f.w.mu.Unlock()
	for _, id := range slices.Sorted(maps.Keys(o.f.w.agents)) {
		a := o.f.w.agents[id]
		visit("agents/"+id, a.stored())
		for name, content := range a.files {
			visit("agents/"+id+"/workspace/"+name, []byte(content))
		}
	}
}

// fakeHarness makes Harnesses of new Fakes declaring caps, each wrapped by
// wrap (nil: none); the switches stand in for the gateway's behaviour.
func fakeHarness(caps compute.Capabilities, wrap func(*Fake) compute.Driver) func(t *testing.T) Harness {
	if wrap == nil {
		wrap = func(f *Fake) compute.Driver { return f }
	}
	return func(t *testing.T) Harness {
		f := NewFake(caps)
		return Harness{
			Driver:   wrap(f),
			Observer: fakeObserver{f},
			Reopen:   func(*testing.T) compute.Driver { return wrap(f.Reopen()) },
			Options: Options{
				SlowStart: func(s compute.RevisionSpec) compute.RevisionSpec {
					f.NotReady(s.AgentID, 1, occ.PendingGatewayStarting, nil)
					return s
				},
				RejectCredential: func(s compute.RevisionSpec) compute.RevisionSpec {
					f.Hold(s.AgentID, &compute.RuntimeFailure{Component: compute.HeldComponent, Check: compute.HeldCheckModelCredential,
						CheckedAt: time.Now(), Code: compute.HeldAuthenticationFailed})
					return s
				},
				PluginWarnings: func(s compute.RevisionSpec, ws []compute.Warning) compute.RevisionSpec {
					f.Warn(s.AgentID, ws)
					return s
				},
				Poll: time.Millisecond,
			},
		}
	}
}

// TestFakeConformance: the Fake with every capability honours the whole
// contract.
func TestFakeConformance(t *testing.T) {
	t.Parallel()
	Run(t, fakeHarness(compute.Capabilities{}, nil))
}

// TestMinimalFakeConformance: a Fake declaring only the dedicated mode
// passes the obligations every driver has (its specs run dedicated).
func TestMinimalFakeConformance(t *testing.T) {
	t.Parallel()
	Run(t, fakeHarness(compute.Capabilities{ExecutionModes: []string{occ.ExecutionDedicated}}, nil))
}

// TestFaultyConformance: a Faulty with no fault injected is transparent:
// the Fake it wraps still passes the suite.
func TestFaultyConformance(t *testing.T) {
	t.Parallel()
	Run(t, fakeHarness(compute.Capabilities{}, func(f *Fake) compute.Driver { return NewFaulty(f) }))
}
