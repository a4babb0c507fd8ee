package worker_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
	"github.com/openclaw/occ/internal/store/storetest"
	"github.com/openclaw/occ/internal/worker"
)

// Failpoints: every place a piece of work can stop — before and after each
// compute driver call, before and after each commit of occ's state
// (a write on its own included), and before and after River records the
// job's completion — is made to fail there, or to crash there (the
// database pool dies, as in kill -9, and a new worker starts on the same
// file), one place per case. Whatever happened, the work converges: the
// outcome is the one a fault-free run has, exactly once (one gateway, one
// success audit event), and no job is left unfinished.

// failpoint is one place to fail or crash at, armed on an env for the
// work of one Agent or Namespace (the ID the driver knows); crash is what a crash does there (nil: fail only). It returns
// whether the place was reached.
type failpoint struct {
	name string
	// sweep names a run of commit points, the k-th of which is only
	// reached when the k-1-th is: the rest are skipped after one is not.
	sweep string
	arm   func(e *env, faulty *computetest.Faulty, id string, crash func()) (reached func() bool)
}

// driverPoint fails a driver method before or after it takes effect.
func driverPoint(method string, after bool) failpoint {
	return failpoint{name: fmt.Sprintf("%s/after=%v", method, after),
		arm: func(_ *env, faulty *computetest.Faulty, id string, crash func()) func() bool {
			n := faulty.CallsOf(method, id)
			faulty.Inject(computetest.Fault{Method: method, ID: id, After: after, Times: 1, Then: crash})
			return func() bool { return faulty.CallsOf(method, id) > n }
		}}
}

// commitPoint fails the skip+1-th commit matching match (storetest's
// CommitFault), before or after it takes effect.
func commitPoint(label, match string, skip int, after bool) failpoint {
	return failpoint{name: fmt.Sprintf("commit %s #%d/after=%v", label, skip+1, after), sweep: fmt.Sprintf("%s/%v", match, after),
		arm: func(e *env, _ *computetest.Faulty, _ string, crash func()) func() bool {
			ft := e.faults.Inject(storetest.CommitFault{Match: match, Skip: skip, After: after, Crash: crash != nil})
			f := e.faults
			return func() bool { return f.Fired(ft) }
		}}
}

// points lists a flow's failpoints: both sides of each driver method and
// of the first commits (more than the flow makes: the ones it never
// reaches are counted and must be few) and of the job's completion.
func points(methods ...string) []failpoint {
	var out []failpoint
	for _, after := range []bool{false, true} {
		for _, m := range methods {
			out = append(out, driverPoint(m, after))
		}
		for k := range 7 {
			out = append(out, commitPoint("of occ's state", "", k, after))
		}
		out = append(out, commitPoint("of the job's completion", "JobSetStateIfRunning", 0, after))
	}
	return out
}

// flow is a piece of work a failpoint interrupts. prepare runs with the
// worker running and returns admit, which admits the work (with the
// worker stopped) and returns the ID the driver knows it by, whether it
// settled, and the check of its outcome.
type flow struct {
	name    string
	methods []string
	prepare func(e *env) (admit func() (id string, settled func() bool, check func(t *testing.T)))
}

