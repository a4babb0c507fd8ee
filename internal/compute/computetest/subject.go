package computetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// subject is one fresh harness and the helpers a subtest acts through.
type subject struct {
	h    Harness
	d    compute.Driver
	obs  Observer
	o    Options
	caps compute.Capabilities
	// mode is the execution mode of the suite's specs: the first the
	// driver declares.
	mode string
}

// newSubject makes a harness and checks it is complete.
func newSubject(t *testing.T, newHarness func(t *testing.T) Harness) *subject {
	t.Helper()
	h := newHarness(t)
	for _, missing := range []struct {
		nil  bool
		what string
	}{
		{h.Driver == nil, "Harness.Driver"},
		{h.Observer == nil, "Harness.Observer"},
		{h.Reopen == nil, "Harness.Reopen"},
		{h.Options.SlowStart == nil, "Harness.Options.SlowStart"},
		{h.Options.RejectCredential == nil, "Harness.Options.RejectCredential"},
	} {
		if missing.nil {
			t.Fatalf("%s is required", missing.what)
		}
	}
	s := &subject{h: h, d: h.Driver, obs: h.Observer, o: h.Options, caps: h.Driver.Capabilities()}
	if len(s.caps.ExecutionModes) == 0 {
		t.Fatalf("driver %s declares no execution mode", h.Driver.Name())
	}
	if len(s.caps.PluginApprovalPolicies) > 0 && s.o.PluginWarnings == nil {
		t.Fatal("Harness.Options.PluginWarnings is required of a driver that declares plugin approval policies")
	}
	s.mode = s.caps.ExecutionModes[0]
	if s.o.ReadyTimeout <= 0 {
		s.o.ReadyTimeout = 60 * time.Second
	}
	if s.o.Poll <= 0 {
		s.o.Poll = 100 * time.Millisecond
	}
	return s
}

// namespace ensures a new Namespace, deleted when the test ends.
func (s *subject) namespace(t *testing.T) compute.NamespaceRef {
	t.Helper()
	ns := compute.NamespaceRef{ID: occ.NewID(occ.PrefixNamespace), Name: "conformance"}
	if o, err := s.d.EnsureNamespace(context.Background(), ns); err != nil || !o.Done {
		t.Fatalf("EnsureNamespace = %+v, %v; want done", o, err)
	}
	t.Cleanup(func() { _, _ = s.d.DeleteNamespace(context.Background(), ns) })
	return ns
}

// agent makes a Namespace with one Agent.
func (s *subject) agent(t *testing.T) compute.AgentRef {
	t.Helper()
	return agentIn(s.namespace(t))
}

// agentIn names a new Agent of the Namespace.
func agentIn(ns compute.NamespaceRef) compute.AgentRef {
	return compute.AgentRef{NamespaceID: ns.ID, AgentID: occ.NewID(occ.PrefixAgent)}
}

// spec makes revision number n of the Agent, completed by Options.Spec.
func (s *subject) spec(ag compute.AgentRef, n int64) compute.RevisionSpec {
	return s.specIn(ag, n, s.mode)
}

// specIn makes revision number n of the Agent in an execution mode.
func (s *subject) specIn(ag compute.AgentRef, n int64, mode string) compute.RevisionSpec {
	sp := compute.RevisionSpec{
		RevisionRef:        compute.RevisionRef{AgentRef: ag, RevisionID: occ.NewID(occ.PrefixRevision)},
		Number:             n,
		ServicePrincipalID: occ.NewID(occ.PrefixServicePrincipal),
		ExecutionMode:      mode,
		Document:           map[string]any{},
	}
	if s.o.Spec != nil {
		sp = s.o.Spec(sp)
	}
	return sp
}

// await calls PrepareRevision on d until done accepts its answer, within
// ReadyTimeout; an answer outside the contract's vocabulary, a permanent
// error or a held failure done does not accept ends the wait at once. It
// does not touch t: goroutines call it.
func (s *subject) await(d compute.Driver, spec compute.RevisionSpec, what string, done func(compute.Readiness) bool) (compute.Readiness, error) {
	deadline := time.Now().Add(s.o.ReadyTimeout)
	for {
		r, err := d.PrepareRevision(context.Background(), spec)
		if err == nil {
			if verr := validReadiness(r); verr != nil {
				return r, fmt.Errorf("revision %d: %w", spec.Number, verr)
			}
		}
		if err == nil && done(r) {
			return r, nil
		}
		if compute.PermanentCode(err) != "" || (err == nil && r.Held) || time.Now().After(deadline) {
			return r, fmt.Errorf("revision %d not %s within %v: last %+v, %v", spec.Number, what, s.o.ReadyTimeout, r, err)
		}
		time.Sleep(s.o.Poll)
	}
}

