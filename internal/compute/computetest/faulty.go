package computetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/openclaw/occ/internal/compute"
)

// Faulty wraps any driver and injects failures into the calls of the
// whole contract, before the call reaches the driver or after it took
// effect, for worker tests of retries, exhaustion, permanent errors and
// outcome-unknown calls. It counts every call made through it. Safe for
// concurrent use.
type Faulty struct {
	// Driver is the wrapped driver; Name and Capabilities go straight to
	// it.
	compute.Driver
	calls  callCounts
	mu     sync.Mutex
	faults []*Fault // in injection order; spent ones are dropped
}

var _ compute.Driver = (*Faulty)(nil)

// Fault is one failure to inject.
type Fault struct {
	// Method is the method whose calls fail (MethodPrepareRevision, …);
	// "": every method keyed by ID.
	Method string
	// ID is the Namespace ID of a Namespace method, the Agent ID of any
	// other.
	ID string
	// After lets the call reach the driver and take effect, then returns
	// the failure instead of its answer (the outcome-unknown case);
	// otherwise the call fails before it reaches the driver.
	After bool
	// Times is how many matching calls fail; Forever: every one.
	Times int
	// Permanent, when set, makes the failure compute.Permanent with this
	// code; otherwise it is retryable. Either wraps ErrInjected.
	Permanent string
	// Unavailable, when set (and Permanent is not), marks the failure
	// compute.Unavailable: the driver's dependency cannot be reached.
	Unavailable bool
	// PermanentData is the permanent failure's error.data
	// (compute.PermanentWith).
	PermanentData map[string]any
	// Then, when set, runs as the fault fires, before the failure is
	// returned: a test's failpoint, such as killing occ's database pool
	// to stand for a crash at this call.
	Then func()
}

// Forever is Fault.Times for a fault that never wears off.
const Forever = -1

// ErrInjected is the error of every injected failure. A failed
// GatewayEndpoint answers no endpoint instead.
var ErrInjected = errors.New("computetest: injected driver failure")

// NewFaulty wraps d.
func NewFaulty(d compute.Driver) *Faulty { return &Faulty{Driver: d} }

// Inject adds a fault; faults for the same call apply in the order they
// were injected, each until it is spent. It panics on an unknown method.
func (f *Faulty) Inject(ft Fault) {
	if ft.Method != "" && !isMethod(ft.Method) {
		panic(fmt.Sprintf("computetest: Inject: %q is not a method keyed by ID", ft.Method))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, &ft)
}

// FailTimes replaces the faults for the ID: the next n calls of any
// method for it fail retryably before reaching the driver (Forever: all).
func (f *Faulty) FailTimes(id string, n int) {
	f.Heal(id)
	f.Inject(Fault{ID: id, Times: n})
}

// FailPermanently replaces the faults for the ID: every call for it fails
// with a permanent code before reaching the driver.
func (f *Faulty) FailPermanently(id, code string) {
	f.Heal(id)
	f.Inject(Fault{ID: id, Times: Forever, Permanent: code})
}

// Heal removes every fault for the ID.
func (f *Faulty) Heal(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = slices.DeleteFunc(f.faults, func(ft *Fault) bool { return ft.ID == id })
}

// Calls is how many calls of any method were made for the ID, failed
// ones included.
func (f *Faulty) Calls(id string) int { return f.calls.total(id) }

// CallsOf is how many calls of one method were made for the ID, failed
// ones included.
func (f *Faulty) CallsOf(method, id string) int { return f.calls.of(method, id) }

// take returns the failure of the first live fault matching the call, and
// spends it, after running its Then; nil when none matches.
func (f *Faulty) take(method, id string, after bool) error {
	then, err := f.match(method, id, after)
	if then != nil {
		then()
	}
	return err
}

func (f *Faulty) match(method, id string, after bool) (func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ft := range f.faults {
		if ft.ID != id || ft.After != after || (ft.Method != "" && ft.Method != method) || ft.Times == 0 {
			continue
		}
		if ft.Times > 0 {
			ft.Times--
		}
		err := ErrInjected
		switch {
		case ft.Permanent != "":
			err = compute.PermanentWith(ft.Permanent, ft.PermanentData, ErrInjected)
		case ft.Unavailable:
			err = compute.Unavailable(ErrInjected)
		}
		f.faults = slices.DeleteFunc(f.faults, func(ft *Fault) bool { return ft.Times == 0 })
		return ft.Then, err
	}
	return nil, nil
}

