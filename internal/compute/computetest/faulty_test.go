package computetest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// faultyFake is a Faulty over a new Fake, a Namespace and an Agent of it.
func faultyFake(t *testing.T) (*Faulty, *Fake, compute.NamespaceRef, compute.RevisionSpec) {
	t.Helper()
	fake := NewFake(compute.Capabilities{})
	ns := compute.NamespaceRef{ID: occ.NewID(occ.PrefixNamespace)}
	spec := compute.RevisionSpec{RevisionRef: compute.RevisionRef{AgentRef: agentIn(ns), RevisionID: occ.NewID(occ.PrefixRevision)},
		Number: 1, ExecutionMode: occ.ExecutionEmbedded}
	return NewFaulty(fake), fake, ns, spec
}

// injected fails unless err is an injected failure with this permanent
// code ("" retryable).
func injected(t *testing.T, what string, err error, code string) {
	t.Helper()
	if !errors.Is(err, ErrInjected) || compute.PermanentCode(err) != code {
		t.Fatalf("%s = %v; want an injected failure with permanent code %q", what, err, code)
	}
}

func TestFaultyBeforeNeverReachesTheDriver(t *testing.T) {
	t.Parallel()
	f, fake, _, spec := faultyFake(t)
	f.Inject(Fault{Method: MethodPrepareRevision, ID: spec.AgentID, Times: 2})
	for i := 0; i < 2; i++ {
		_, err := f.PrepareRevision(context.Background(), spec)
		injected(t, "PrepareRevision", err, "")
	}
	if n := fake.Calls(MethodPrepareRevision, spec.AgentID); n != 0 {
		t.Fatalf("%d calls reached the driver; want none", n)
	}
	if _, ok := fake.Running(spec.AgentID); ok {
		t.Fatal("a failed-before call took effect")
	}
	if r, err := f.PrepareRevision(context.Background(), spec); err != nil || !r.Ready {
		t.Fatalf("third PrepareRevision = %+v, %v; want ready", r, err)
	}
	if got := f.CallsOf(MethodPrepareRevision, spec.AgentID); got != 3 {
		t.Fatalf("CallsOf = %d; want 3", got)
	}
	if got := fake.Calls(MethodPrepareRevision, spec.AgentID); got != 1 {
		t.Fatalf("calls that reached the driver = %d; want 1", got)
	}
}

func TestFaultyAfterTakesEffectThenFails(t *testing.T) {
	t.Parallel()
	f, fake, ns, spec := faultyFake(t)
	f.Inject(Fault{Method: MethodEnsureNamespace, ID: ns.ID, After: true, Times: 1})
	f.Inject(Fault{Method: MethodPrepareRevision, ID: spec.AgentID, After: true, Times: 1, Permanent: "LOST"})
	_, err := f.EnsureNamespace(context.Background(), ns)
	injected(t, "EnsureNamespace", err, "")
	if !fake.NamespaceExists(ns.ID) {
		t.Fatal("a failed-after EnsureNamespace did not take effect")
	}
	_, err = f.PrepareRevision(context.Background(), spec)
	injected(t, "PrepareRevision", err, "LOST")
	if rev, ok := fake.Running(spec.AgentID); !ok || rev != spec.RevisionID {
		t.Fatal("a failed-after PrepareRevision did not take effect")
	}
	if o, err := f.EnsureNamespace(context.Background(), ns); err != nil || !o.Done {
		t.Fatalf("EnsureNamespace after the fault was spent = %+v, %v", o, err)
	}
}

func TestFaultyPermanentForEveryMethodOfAnID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, _, _, spec := faultyFake(t)
	if _, err := f.PrepareRevision(ctx, spec); err != nil {
		t.Fatal(err)
	}
	f.Inject(Fault{ID: spec.AgentID, Times: Forever, Permanent: "BROKEN"})
	for i := 0; i < 3; i++ {
		_, err := f.PrepareRevision(ctx, spec)
		injected(t, "PrepareRevision", err, "BROKEN")
		injected(t, "ActivateRevision", f.ActivateRevision(ctx, spec.RevisionRef), "BROKEN")
		injected(t, "RetireRevision", f.RetireRevision(ctx, spec.RevisionRef), "BROKEN")
		injected(t, "StopAgent", f.StopAgent(ctx, spec.AgentRef), "BROKEN")
		injected(t, "DeleteAgent", f.DeleteAgent(ctx, spec.AgentRef), "BROKEN")
		_, err = f.Diagnose(ctx, spec.RevisionRef)
		injected(t, "Diagnose", err, "BROKEN")
		if ep, ok := f.GatewayEndpoint(ctx, spec.AgentRef); ok {
			t.Fatalf("GatewayEndpoint with a fault = %+v", ep)
		}
	}
	if _, err := f.EnsureNamespace(ctx, compute.NamespaceRef{ID: spec.NamespaceID}); err != nil {
		t.Fatalf("a fault for an Agent failed its Namespace: %v", err)
	}
	f.Heal(spec.AgentID)
	if _, ok := f.GatewayEndpoint(ctx, spec.AgentRef); !ok {
		t.Fatal("no endpoint after Heal")
	}
	if got := f.Calls(spec.AgentID); got != 1+3*7+1 {
		t.Fatalf("Calls = %d; want %d", got, 1+3*7+1)
	}
}

func TestFaultyMethodFilterAndOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, _, _, spec := faultyFake(t)
	f.Inject(Fault{Method: MethodStopAgent, ID: spec.AgentID, Times: 1, Permanent: "FIRST"})
	f.Inject(Fault{Method: MethodStopAgent, ID: spec.AgentID, Times: 1, Permanent: "SECOND"})
	if err := f.DeleteAgent(ctx, spec.AgentRef); err != nil {
		t.Fatalf("a StopAgent fault failed DeleteAgent: %v", err)
	}
	injected(t, "first StopAgent", f.StopAgent(ctx, spec.AgentRef), "FIRST")
	injected(t, "second StopAgent", f.StopAgent(ctx, spec.AgentRef), "SECOND")
	if err := f.StopAgent(ctx, spec.AgentRef); err != nil {
		t.Fatalf("third StopAgent: %v", err)
	}
}

// TestFaultyNamespaceMethods: FailTimes, FailPermanently and Heal keep the
// meaning the API tests rely on, each replacing the ID's faults.
func TestFaultyNamespaceMethods(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, fake, ns, _ := faultyFake(t)
	f.FailTimes(ns.ID, 2)
	for i := 0; i < 2; i++ {
		_, err := f.DeleteNamespace(ctx, ns)
		injected(t, "DeleteNamespace", err, "")
	}
	if o, err := f.EnsureNamespace(ctx, ns); err != nil || !o.Done {
		t.Fatalf("EnsureNamespace after two failures = %+v, %v", o, err)
	}
	f.FailPermanently(ns.ID, "GONE")
	f.FailTimes(ns.ID, 1)
	_, err := f.EnsureNamespace(ctx, ns)
	injected(t, "EnsureNamespace after FailTimes replaced FailPermanently", err, "")
	if _, err := f.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	f.FailTimes(ns.ID, Forever)
	for i := 0; i < 5; i++ {
		_, err := f.EnsureNamespace(ctx, ns)
		injected(t, "EnsureNamespace failing forever", err, "")
	}
	f.FailPermanently(ns.ID, "GONE")
	_, err = f.DeleteNamespace(ctx, ns)
	injected(t, "DeleteNamespace", err, "GONE")
	f.Heal(ns.ID)
	if _, err := f.DeleteNamespace(ctx, ns); err != nil || fake.NamespaceExists(ns.ID) {
		t.Fatalf("DeleteNamespace after Heal: %v", err)
	}
	if got, reached := f.Calls(ns.ID), fake.Calls(MethodEnsureNamespace, ns.ID)+fake.Calls(MethodDeleteNamespace, ns.ID); got != 12 || reached != 3 {
		t.Fatalf("Calls = %d, reached the driver %d; want 12 and 3", got, reached)
	}
}

func TestFaultyCountsExactlyUnderConcurrency(t *testing.T) {
	t.Parallel()
	f, _, ns, _ := faultyFake(t)
	f.FailTimes(ns.ID, 10)
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.EnsureNamespace(context.Background(), ns); err != nil {
				mu.Lock()
				failed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if failed != 10 || f.Calls(ns.ID) != 50 {
		t.Fatalf("%d failed of %d calls; want 10 of 50", failed, f.Calls(ns.ID))
	}
}

func TestFaultyInjectRefusesAnUnknownMethod(t *testing.T) {
	t.Parallel()
	f, _, _, _ := faultyFake(t)
	defer func() {
		if recover() == nil {
			t.Fatal("Inject of an unknown method did not panic")
		}
	}()
	f.Inject(Fault{Method: "Capabilities", ID: "x"})
}