var failpointFlows = []flow{{
	name:    "deploy",
	methods: []string{computetest.MethodPrepareRevision, computetest.MethodActivateRevision},
	prepare: func(e *env) func() (string, func() bool, func(*testing.T)) {
		g := e.agent(agentSpec{harness: apiKey("sk")})
		return func() (string, func() bool, func(*testing.T)) {
			rev := e.deploy(e.admin, g)
			settled := func() bool {
				st, err := e.app.GetDeployment(e.ctx, e.admin, e.ns, g.ID, rev.ID)
				return err == nil && occ.DeploymentTerminal(st.Status)
			}
			return g.ID, settled, func(t *testing.T) {
				if st := e.status(g, rev); st.Status != occ.DeploymentSucceeded {
					t.Errorf("deployment = %s %+v; want succeeded", st.Status, st.Error)
				}
				got, err := e.app.GetAgent(e.ctx, e.admin, e.ns, g.ID)
				if err != nil || got.ActiveRevisionID != rev.ID {
					t.Errorf("Agent = %+v, %v; want revision %s active", got, err, rev.ID)
				}
				if running, ok := e.fake.Running(g.ID); !ok || running != rev.ID || e.fake.Active(g.ID) != rev.ID {
					t.Errorf("driver runs %q (%v), serves %q; want %s", running, ok, e.fake.Active(g.ID), rev.ID)
				}
				if n := e.auditCount(worker.ActRevisionActivate, occ.OutcomeSuccess, rev.ID); n != 1 {
					t.Errorf("%d successful %s events; want 1", n, worker.ActRevisionActivate)
				}
			}
		}
	},
}, {
	name:    "agent deletion",
	methods: []string{computetest.MethodDeleteAgent},
	prepare: func(e *env) func() (string, func() bool, func(*testing.T)) {
		g := e.agent(agentSpec{harness: apiKey("sk")})
		e.settled(g, e.deploy(e.admin, g))
		return func() (string, func() bool, func(*testing.T)) {
			if _, err := e.app.DeleteAgent(e.ctx, e.admin, e.ns, g.ID); err != nil {
				e.t.Fatal(err)
			}
			gone := func() bool {
				_, err := e.app.GetAgent(e.ctx, e.admin, e.ns, g.ID)
				return occ.CodeOf(err) == occ.CodeNotFound
			}
			return g.ID, gone, func(t *testing.T) {
				if !e.fake.Deleted(g.ID) {
					t.Error("the Agent is gone but the driver still holds it")
				}
				if _, ok := e.fake.Running(g.ID); ok {
					t.Error("the deleted Agent's gateway still runs")
				}
				if n := e.auditCount(worker.ActAgentDelete, occ.OutcomeSuccess, g.ID); n != 1 {
					t.Errorf("%d successful %s events; want 1", n, worker.ActAgentDelete)
				}
			}
		}
	},
}, {
	name:    "namespace",
	methods: []string{computetest.MethodEnsureNamespace},
	prepare: func(e *env) func() (string, func() bool, func(*testing.T)) {
		return func() (string, func() bool, func(*testing.T)) {
			ns, err := e.app.CreateNamespace(e.ctx, e.admin, "fp-"+occ.NewUUID()[:8])
			if err != nil {
				e.t.Fatal(err)
			}
			ready := func() bool {
				got, err := e.app.GetNamespace(e.ctx, e.admin, ns.ID)
				return err == nil && got.Status != occ.NamespaceProvisioning
			}
			return ns.ID, ready, func(t *testing.T) {
				if got, err := e.app.GetNamespace(e.ctx, e.admin, ns.ID); err != nil || got.Status != occ.NamespaceReady {
					t.Errorf("Namespace = %+v, %v; want ready", got, err)
				}
				if !e.fake.NamespaceExists(ns.ID) {
					t.Error("the Namespace is ready but the driver has none")
				}
				if n := e.auditCount(worker.ActNamespaceEnsure, occ.OutcomeSuccess, ns.ID); n != 1 {
					t.Errorf("%d successful %s events; want 1", n, worker.ActNamespaceEnsure)
				}
			}
		}
	},
}, {
	name:    "namespace deletion",
	methods: []string{computetest.MethodDeleteNamespace},
	prepare: func(e *env) func() (string, func() bool, func(*testing.T)) {
		ns, err := e.app.CreateNamespace(e.ctx, e.admin, "fp-"+occ.NewUUID()[:8])
		if err != nil {
			e.t.Fatal(err)
		}
		e.eventually("the Namespace is ready", func() bool {
			got, err := e.app.GetNamespace(e.ctx, e.admin, ns.ID)
			return err == nil && got.Status == occ.NamespaceReady
		})
		return func() (string, func() bool, func(*testing.T)) {
			if _, err := e.app.DeleteNamespace(e.ctx, e.admin, ns.ID, app.IfMatch{}); err != nil {
				e.t.Fatal(err)
			}
			gone := func() bool {
				_, err := e.app.GetNamespace(e.ctx, e.admin, ns.ID)
				return occ.CodeOf(err) == occ.CodeNotFound
			}
			return ns.ID, gone, func(t *testing.T) {
				if e.fake.NamespaceExists(ns.ID) {
					t.Error("the Namespace is gone but the driver still holds it")
				}
				if n := e.auditCount(worker.ActNamespaceDelete, occ.OutcomeSuccess, ns.ID); n != 1 {
					t.Errorf("%d successful %s events; want 1", n, worker.ActNamespaceDelete)
				}
			}
		}
	},
}}

