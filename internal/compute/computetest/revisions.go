package computetest

import (
	"context"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// RevisionTarget is a driver that runs revisions.
type RevisionTarget = compute.Driver

// RevisionObserver lets the revision suite check a driver's effect from
// outside the driver.
type RevisionObserver interface {
	// Workload identifies the Agent's running gateway (local: PID and start
	// time; Docker: a container ID; Kubernetes: a Pod UID), or reports false
	// when none runs. It fails the test if the Agent has more than one.
	Workload(t *testing.T, agent compute.AgentRef) (string, bool)
	// WorkspaceFile reads a file of the Agent's workspace as the gateway
	// sees it; false when it does not exist.
	WorkspaceFile(t *testing.T, agent compute.AgentRef, name string) (string, bool)
	// AgentExists reports whether anything the driver owns for the Agent
	// (files, volumes, units, …) is left.
	AgentExists(t *testing.T, agent compute.AgentRef) bool
}

// RevisionOptions tunes RunRevisions for a driver.
type RevisionOptions struct {
	// Spec completes a spec the suite made (Document, Env, …) so that the
	// driver's gateway can become ready; nil leaves it as it is.
	Spec func(compute.RevisionSpec) compute.RevisionSpec
	// ReadyTimeout bounds the wait for readiness; default 60 s.
	ReadyTimeout time.Duration
	// Poll is the pause between two PrepareRevision calls; default 100 ms.
	Poll time.Duration
}

// InitialFileName and InitialFileContent are the initial workspace file
// every spec of the suite carries.
const (
	InitialFileName    = "USER.md"
	InitialFileContent = "# User\nconformance\n"
)

// RunRevisions checks the revision side of the driver contract: prepare
// reaches ready and is idempotent; a second revision replaces the first;
// retiring a superseded revision leaves the new one running; stop keeps the
// workspace; delete removes everything; the endpoint exists only while a
// gateway runs; deleting the Namespace stops its Agents. Every method is
// called twice where the contract says it is idempotent.
func RunRevisions(t *testing.T, d RevisionTarget, obs RevisionObserver, o RevisionOptions) {
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 60 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = 100 * time.Millisecond
	}
	ctx := context.Background()
	s := &suite{d: d, obs: obs, o: o}

	t.Run("PrepareBecomesReadyAndIsIdempotent", func(t *testing.T) {
		ag := s.newAgent(t)
		rev := s.spec(ag, 1)
		s.ready(t, rev)
		w1 := s.workload(t, ag)
		r, err := d.PrepareRevision(ctx, rev)
		if err != nil || !r.Ready {
			t.Fatalf("second PrepareRevision = %+v, %v; want ready", r, err)
		}
		if w2 := s.workload(t, ag); w2 != w1 {
			t.Fatalf("second PrepareRevision replaced the gateway: %s, then %s", w1, w2)
		}
		for i := 0; i < 2; i++ {
			if err := d.ActivateRevision(ctx, rev.RevisionRef); err != nil {
				t.Fatalf("ActivateRevision #%d: %v", i+1, err)
			}
		}
		if w3 := s.workload(t, ag); w3 != w1 {
			t.Fatalf("ActivateRevision replaced the gateway: %s, then %s", w1, w3)
		}
		if got, ok := obs.WorkspaceFile(t, ag, InitialFileName); !ok || got != InitialFileContent {
			t.Fatalf("initial file %s = %q, %v; want %q", InitialFileName, got, ok, InitialFileContent)
		}
		ep, ok := d.GatewayEndpoint(ctx, ag)
		if !ok || ep.URL == "" || ep.Token == "" {
			t.Fatalf("GatewayEndpoint of a running Agent = %+v, %v", ep, ok)
		}
		s.delete(t, ag)
	})

	t.Run("SecondRevisionReplacesFirst", func(t *testing.T) {
		ag := s.newAgent(t)
		rev1, rev2 := s.spec(ag, 1), s.spec(ag, 2)
		s.ready(t, rev1)
		if err := d.ActivateRevision(ctx, rev1.RevisionRef); err != nil {
			t.Fatal(err)
		}
		w1 := s.workload(t, ag)
		s.ready(t, rev2)
		w2 := s.workload(t, ag)
		if w1 == w2 {
			t.Fatalf("the second revision runs in the first one's gateway %s", w1)
		}
		if err := d.ActivateRevision(ctx, rev2.RevisionRef); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if err := d.RetireRevision(ctx, rev1.RevisionRef); err != nil {
				t.Fatalf("RetireRevision of the superseded revision #%d: %v", i+1, err)
			}
		}
		if w := s.workload(t, ag); w != w2 {
			t.Fatalf("retiring the superseded revision touched the new gateway: %s, then %s", w2, w)
		}
		if _, ok := d.GatewayEndpoint(ctx, ag); !ok {
			t.Fatal("no endpoint after retiring the superseded revision")
		}
		r, err := d.PrepareRevision(ctx, rev2)
		if err != nil || !r.Ready {
			t.Fatalf("PrepareRevision of the serving revision = %+v, %v; want ready", r, err)
		}
		if err := d.RetireRevision(ctx, compute.RevisionRef{AgentRef: ag, RevisionID: occ.NewID(occ.PrefixRevision)}); err != nil {
			t.Fatalf("RetireRevision of an unknown revision: %v", err)
		}
		if w := s.workload(t, ag); w != w2 {
			t.Fatalf("retiring an unknown revision touched the gateway: %s, then %s", w2, w)
		}
		// Retiring the revision that runs stops it.
		if err := d.RetireRevision(ctx, rev2.RevisionRef); err != nil {
			t.Fatal(err)
		}
		if w, ok := obs.Workload(t, ag); ok {
			t.Fatalf("gateway %s still runs after its revision was retired", w)
		}
		s.delete(t, ag)
	})

	t.Run("StopKeepsWorkspaceAndPrepareStartsAgain", func(t *testing.T) {
		ag := s.newAgent(t)
		rev := s.spec(ag, 1)
		s.ready(t, rev)
		if err := d.ActivateRevision(ctx, rev.RevisionRef); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if err := d.StopAgent(ctx, ag); err != nil {
				t.Fatalf("StopAgent #%d: %v", i+1, err)
			}
		}
		if w, ok := obs.Workload(t, ag); ok {
			t.Fatalf("gateway %s still runs after StopAgent", w)
		}
		if ep, ok := d.GatewayEndpoint(ctx, ag); ok {
			t.Fatalf("GatewayEndpoint of a stopped Agent = %+v", ep)
		}
		if got, ok := obs.WorkspaceFile(t, ag, InitialFileName); !ok || got != InitialFileContent {
			t.Fatalf("workspace file after StopAgent = %q, %v; want it kept", got, ok)
		}
		if !obs.AgentExists(t, ag) {
			t.Fatal("StopAgent removed the Agent's data")
		}
		if err := d.ActivateRevision(ctx, rev.RevisionRef); err == nil {
			t.Fatal("ActivateRevision of a stopped revision succeeded")
		}
		s.ready(t, rev)
		if _, ok := d.GatewayEndpoint(ctx, ag); !ok {
			t.Fatal("no endpoint after preparing the stopped revision again")
		}
		s.delete(t, ag)
	})

	t.Run("DeleteRemovesEverything", func(t *testing.T) {
		ag := s.newAgent(t)
		s.ready(t, s.spec(ag, 1))
		s.delete(t, ag)
		if err := d.StopAgent(ctx, ag); err != nil {
			t.Fatalf("StopAgent of a deleted Agent: %v", err)
		}
		if obs.AgentExists(t, ag) {
			t.Fatal("StopAgent of a deleted Agent made it exist again")
		}
	})

	t.Run("EndpointOnlyWhileRunning", func(t *testing.T) {
		ag := s.newAgent(t)
		if ep, ok := d.GatewayEndpoint(ctx, ag); ok {
			t.Fatalf("GatewayEndpoint of an Agent never prepared = %+v", ep)
		}
		if err := d.StopAgent(ctx, ag); err != nil {
			t.Fatalf("StopAgent of an Agent never prepared: %v", err)
		}
		if err := d.DeleteAgent(ctx, ag); err != nil {
			t.Fatalf("DeleteAgent of an Agent never prepared: %v", err)
		}
		if err := d.ActivateRevision(ctx, s.spec(ag, 1).RevisionRef); err == nil {
			t.Fatal("ActivateRevision of a revision never prepared succeeded")
		}
	})

	t.Run("DiagnoseIsBounded", func(t *testing.T) {
		ag := s.newAgent(t)
		rev := s.spec(ag, 1)
		s.ready(t, rev)
		dg, err := d.Diagnose(ctx, rev.RevisionRef)
		if err != nil {
			t.Fatal(err)
		}
		checks := validDiagnosis(t, rev.RevisionRef, dg)
		succeeded := 0
		for _, c := range checks {
			if c.Status == "succeeded" {
				succeeded++
			}
		}
		if succeeded == 0 {
			t.Fatalf("no check of a ready revision succeeded: %+v", checks)
		}
		if err := d.StopAgent(ctx, ag); err != nil {
			t.Fatal(err)
		}
		dg, err = d.Diagnose(ctx, rev.RevisionRef)
		if err != nil {
			t.Fatal(err)
		}
		checks = validDiagnosis(t, rev.RevisionRef, dg)
		for _, c := range checks {
			if c.Status != "unknown" {
				t.Fatalf("check of a stopped revision = %+v; want unknown", c)
			}
		}
		s.delete(t, ag)
	})

	t.Run("DeleteNamespaceStopsItsAgents", func(t *testing.T) {
		ag := s.newAgent(t)
		s.ready(t, s.spec(ag, 1))
		ns := compute.NamespaceRef{ID: ag.NamespaceID, Name: "conformance"}
		o, err := d.DeleteNamespace(ctx, ns)
		if err != nil || !o.Done {
			t.Fatalf("DeleteNamespace = %+v, %v; want done", o, err)
		}
		if w, ok := obs.Workload(t, ag); ok {
			t.Fatalf("gateway %s still runs after DeleteNamespace", w)
		}
		if obs.AgentExists(t, ag) {
			t.Fatal("Agent data left after DeleteNamespace")
		}
		if _, ok := d.GatewayEndpoint(ctx, ag); ok {
			t.Fatal("endpoint left after DeleteNamespace")
		}
	})
}