// through counts a call and makes it with the faults that match it.
func through[T any](f *Faulty, method, id string, call func() (T, error)) (T, error) {
	var zero T
	f.calls.add(method, id)
	if err := f.take(method, id, false); err != nil {
		return zero, err
	}
	v, err := call()
	if ferr := f.take(method, id, true); ferr != nil {
		return zero, ferr
	}
	return v, err
}

// done adapts a call that returns only an error.
func done(err error) (struct{}, error) { return struct{}{}, err }

// EnsureNamespace implements compute.Driver with injected failures.
func (f *Faulty) EnsureNamespace(ctx context.Context, ns compute.NamespaceRef) (compute.NamespaceObservation, error) {
	return through(f, MethodEnsureNamespace, ns.ID, func() (compute.NamespaceObservation, error) { return f.Driver.EnsureNamespace(ctx, ns) })
}

// DeleteNamespace implements compute.Driver with injected failures.
func (f *Faulty) DeleteNamespace(ctx context.Context, ns compute.NamespaceRef) (compute.NamespaceObservation, error) {
	return through(f, MethodDeleteNamespace, ns.ID, func() (compute.NamespaceObservation, error) { return f.Driver.DeleteNamespace(ctx, ns) })
}

// PrepareRevision implements compute.Driver with injected failures.
func (f *Faulty) PrepareRevision(ctx context.Context, spec compute.RevisionSpec) (compute.Readiness, error) {
	return through(f, MethodPrepareRevision, spec.AgentID, func() (compute.Readiness, error) { return f.Driver.PrepareRevision(ctx, spec) })
}

// ActivateRevision implements compute.Driver with injected failures.
func (f *Faulty) ActivateRevision(ctx context.Context, rev compute.RevisionRef) error {
	_, err := through(f, MethodActivateRevision, rev.AgentID, func() (struct{}, error) { return done(f.Driver.ActivateRevision(ctx, rev)) })
	return err
}

// RetireRevision implements compute.Driver with injected failures.
func (f *Faulty) RetireRevision(ctx context.Context, rev compute.RevisionRef) error {
	_, err := through(f, MethodRetireRevision, rev.AgentID, func() (struct{}, error) { return done(f.Driver.RetireRevision(ctx, rev)) })
	return err
}

// StopAgent implements compute.Driver with injected failures.
func (f *Faulty) StopAgent(ctx context.Context, ag compute.AgentRef) error {
	_, err := through(f, MethodStopAgent, ag.AgentID, func() (struct{}, error) { return done(f.Driver.StopAgent(ctx, ag)) })
	return err
}

// DeleteAgent implements compute.Driver with injected failures.
func (f *Faulty) DeleteAgent(ctx context.Context, ag compute.AgentRef) error {
	_, err := through(f, MethodDeleteAgent, ag.AgentID, func() (struct{}, error) { return done(f.Driver.DeleteAgent(ctx, ag)) })
	return err
}

// errNoEndpoint carries "no endpoint" through a call.
var errNoEndpoint = errors.New("no endpoint")

// GatewayEndpoint implements compute.Driver; an injected failure answers
// no endpoint.
func (f *Faulty) GatewayEndpoint(ctx context.Context, ag compute.AgentRef) (compute.Endpoint, bool) {
	ep, err := through(f, MethodGatewayEndpoint, ag.AgentID, func() (compute.Endpoint, error) {
		ep, ok := f.Driver.GatewayEndpoint(ctx, ag)
		if !ok {
			return ep, errNoEndpoint
		}
		return ep, nil
	})
	return ep, err == nil
}

// Logs implements compute.Driver with injected failures.
func (f *Faulty) Logs(ctx context.Context, rev compute.RevisionRef, opts compute.LogOptions) (compute.Logs, error) {
	return through(f, MethodLogs, rev.AgentID, func() (compute.Logs, error) { return f.Driver.Logs(ctx, rev, opts) })
}

// Diagnose implements compute.Driver with injected failures.
func (f *Faulty) Diagnose(ctx context.Context, rev compute.RevisionRef) (compute.Diagnosis, error) {
	return through(f, MethodDiagnose, rev.AgentID, func() (compute.Diagnosis, error) { return f.Driver.Diagnose(ctx, rev) })
}
