package computetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// Fake is an in-memory compute.Driver that honours the whole contract (it
// passes Run), with switches for worker tests: NotReady, Hold, Warn. Its
// "workloads" are records; its endpoints point at a closed loopback port.
// Safe for concurrent use.
type Fake struct {
	caps compute.Capabilities
	w    *fakeWorld
}

var _ compute.Driver = (*Fake)(nil)

// fakeWorld is the state a Fake and every Fake reopened from it share:
// what a host or cluster would hold, plus the switches and call counts.
type fakeWorld struct {
	mu             sync.Mutex
	namespaces     map[string]bool
	agents         map[string]*fakeAgent // by Agent ID
	deleted        map[string]bool
	lastEnv        map[string]map[string]string
	lastHarnessEnv map[string]map[string]string
	notReady       map[string]fakeNotReady
	held           map[string]*compute.RuntimeFailure
	warnings       map[string][]compute.Warning
	installing     map[string]compute.InstallProgress
	probing        map[string]chan struct{}
	started        int // workloads started so far, to name the next
	calls          callCounts
}

// fakeAgent is what the Fake keeps of one Agent: its stored state, and
// in memory the environment of its running workload.
type fakeAgent struct {
	namespace    string
	secret       string // the token, or the password in trusted-proxy mode
	revision     string // whose workload runs; "" when none
	workload     string
	ready        bool // the last PrepareRevision of revision answered ready
	active       string
	origin       string
	files        map[string]string
	filesApplied bool
	env          map[string]string // memory only
	output       []string          // what its workload printed since it started
}

// stored is the Agent's state as the Fake would persist it: everything
// but the workload's environment.
func (a *fakeAgent) stored() []byte {
	return fmt.Appendf(nil, "secret=%s revision=%s workload=%s active=%s origin=%s filesApplied=%v",
		a.secret, a.revision, a.workload, a.active, a.origin, a.filesApplied)
}

// FakeCapabilities is what a Fake made with zero capabilities declares:
// both execution modes, every harness authentication method, plugins with
// approval policy provider_default or none, workspace setup, native admin
// and persistent state.
func FakeCapabilities() compute.Capabilities {
	return compute.Capabilities{
		ExecutionModes:         []string{occ.ExecutionEmbedded, occ.ExecutionDedicated},
		HarnessAuthMethods:     []string{occ.HarnessAPIKey, occ.HarnessCodexPAT, occ.HarnessChatGPTServiceAccount, occ.HarnessCredentialSource, occ.HarnessRuntime},
		PluginApprovalPolicies: []string{occ.DefaultApprovalPolicy, "none"},
		WorkspaceSetup:         true,
		NativeAdmin:            true,
		PersistentState:        true,
		SecretEnvironment:      true,
	}
}

// NewFake returns an empty Fake declaring caps (zero: FakeCapabilities).
func NewFake(caps compute.Capabilities) *Fake {
	if reflect.ValueOf(caps).IsZero() {
		caps = FakeCapabilities()
	}
	return &Fake{caps: cloneCapabilities(caps), w: &fakeWorld{
		namespaces: map[string]bool{}, agents: map[string]*fakeAgent{}, deleted: map[string]bool{},
		lastEnv: map[string]map[string]string{}, lastHarnessEnv: map[string]map[string]string{}, notReady: map[string]fakeNotReady{},
		held: map[string]*compute.RuntimeFailure{}, warnings: map[string][]compute.Warning{},
		installing: map[string]compute.InstallProgress{}, probing: map[string]chan struct{}{},
	}}
}

// Reopen returns another Fake over the same state, switches and call
// counts, as a restarted occ would open its driver.
func (f *Fake) Reopen() *Fake { return &Fake{caps: f.caps, w: f.w} }

// Name implements compute.Driver.
func (f *Fake) Name() string { return "fake" }

// Capabilities implements compute.Driver.
func (f *Fake) Capabilities() compute.Capabilities { return cloneCapabilities(f.caps) }

// do counts a call and runs fn under the world's lock.
func (f *Fake) do(method, id string, fn func(w *fakeWorld) error) error {
	f.w.calls.add(method, id)
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	return fn(f.w)
}

// EnsureNamespace implements compute.Driver.
func (f *Fake) EnsureNamespace(ctx context.Context, ns compute.NamespaceRef) (compute.NamespaceObservation, error) {
	err := f.do(MethodEnsureNamespace, ns.ID, func(w *fakeWorld) error {
		if err := ns.Validate(); err != nil {
			return err
		}
		w.namespaces[ns.ID] = true
		return nil
	})
	return compute.NamespaceObservation{Done: err == nil}, err
}