type suite struct {
	d   RevisionTarget
	obs RevisionObserver
	o   RevisionOptions
}

// newAgent makes a Namespace with one Agent, deleted when the test ends.
func (s *suite) newAgent(t *testing.T) compute.AgentRef {
	t.Helper()
	ns := compute.NamespaceRef{ID: occ.NewID(occ.PrefixNamespace), Name: "conformance"}
	if o, err := s.d.EnsureNamespace(context.Background(), ns); err != nil || !o.Done {
		t.Fatalf("EnsureNamespace = %+v, %v", o, err)
	}
	t.Cleanup(func() { _, _ = s.d.DeleteNamespace(context.Background(), ns) })
	return compute.AgentRef{NamespaceID: ns.ID, AgentID: occ.NewID(occ.PrefixAgent)}
}

// spec makes revision number n of the Agent.
func (s *suite) spec(ag compute.AgentRef, n int64) compute.RevisionSpec {
	sp := compute.RevisionSpec{
		RevisionRef:        compute.RevisionRef{AgentRef: ag, RevisionID: occ.NewID(occ.PrefixRevision)},
		Number:             n,
		ServicePrincipalID: occ.NewID(occ.PrefixServicePrincipal),
		ExecutionMode:      "embedded",
		Document:           map[string]any{},
		InitialFiles:       map[string]string{InitialFileName: InitialFileContent},
	}
	if s.o.Spec != nil {
		sp = s.o.Spec(sp)
	}
	return sp
}

