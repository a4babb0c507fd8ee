package computetest

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// fakeSpec is revision n of an Agent of a new Namespace of the Fake.
func fakeSpec(t *testing.T, f *Fake, ag compute.AgentRef, n int64) compute.RevisionSpec {
	t.Helper()
	if _, err := f.EnsureNamespace(context.Background(), compute.NamespaceRef{ID: ag.NamespaceID}); err != nil {
		t.Fatal(err)
	}
	return compute.RevisionSpec{RevisionRef: compute.RevisionRef{AgentRef: ag, RevisionID: occ.NewID(occ.PrefixRevision)},
		Number: n, ExecutionMode: occ.ExecutionEmbedded}
}

func newAgentRef() compute.AgentRef {
	return agentIn(compute.NamespaceRef{ID: occ.NewID(occ.PrefixNamespace)})
}

func prepare(t *testing.T, f *Fake, spec compute.RevisionSpec) compute.Readiness {
	t.Helper()
	r, err := f.PrepareRevision(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestFakeCapabilities(t *testing.T) {
	t.Parallel()
	if got := NewFake(compute.Capabilities{}).Capabilities(); !reflect.DeepEqual(got, FakeCapabilities()) {
		t.Fatalf("zero capabilities gave %+v; want FakeCapabilities", got)
	}
	caps := compute.Capabilities{ExecutionModes: []string{occ.ExecutionEmbedded}, NativeAdmin: true}
	f := NewFake(caps)
	caps.ExecutionModes[0] = "changed"
	if got := f.Capabilities(); got.ExecutionModes[0] != occ.ExecutionEmbedded || !got.NativeAdmin || got.WorkspaceSetup {
		t.Fatalf("Capabilities = %+v; want what NewFake was given", got)
	}
}

// TestFakeNotReady: n answers not ready with the reason and evidence, then
// ready; n < 0 until cleared with 0.
func TestFakeNotReady(t *testing.T) {
	t.Parallel()
	f := NewFake(compute.Capabilities{})
	ag := newAgentRef()
	spec := fakeSpec(t, f, ag, 1)
	rf := &compute.RuntimeFailure{Component: "gateway", Check: "readyz", CheckedAt: time.Now(), Code: "UNAVAILABLE"}
	f.NotReady(ag.AgentID, 2, occ.PendingWorkloadUnschedulable, rf)
	rf.Code = "CHANGED BY THE CALLER"
	for i := 0; i < 2; i++ {
		r := prepare(t, f, spec)
		if r.Ready || r.PendingReason != occ.PendingWorkloadUnschedulable || r.RuntimeFailure == nil || r.RuntimeFailure.Code != "UNAVAILABLE" {
			t.Fatalf("answer %d = %+v; want not ready", i+1, r)
		}
	}
	if r := prepare(t, f, spec); !r.Ready {
		t.Fatalf("third answer = %+v; want ready", r)
	}
	f.NotReady(ag.AgentID, -1, occ.PendingGatewayStarting, nil)
	for i := 0; i < 5; i++ {
		if r := prepare(t, f, spec); r.Ready || r.PendingReason != occ.PendingGatewayStarting {
			t.Fatalf("answer = %+v; want not ready until cleared", r)
		}
	}
	f.NotReady(ag.AgentID, 0, "", nil)
	if r := prepare(t, f, spec); !r.Ready {
		t.Fatalf("answer after clearing = %+v; want ready", r)
	}
}

func TestFakeHoldAndWarn(t *testing.T) {
	t.Parallel()
	f := NewFake(compute.Capabilities{})
	ag := newAgentRef()
	spec := fakeSpec(t, f, ag, 1)
	ws := []compute.Warning{{Code: "PLUGIN_AUTH_REQUIRED", PluginID: "beta@x"}}
	f.Warn(ag.AgentID, ws)
	rf := &compute.RuntimeFailure{Component: "gateway", Check: "model-probe", CheckedAt: time.Now(), Code: compute.HeldModelProbeFailed,
		Cause: &compute.FailureCause{Kind: "PROBE_STATUS", Detail: "billing"}}
	f.Hold(ag.AgentID, rf)
	f.NotReady(ag.AgentID, 1, occ.PendingGatewayStarting, nil)
	r := prepare(t, f, spec)
	if r.Ready || !r.Held || !reflect.DeepEqual(r.RuntimeFailure, rf) || r.RuntimeFailure == rf {
		t.Fatalf("held answer = %+v; want a copy of %+v", r, rf)
	}
	f.Hold(ag.AgentID, nil)
	if r := prepare(t, f, spec); r.Ready || r.PendingReason != occ.PendingGatewayStarting {
		t.Fatalf("answer after Hold(nil) = %+v; want the NotReady answer it took precedence over", r)
	}
	if r := prepare(t, f, spec); !r.Ready || !reflect.DeepEqual(r.Warnings, ws) {
		t.Fatalf("ready answer = %+v; want warnings %+v", r, ws)
	}
	f.Warn(ag.AgentID, nil)
	if r := prepare(t, f, spec); !r.Ready || len(r.Warnings) != 0 {
		t.Fatalf("answer after Warn(nil) = %+v", r)
	}
}

// TestFakeRecords: Running, Active, Env, Files, Calls, Deleted and
// NamespaceExists follow the calls.
func TestFakeRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := NewFake(compute.Capabilities{})
	ag := newAgentRef()
	spec := fakeSpec(t, f, ag, 1)
	spec.Env = map[string]string{"K": "v1"}
	spec.InitialFiles = map[string]string{"USER.md": "u"}
	prepare(t, f, spec)
	if err := f.ActivateRevision(ctx, spec.RevisionRef); err != nil {
		t.Fatal(err)
	}
	spec2 := fakeSpec(t, f, ag, 2)
	spec2.Env = map[string]string{"K": "v2"}
	spec2.InitialFiles = map[string]string{"USER.md": "again", "NEW.md": "n"}
	prepare(t, f, spec2)
	if rev, ok := f.Running(ag.AgentID); !ok || rev != spec2.RevisionID || f.Active(ag.AgentID) != "" {
		t.Fatalf("Running = %s, %v, Active = %q; want the second revision running, none active", rev, ok, f.Active(ag.AgentID))
	}
	env := f.Env(ag.AgentID)
	env["K"] = "changed by the caller"
	if got := f.Env(ag.AgentID); got["K"] != "v2" {
		t.Fatalf("Env = %v; want the second revision's", got)
	}
	if got := f.Files(ag.AgentID); !reflect.DeepEqual(got, map[string]string{"USER.md": "u"}) {
		t.Fatalf("Files = %v; want the first initial files only", got)
	}
	if err := f.StopAgent(ctx, ag); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Running(ag.AgentID); ok || f.Env(ag.AgentID)["K"] != "v2" || f.Files(ag.AgentID) == nil {
		t.Fatal("after StopAgent: want nothing running, the last Env and the files kept")
	}
	if f.Deleted(ag.AgentID) {
		t.Fatal("Deleted before DeleteAgent")
	}
	if _, err := f.DeleteNamespace(ctx, compute.NamespaceRef{ID: ag.NamespaceID}); err != nil {
		t.Fatal(err)
	}
	if !f.Deleted(ag.AgentID) || f.Files(ag.AgentID) != nil || f.NamespaceExists(ag.NamespaceID) {
		t.Fatal("after DeleteNamespace: want the Agent deleted with its files and the Namespace gone")
	}
	prepare(t, f, spec)
	if f.Deleted(ag.AgentID) || !f.NamespaceExists(ag.NamespaceID) {
		t.Fatal("after a new PrepareRevision: want the Agent and its Namespace back")
	}
	if got := f.Calls(MethodPrepareRevision, ag.AgentID); got != 3 {
		t.Fatalf("Calls(PrepareRevision) = %d; want 3", got)
	}
	if got := f.Reopen().Calls(MethodStopAgent, ag.AgentID); got != 1 {
		t.Fatalf("Calls(StopAgent) of a reopened Fake = %d; want 1", got)
	}
}

// TestFakeConcurrentUse: concurrent calls and switches on many Agents (run
// with -race).
func TestFakeConcurrentUse(t *testing.T) {
	t.Parallel()
	f := NewFake(compute.Capabilities{})
	var wg sync.WaitGroup
	var ags []compute.AgentRef
	for i := 0; i < 8; i++ {
		ag := newAgentRef()
		ags = append(ags, ag)
		spec := fakeSpec(t, f, ag, 1)
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				_, _ = f.PrepareRevision(context.Background(), spec)
				_, _ = f.GatewayEndpoint(context.Background(), ag)
				_ = f.StopAgent(context.Background(), ag)
			}
		}()
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				f.NotReady(ag.AgentID, 1, occ.PendingGatewayStarting, nil)
				f.Warn(ag.AgentID, []compute.Warning{{Code: "PLUGIN_INSTALL_FAILED", PluginID: "a@b"}})
				_, _ = f.Running(ag.AgentID)
				_ = f.Env(ag.AgentID)
			}
		}()
	}
	wg.Wait()
	for _, ag := range ags {
		if got := f.Calls(MethodPrepareRevision, ag.AgentID); got != 20 {
			t.Fatalf("Calls(PrepareRevision) = %d; want 20", got)
		}
	}
}