// serving makes a new Agent whose revision 1 is ready and active.
func (s *subject) serving(t *testing.T) (compute.AgentRef, compute.RevisionSpec) {
	t.Helper()
	ag := s.agent(t)
	rev := s.spec(ag, 1)
	s.ready(t, rev)
	activate(t, s.d, rev.RevisionRef)
	return ag, rev
}

// readyOn waits until d reports the revision ready.
func (s *subject) readyOn(t *testing.T, d compute.Driver, spec compute.RevisionSpec) compute.Readiness {
	t.Helper()
	r, err := s.await(d, spec, "ready", isReady)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// ready waits until the harness's driver reports the revision ready.
func (s *subject) ready(t *testing.T, spec compute.RevisionSpec) compute.Readiness {
	t.Helper()
	return s.readyOn(t, s.d, spec)
}

func isReady(r compute.Readiness) bool { return r.Ready }

// workload returns the Agent's only workload, or fails.
func (s *subject) workload(t *testing.T, ag compute.AgentRef) string {
	t.Helper()
	ws := s.obs.Workloads(t, ag)
	if len(ws) != 1 {
		t.Fatalf("Agent %s has workloads %v; want exactly one", ag.AgentID, ws)
	}
	return ws[0]
}

// noWorkload fails if anything runs for the Agent after what was done.
func (s *subject) noWorkload(t *testing.T, ag compute.AgentRef, after string) {
	t.Helper()
	if ws := s.obs.Workloads(t, ag); len(ws) != 0 {
		t.Fatalf("workloads %v still run after %s", ws, after)
	}
}

// endpointOn returns the Agent's endpoint from d, or fails.
func (s *subject) endpointOn(t *testing.T, d compute.Driver, ag compute.AgentRef) compute.Endpoint {
	t.Helper()
	ep, ok := d.GatewayEndpoint(context.Background(), ag)
	if !ok {
		t.Fatalf("no endpoint for running Agent %s", ag.AgentID)
	}
	return ep
}

// noEndpointOn fails if d gives an endpoint for the Agent after what was
// done.
func noEndpointOn(t *testing.T, d compute.Driver, ag compute.AgentRef, after string) {
	t.Helper()
	if ep, ok := d.GatewayEndpoint(context.Background(), ag); ok {
		t.Fatalf("endpoint %+v after %s", ep, after)
	}
}

// activate makes the revision the serving one on d, or fails.
func activate(t *testing.T, d compute.Driver, rev compute.RevisionRef) {
	t.Helper()
	if err := d.ActivateRevision(context.Background(), rev); err != nil {
		t.Fatalf("ActivateRevision: %v", err)
	}
}

// stop stops the Agent through d, or fails.
func stop(t *testing.T, d compute.Driver, ag compute.AgentRef) {
	t.Helper()
	if err := d.StopAgent(context.Background(), ag); err != nil {
		t.Fatalf("StopAgent: %v", err)
	}
}

// deleteAgent deletes the Agent twice and checks that nothing is left.
func (s *subject) deleteAgent(t *testing.T, ag compute.AgentRef) {
	t.Helper()
	for i := 0; i < 2; i++ {
		if err := s.d.DeleteAgent(context.Background(), ag); err != nil {
			t.Fatalf("DeleteAgent #%d: %v", i+1, err)
		}
	}
	s.gone(t, ag, "DeleteAgent")
}

// gone fails if anything of the Agent is left after what was done.
func (s *subject) gone(t *testing.T, ag compute.AgentRef, after string) {
	t.Helper()
	s.noWorkload(t, ag, after)
	if s.obs.AgentExists(t, ag) {
		t.Fatalf("Agent data left after %s", after)
	}
	noEndpointOn(t, s.d, ag, after)
}