// DeleteNamespace implements compute.Driver: its Agents go with it.
func (f *Fake) DeleteNamespace(ctx context.Context, ns compute.NamespaceRef) (compute.NamespaceObservation, error) {
	err := f.do(MethodDeleteNamespace, ns.ID, func(w *fakeWorld) error {
		if err := ns.Validate(); err != nil {
			return err
		}
		for id, a := range w.agents {
			if a.namespace == ns.ID {
				w.remove(id)
			}
		}
		delete(w.namespaces, ns.ID)
		return nil
	})
	return compute.NamespaceObservation{Done: err == nil}, err
}

// remove deletes the Agent's workload and state.
func (w *fakeWorld) remove(agentID string) {
	delete(w.agents, agentID)
	w.deleted[agentID] = true
}

// PrepareRevision implements compute.Driver: the Agent's workload is
// started for the revision unless it already runs it (initial files
// applied before the Agent's first start only), then the switches decide
// the answer: held, not ready, or ready with the Agent's warnings.
func (f *Fake) PrepareRevision(ctx context.Context, spec compute.RevisionSpec) (compute.Readiness, error) {
	f.probe(ctx, spec)
	var r compute.Readiness
	err := f.do(MethodPrepareRevision, spec.AgentID, func(w *fakeWorld) error {
		if err := spec.RevisionRef.Validate(); err != nil {
			return err
		}
		if err := compute.ValidateInitialFiles(spec.InitialFiles); err != nil {
			return err
		}
		a := w.agents[spec.AgentID]
		if a == nil {
			a = &fakeAgent{namespace: spec.NamespaceID, secret: randomSecret(), files: map[string]string{}}
			w.agents[spec.AgentID] = a
			delete(w.deleted, spec.AgentID)
		}
		w.namespaces[spec.NamespaceID] = true
		if a.revision != spec.RevisionID {
			w.start(a, spec, f.caps.WorkspaceSetup)
		}
		r = w.readiness(spec.AgentID)
		a.ready = r.Ready
		return nil
	})
	return r, err
}

// start replaces whatever runs for the Agent with a workload of spec.
func (w *fakeWorld) start(a *fakeAgent, spec compute.RevisionSpec, workspaceSetup bool) {
	if !a.filesApplied && workspaceSetup {
		maps.Copy(a.files, spec.InitialFiles)
	}
	a.filesApplied = true
	w.started++
	a.revision, a.workload, a.origin = spec.RevisionID, fmt.Sprintf("fake-workload-%d", w.started), spec.NativeAdminOrigin
	if a.active != spec.RevisionID {
		a.active = ""
	}
	a.env = maps.Clone(spec.Env)
	// A careless gateway: it prints its whole environment and its token,
	// so that a reader of its output must redact them.
	a.output = []string{"fake gateway starting revision " + spec.RevisionID}
	for _, k := range slices.Sorted(maps.Keys(spec.Env)) {
		a.output = append(a.output, "env "+k+"="+spec.Env[k])
	}
	a.output = append(a.output, "gateway token "+a.secret, "fake gateway ready")
	w.lastEnv[spec.AgentID] = maps.Clone(spec.Env)
	w.lastHarnessEnv[spec.AgentID] = maps.Clone(spec.HarnessEnv)
}

// ActivateRevision implements compute.Driver.
func (f *Fake) ActivateRevision(ctx context.Context, rev compute.RevisionRef) error {
	return f.do(MethodActivateRevision, rev.AgentID, func(w *fakeWorld) error {
		if err := rev.Validate(); err != nil {
			return err
		}
		a := w.agents[rev.AgentID]
		if a == nil || a.revision != rev.RevisionID {
			return fmt.Errorf("fake: activate revision %s: the Agent's workload does not run it", rev.RevisionID)
		}
		a.active = rev.RevisionID
		return nil
	})
}

// RetireRevision implements compute.Driver.
func (f *Fake) RetireRevision(ctx context.Context, rev compute.RevisionRef) error {
	return f.do(MethodRetireRevision, rev.AgentID, func(w *fakeWorld) error {
		if err := rev.Validate(); err != nil {
			return err
		}
		if a := w.agents[rev.AgentID]; a != nil && a.revision == rev.RevisionID {
			a.stop()
		}
		return nil
	})
}

// stop ends the Agent's workload; its state stays.
func (a *fakeAgent) stop() {
	a.revision, a.workload, a.active, a.env, a.ready = "", "", "", nil, false
}