func TestFailpoints(t *testing.T) {
	t.Parallel()
	for _, fl := range failpointFlows {
		for _, crash := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/crash=%v", fl.name, crash), func(t *testing.T) {
				t.Parallel()
				var faulty *computetest.Faulty
				e := newEnv(t, computetest.FakeCapabilities(), withDriver(func(f *computetest.Fake) compute.Driver {
					faulty = computetest.NewFaulty(f)
					return faulty
				}))
				reachedAll, unreached := 0, 0
				var took []string
				beyond := map[string]bool{} // sweeps past the flow's last commit
				for _, fp := range points(fl.methods...) {
					if beyond[fp.sweep] {
						continue
					}
					began := time.Now()
					admit := fl.prepare(e)
					e.stop()
					id, settled, check := admit()
					var kill func()
					if crash {
						// A dead process calls no driver either.
						kill = func() { e.faults.Crash(); faulty.Inject(computetest.Fault{ID: id, Times: computetest.Forever}) }
					}
					reached := fp.arm(e, faulty, id, kill)
					e.restart()
					e.eventually(fp.name+": the work settles or the process dies", func() bool {
						return e.faults.Dead() || (settled() && e.unfinishedJobs() == 0)
					})
					if e.faults.Dead() {
						faulty.Heal(id)
						e.crashRestart()
					}
					e.eventually(fp.name+": the work settles", func() bool { return settled() && e.unfinishedJobs() == 0 })
					if !reached() {
						unreached++
						beyond[fp.sweep] = fp.sweep != ""
						e.faults.Disarm()
						faulty.Heal(id)
						continue
					}
					reachedAll++
					t.Run(fp.name, check)
					took = append(took, fmt.Sprintf("%s %v", fp.name, time.Since(began).Round(time.Millisecond)))
				}
				t.Logf("%s, crash %v: %d failpoints reached and converged, %d past the flow's end; each took: %s",
					fl.name, crash, reachedAll, unreached, strings.Join(took, ", "))
				if reachedAll < 2*len(fl.methods)+6 {
					t.Fatalf("only %d failpoints reached; the flow should pass more", reachedAll)
				}
			})
		}
	}
}

// auditCount counts the audit events of action and outcome about resource.
func (e *env) auditCount(action string, outcome occ.AuditOutcome, resourceID string) int {
	e.t.Helper()
	evs, err := e.st.ListAuditEvents(e.ctx, store.AuditFilter{Action: action, Limit: 500})
	if err != nil {
		e.t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		if ev.Outcome == outcome && ev.Resource.ID == resourceID {
			n++
		}
	}
	return n
}

// unfinishedJobs counts River jobs not completed; -1 when the database
// does not answer (its pool was killed meanwhile).
func (e *env) unfinishedJobs() int {
	var n int
	if err := e.st.DB().QueryRowContext(e.ctx, `SELECT COUNT(*) FROM river_job WHERE state <> 'completed'`).Scan(&n); err != nil {
		return -1
	}
	return n
}
