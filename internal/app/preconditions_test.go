package app_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store/storetest"
)

// patchable is one conditional update use case (a PATCH route) over one
// kind of resource.
type patchable struct {
	kind string
	// make creates a resource in e.ns and returns its ID.
	make func(e *env) string
	// patch applies change n (distinct n are independent changes) under the
	// precondition and returns the resource's new version.
	patch func(e *env, id string, n int, m app.IfMatch) (int64, error)
}

// patchables are every PATCH route's use case.
var patchables = []patchable{
	{kind: "namespace",
		make: func(e *env) string { return e.namespace("n-" + occ.NewUUID()[:8]) },
		patch: func(e *env, id string, n int, m app.IfMatch) (int64, error) {
			ns, err := e.app.RenameNamespace(e.ctx, e.admin, id, fmt.Sprintf("n-%s-%d", id[3:11], n), m)
			return ns.Version, err
		}},
	{kind: "configuration",
		make: func(e *env) string { return e.configuration() },
		patch: func(e *env, id string, n int, m app.IfMatch) (int64, error) {
			c, err := e.app.UpdateConfiguration(e.ctx, e.admin, e.ns, id, app.ConfigurationPatch{Values: map[string]any{changeKey(n): float64(n)}}, m)
			return c.Version, err
		}},
	{kind: "secret",
		make: func(e *env) string {
			s, err := e.app.CreateSecret(e.ctx, e.admin, e.ns, "s-"+occ.NewUUID()[:8], []byte("value-0"))
			e.must("create secret", err)
			return s.ID
		},
		patch: func(e *env, id string, n int, m app.IfMatch) (int64, error) {
			s, err := e.app.UpdateSecret(e.ctx, e.admin, e.ns, id, []byte(fmt.Sprintf("value-%d", n)), m)
			return s.Version, err
		}},
	{kind: "preset",
		make: func(e *env) string {
			p, err := e.app.CreatePreset(e.ctx, e.admin, e.ns, "p-"+occ.NewUUID()[:8], occ.PresetSettings{})
			e.must("create preset", err)
			return p.ID
		},
		patch: func(e *env, id string, n int, m app.IfMatch) (int64, error) {
			name := fmt.Sprintf("p-%s-%d", id[4:12], n)
			p, err := e.app.UpdatePreset(e.ctx, e.admin, e.ns, id, app.PresetPatch{Name: &name}, m)
			return p.Version, err
		}},
	{kind: "agent",
		make: func(e *env) string {
			g, err := e.app.CreateAgent(e.ctx, e.admin, e.ns, app.AgentInput{Name: "a-" + occ.NewUUID()[:8], ConfigurationID: e.cfg})
			e.must("create agent", err)
			return g.ID
		},
		patch: func(e *env, id string, n int, m app.IfMatch) (int64, error) {
			g, err := e.app.UpdateAgent(e.ctx, e.admin, e.ns, id, app.AgentPatch{ConfigurationID: e.cfg}, m)
			return g.Version, err
		}},
	{kind: "credential source",
		make: func(e *env) string {
			cs, err := e.app.CreateCredentialSource(e.ctx, e.admin, e.ns, app.CredentialSourceInput{Name: "cs-" + occ.NewUUID()[:8], Type: "openai"})
			e.must("create credential source", err)
			return cs.ID
		},
		patch: func(e *env, id string, n int, m app.IfMatch) (int64, error) {
			cs, err := e.app.UpdateCredentialSource(e.ctx, e.admin, e.ns, id, map[string]occ.SecretRef{}, m)
			return cs.Version, err
		}},
}

// changeKey is the document key change n of a configuration sets.
func changeKey(n int) string { return fmt.Sprintf("change-%d", n) }

// TestConcurrentPatchesWithoutPrecondition: two writers patching one
// resource at once without If-Match all succeed (occ re-reads and
// re-applies a change that lost the race), and every change is kept.
func TestConcurrentPatchesWithoutPrecondition(t *testing.T) {
	const perWriter = 10
	eachPatchable(t, func(t *testing.T, e *env, r patchable, id string) {
		v0, err := r.patch(e, id, 0, app.IfMatch{})
		e.must("first change", err)
		var wg sync.WaitGroup
		for w := 0; w < 2; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < perWriter; i++ {
					if _, err := r.patch(e, id, 1+w*perWriter+i, app.IfMatch{}); err != nil {
						t.Errorf("writer %d, change %d: %v", w, i, err)
					}
				}
			}()
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		// One more change shows that every change advanced the version.
		v, err := r.patch(e, id, 1+2*perWriter, app.IfMatch{})
		e.must("last change", err)
		if want := v0 + 2*perWriter + 1; v != want {
			t.Fatalf("version %d after the first change, %d after %d more, want %d", v0, v, 2*perWriter+1, want)
		}
		if r.kind == "configuration" {
			e.wantAllChanges(id, 2*perWriter+2)
		}
	})
}

// eachPatchable runs fn on a new resource of every patchable kind, as a
// subtest per database and kind.
func eachPatchable(t *testing.T, fn func(t *testing.T, e *env, r patchable, id string)) {
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := newEnv(t, url, withNamespace)
		for _, r := range patchables {
			t.Run(r.kind, func(t *testing.T) {
				e := e.withT(t)
				fn(t, e, r, r.make(e))
			})
		}
	})
}