// ready calls PrepareRevision until it reports ready, within ReadyTimeout.
func (s *suite) ready(t *testing.T, spec compute.RevisionSpec) compute.Readiness {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(s.o.ReadyTimeout)
	var last compute.Readiness
	var lastErr error
	for time.Now().Before(deadline) {
		last, lastErr = s.d.PrepareRevision(ctx, spec)
		if lastErr == nil && last.Ready {
			return last
		}
		if compute.PermanentCode(lastErr) != "" || last.Held {
			break
		}
		time.Sleep(s.o.Poll)
	}
	t.Fatalf("revision %d not ready within %v: last %+v, %v", spec.Number, s.o.ReadyTimeout, last, lastErr)
	return last
}

// workload returns the running gateway's identity or fails.
func (s *suite) workload(t *testing.T, ag compute.AgentRef) string {
	t.Helper()
	w, ok := s.obs.Workload(t, ag)
	if !ok {
		t.Fatal("no gateway runs for the Agent")
	}
	return w
}

// delete deletes the Agent twice and checks that nothing is left.
func (s *suite) delete(t *testing.T, ag compute.AgentRef) {
	t.Helper()
	for i := 0; i < 2; i++ {
		if err := s.d.DeleteAgent(context.Background(), ag); err != nil {
			t.Fatalf("DeleteAgent #%d: %v", i+1, err)
		}
	}
	if w, ok := s.obs.Workload(t, ag); ok {
		t.Fatalf("gateway %s still runs after DeleteAgent", w)
	}
	if s.obs.AgentExists(t, ag) {
		t.Fatal("Agent data left after DeleteAgent")
	}
	if _, ok := s.d.GatewayEndpoint(context.Background(), ag); ok {
		t.Fatal("endpoint left after DeleteAgent")
	}
}

// validDiagnosis checks a diagnosis is of the revision asked for and has
// the diagnostics shape of CONTRACT.md §7; it returns the checks.
func validDiagnosis(t *testing.T, rev compute.RevisionRef, dg compute.Diagnosis) []compute.Check {
	t.Helper()
	if dg.RevisionID != rev.RevisionID {
		t.Fatalf("diagnosis of revision %q; asked for %q", dg.RevisionID, rev.RevisionID)
	}
	validChecks(t, dg.Checks)
	return dg.Checks
}

// validChecks checks the diagnostics shape of CONTRACT.md §7.
func validChecks(t *testing.T, checks []compute.Check) {
	t.Helper()
	if len(checks) == 0 || len(checks) > compute.MaxChecks {
		t.Fatalf("%d checks; want 1 to %d", len(checks), compute.MaxChecks)
	}
	for _, c := range checks {
		if c.Component == "" || c.Check == "" || c.Code == "" {
			t.Fatalf("check without component, name or code: %+v", c)
		}
		switch c.Status {
		case "succeeded", "failed", "unknown":
		default:
			t.Fatalf("check %s/%s has status %q", c.Component, c.Check, c.Status)
		}
	}
}