// StopAgent implements compute.Driver.
func (f *Fake) StopAgent(ctx context.Context, ag compute.AgentRef) error {
	return f.do(MethodStopAgent, ag.AgentID, func(w *fakeWorld) error {
		if err := ag.Validate(); err != nil {
			return err
		}
		if a := w.agents[ag.AgentID]; a != nil {
			a.stop()
		}
		return nil
	})
}

// DeleteAgent implements compute.Driver.
func (f *Fake) DeleteAgent(ctx context.Context, ag compute.AgentRef) error {
	return f.do(MethodDeleteAgent, ag.AgentID, func(w *fakeWorld) error {
		if err := ag.Validate(); err != nil {
			return err
		}
		w.remove(ag.AgentID)
		return nil
	})
}

// FakeEndpointURL is the base of a Fake's endpoint URLs: a loopback port
// nothing listens on, so a client fails fast as unreachable.
const FakeEndpointURL = "ws://127.0.0.1:9/fake/"

// GatewayEndpoint implements compute.Driver: FakeEndpointURL and the
// Agent ID, with a token, or a password and proxy identity for a native
// admin revision, while a workload runs.
func (f *Fake) GatewayEndpoint(ctx context.Context, ag compute.AgentRef) (compute.Endpoint, bool) {
	var ep compute.Endpoint
	err := f.do(MethodGatewayEndpoint, ag.AgentID, func(w *fakeWorld) error {
		a := w.agents[ag.AgentID]
		if ag.Validate() != nil || a == nil || a.revision == "" {
			return errNoEndpoint
		}
		ep = compute.Endpoint{URL: FakeEndpointURL + ag.AgentID, Token: a.secret, RevisionID: a.revision}
		if a.origin != "" {
			ep.Token, ep.Password, ep.NativeAdminOrigin, ep.ProxyIdentity = "", a.secret, a.origin, "fake-proxy-"+a.secret
		}
		return nil
	})
	return ep, err == nil
}

// Logs implements compute.Driver: what the workload of the revision
// printed since it started (start says what: its environment and token,
// unredacted, as a careless gateway might print them).
func (f *Fake) Logs(ctx context.Context, rev compute.RevisionRef, opts compute.LogOptions) (compute.Logs, error) {
	var out compute.Logs
	err := f.do(MethodLogs, rev.AgentID, func(w *fakeWorld) error {
		if err := rev.Validate(); err != nil {
			return err
		}
		a := w.agents[rev.AgentID]
		if a == nil || a.revision != rev.RevisionID || a.workload == "" {
			return nil
		}
		text := strings.Join(a.output, "\n") + "\n"
		out.Found = true
		out.Lines, out.Truncated = compute.TailLines([]byte(text), opts.TailLines, false)
		out.Credentials = []string{a.secret}
		return nil
	})
	return out, err
}

// Diagnose implements compute.Driver: a process check and a readiness
// check, unknown when no workload runs the revision.
func (f *Fake) Diagnose(ctx context.Context, rev compute.RevisionRef) (compute.Diagnosis, error) {
	var checks []compute.Check
	err := f.do(MethodDiagnose, rev.AgentID, func(w *fakeWorld) error {
		if err := rev.Validate(); err != nil {
			return err
		}
		a := w.agents[rev.AgentID]
		switch {
		case a == nil || a.revision != rev.RevisionID:
			checks = []compute.Check{fakeCheck("process", "unknown"), fakeCheck("readiness", "unknown")}
		case a.ready:
			checks = []compute.Check{fakeCheck("process", "succeeded"), fakeCheck("readiness", "succeeded")}
		default:
			checks = []compute.Check{fakeCheck("process", "succeeded"), fakeCheck("readiness", "failed")}
		}
		return nil
	})
	if err != nil {
		return compute.Diagnosis{}, err
	}
	return compute.Diagnosis{RevisionID: rev.RevisionID, Checks: checks}, nil
}

// fakeChecks are the code and message of each status.
var fakeChecks = map[string][2]string{
	"succeeded": {"OK", "The check succeeded."},
	"failed":    {"NOT_READY", "The workload is not ready."},
	"unknown":   {"UNAVAILABLE", "No workload runs this revision."},
}

func fakeCheck(name, status string) compute.Check {
	c := fakeChecks[status]
	return compute.Check{Component: "gateway", Check: name, Status: status, Code: c[0], Message: c[1]}
}

// randomSecret is an Agent's credential.
func randomSecret() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