// wantAllChanges fails unless configuration id holds every change below n.
func (e *env) wantAllChanges(id string, n int) {
	e.t.Helper()
	c, err := e.app.GetConfiguration(e.ctx, e.admin, e.ns, id)
	e.must("read configuration", err)
	for i := 0; i < n; i++ {
		if c.Values[changeKey(i)] != float64(i) {
			e.t.Fatalf("change %d is missing from %v", i, c.Values)
		}
	}
	if c.Generation != int64(n+1) {
		e.t.Fatalf("generation = %d, want %d", c.Generation, n+1)
	}
}

// TestIfMatch: "*" matches any existing resource (a missing one stays 404),
// a version matches only itself (412 otherwise), on every PATCH route.
func TestIfMatch(t *testing.T) {
	eachPatchable(t, func(t *testing.T, e *env, r patchable, id string) {
		v, err := r.patch(e, id, 1, app.MatchAny())
		e.must("If-Match: * on an existing resource", err)
		e.wantCode("a stale version", second(r.patch(e, id, 2, app.MatchVersion(v-1))), occ.CodePreconditionFailed)
		e.wantCode("a version never held", second(r.patch(e, id, 2, app.MatchVersion(v+1))), occ.CodePreconditionFailed)
		if got, err := r.patch(e, id, 3, app.MatchVersion(v)); err != nil || got != v+1 {
			t.Fatalf("the current version: %d, %v; want version %d", got, err, v+1)
		}
		missing := occ.NewID(occ.PrefixOf(id))
		e.wantCode("If-Match: * on a missing resource", second(r.patch(e, missing, 4, app.MatchAny())), occ.CodeNotFound)
	})
}

// TestIfMatchOnDelete: deletes take the same preconditions.
func TestIfMatchOnDelete(t *testing.T) {
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := newEnv(t, url, withNamespace)
		id := e.configuration()
		del := func(m app.IfMatch) error { return e.app.DeleteConfiguration(e.ctx, e.admin, e.ns, id, m) }
		e.wantCode("delete with a stale version", del(app.MatchVersion(2)), occ.CodePreconditionFailed)
		e.must("delete with If-Match: *", del(app.MatchAny()))
		e.wantCode("delete a missing resource with If-Match: *", del(app.MatchAny()), occ.CodeNotFound)
	})
}

// TestLostRaceRetries: when another writer changes a resource between an
// update's read and its write (here inside the credential source update's
// gateway call), the update reads it again: without a precondition or with
// "*" it re-applies the change to the new state, up to five attempts, then
// 409 with a fixed message; with a version it is 412.
func TestLostRaceRetries(t *testing.T) {
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := newEnv(t, url, withNamespace)
		update := func(id string, m app.IfMatch) (occ.CredentialSource, error) {
			return e.app.UpdateCredentialSource(e.ctx, e.admin, e.ns, id, map[string]occ.SecretRef{}, m)
		}
		// another writer: the same record written again, or marked deleting.
		rewrite := func(id string, state occ.CredentialSourceState) func() {
			return func() {
				cs, err := e.st.GetCredentialSource(e.ctx, e.ns, id)
				e.must("read source", err)
				cs.State = state
				e.must("concurrent write", second(e.st.UpdateCredentialSource(e.ctx, cs)))
			}
		}
		for _, tc := range []struct {
			name    string
			races   int
			state   occ.CredentialSourceState
			m       func(v int64) app.IfMatch
			code    occ.Code
			message string
			version int64 // after the update, from the version before it
		}{
			{name: "no precondition, one lost race", races: 1, m: func(int64) app.IfMatch { return app.IfMatch{} }, version: 2},
			{name: "If-Match: *, one lost race", races: 1, m: func(int64) app.IfMatch { return app.MatchAny() }, version: 2},
			{name: "a version, one lost race", races: 1, m: app.MatchVersion, code: occ.CodePreconditionFailed, version: 1},
			{name: "no precondition, every race lost", races: 5, m: func(int64) app.IfMatch { return app.IfMatch{} },
				code: occ.CodeResourceConflict, message: occ.MsgChangedConcurrently, version: 5},
			{name: "no precondition, deleted meanwhile", races: 1, state: occ.CredentialSourceDeleting, m: func(int64) app.IfMatch { return app.IfMatch{} },
				code: occ.CodeResourceConflict, version: 1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := e.withT(t)
				id := patchables[len(patchables)-1].make(e)
				before, err := e.st.GetCredentialSource(e.ctx, e.ns, id)
				e.must("read source", err)
				state := tc.state
				if state == "" {
					state = occ.CredentialSourceReady
				}
				e.gw.before(tc.races, rewrite(id, state))
				_, err = update(id, tc.m(before.Version))
				e.gw.before(0, nil)
				e.wantCode("update", err, tc.code)
				if oe := occ.AsError(err); tc.message != "" && oe.Message != tc.message {
					t.Fatalf("message %q, want %q", oe.Message, tc.message)
				}
				after, err := e.st.GetCredentialSource(e.ctx, e.ns, id)
				e.must("read source", err)
				if after.Version != before.Version+tc.version || after.State != state {
					t.Fatalf("after: version %d state %s, want %d %s", after.Version, after.State, before.Version+tc.version, state)
				}
			})
		}
	})
}
