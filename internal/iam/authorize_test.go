package iam_test

import (
	"context"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestAuthorizeAtEachRequestsGeneration: authorization reuses policy rows
// read at the generation a request authenticated at, yet every grant,
// revocation and restriction holds from the next request on, on two
// Authorizers over one database (two replicas), each with its rows of the
// previous generation in hand.
func TestAuthorizeAtEachRequestsGeneration(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		st := storetest.Open(t, url)
		ctx := context.Background()
		now := time.Now()
		p, key := keyHolder(t, st)
		read := occ.P(occ.KindAgent, occ.ActionRead)
		role := occ.Role{ID: occ.NewID(occ.PrefixRole), Name: "reader", Permissions: []occ.Permission{read}, CreatedAt: now}
		must(t, st.InsertRole(ctx, role))
		ns := occ.NewID(occ.PrefixNamespace)
		agent := occ.ResourceRef{Kind: occ.KindAgent, ID: occ.NewID(occ.PrefixAgent), NamespaceID: ns}

		replicas := []*iam.Authorizer{iam.NewAuthorizer(st), iam.NewAuthorizer(st)}
		authn := iam.NewAuthenticator(st)
		var last int64
		// request authenticates anew, as every request does, and asks both
		// replicas, twice each (the second answer comes from the rows the
		// first read).
		request := func(step string, want bool) {
			t.Helper()
			c, err := authn.ServiceKey(ctx, key)
			if err != nil {
				t.Fatalf("%s: authenticate: %v", step, err)
			}
			if c.PolicyGeneration < last {
				t.Fatalf("%s: the generation went back from %d to %d", step, last, c.PolicyGeneration)
			}
			last = c.PolicyGeneration
			for i, az := range replicas {
				for range 2 {
					d, err := az.Decide(ctx, c, read, agent)
					if err != nil || d.Allowed != want {
						t.Fatalf("%s: replica %d: %+v, %v; want allowed=%v", step, i, d, err, want)
					}
				}
			}
			// The worker acting for a recorded actor knows no generation and
			// reads afresh: it agrees.
			if d, err := replicas[0].Decide(ctx, occ.Caller{PrincipalID: p.ID, Method: occ.AuthWorker}, read, agent); err != nil || d.Allowed != want {
				t.Fatalf("%s: the worker: %+v, %v; want allowed=%v", step, d, err, want)
			}
		}

		request("no binding", false)
		b := occ.Binding{ID: occ.NewID(occ.PrefixBinding), PrincipalID: p.ID, RoleID: role.ID, NamespaceID: ns, CreatedBy: p.ID, CreatedAt: now}
		must(t, st.InsertBinding(ctx, b))
		request("bound in the Namespace", true)
		x := occ.Restriction{ID: occ.NewID(occ.PrefixRestriction), PrincipalID: p.ID, Permission: read, NamespaceID: ns,
			Target: &occ.Target{Kind: occ.KindAgent, ID: agent.ID}, CreatedBy: p.ID, CreatedAt: now}
		must(t, st.InsertRestriction(ctx, x))
		request("restricted on the Agent", false)
		must(t, st.DeleteRestriction(ctx, x.ID))
		request("restriction lifted", true)
		must(t, st.DeleteBinding(ctx, b.ID))
		request("binding deleted", false)
	})
}

// TestPolicyGeneration: what LoadPolicy reads moves the generation that
// authentication reads; an Agent's service principal coming and going
// does not (Agents come and go in bulk).
func TestPolicyGeneration(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		st := storetest.Open(t, url)
		ctx := context.Background()
		now := time.Now()
		p, key := keyHolder(t, st)
		generation := func() int64 {
			t.Helper()
			rows, err := st.ServiceKeysByLookup(ctx, iam.KeyLookup(key))
			if err != nil || len(rows) != 1 {
				t.Fatalf("look up the key: %v, %v", rows, err)
			}
			return rows[0].Holder.PolicyGeneration
		}
		other := occ.Principal{ID: occ.NewID(occ.PrefixServicePrincipal), Kind: occ.PrincipalService, Name: "other", CreatedAt: now, UpdatedAt: now, Version: 1}
		agentID := occ.NewID(occ.PrefixAgent)
		agentsOwn := occ.Principal{ID: occ.NewID(occ.PrefixServicePrincipal), Kind: occ.PrincipalService, Name: "agent a",
			AgentID: agentID, CreatedAt: now, UpdatedAt: now, Version: 1}
		role := occ.Role{ID: occ.NewID(occ.PrefixRole), Name: "reader", Permissions: []occ.Permission{occ.P(occ.KindAgent, occ.ActionRead)}, CreatedAt: now}
		b := occ.Binding{ID: occ.NewID(occ.PrefixBinding), PrincipalID: p.ID, RoleID: role.ID, CreatedBy: p.ID, CreatedAt: now}
		x := occ.Restriction{ID: occ.NewID(occ.PrefixRestriction), PrincipalID: p.ID, Permission: occ.P(occ.KindAgent, occ.ActionRead),
			CreatedBy: p.ID, CreatedAt: now}
		for _, step := range []struct {
			name  string
			do    func() error
			moves bool
		}{
			{"a principal created", func() error { return st.InsertPrincipal(ctx, other) }, false},
			{"an Agent's principal created", func() error { return st.InsertPrincipal(ctx, agentsOwn) }, false},
			{"a role created", func() error { return st.InsertRole(ctx, role) }, true},
			{"a binding created", func() error { return st.InsertBinding(ctx, b) }, true},
			{"a restriction created", func() error { return st.InsertRestriction(ctx, x) }, true},
			{"a restriction deleted", func() error { return st.DeleteRestriction(ctx, x.ID) }, true},
			{"a binding deleted", func() error { return st.DeleteBinding(ctx, b.ID) }, true},
			{"a role deleted", func() error { return st.DeleteRole(ctx, role.ID) }, true},
			{"a principal disabled", func() error { return st.SetPrincipalDisabled(ctx, other.ID, true, occ.Millis(now)) }, true},
			{"a principal deleted", func() error { return st.DeletePrincipal(ctx, other.ID) }, true},
			{"an Agent's principal deleted", func() error {
				_, err := st.DeleteAgentRecords(ctx, occ.NewID(occ.PrefixNamespace), agentID, agentsOwn.ID)
				return err
			}, false},
		} {
			before := generation()
			must(t, step.do())
			if after := generation(); (after > before) != step.moves || after < before {
				t.Errorf("%s: generation %d → %d; want it to move: %v", step.name, before, after, step.moves)
			}
		}
	})
}

// keyHolder stores a service principal with a service key.
func keyHolder(t *testing.T, st *store.Store) (occ.Principal, string) {
	t.Helper()
	ctx, now := context.Background(), time.Now()
	p := occ.Principal{ID: occ.NewID(occ.PrefixServicePrincipal), Kind: occ.PrincipalService, Name: "robot", CreatedAt: now, UpdatedAt: now, Version: 1}
	must(t, st.InsertPrincipal(ctx, p))
	key := iam.NewServiceKey()
	must(t, st.InsertServiceKey(ctx, occ.ServiceKey{ID: occ.NewID(occ.PrefixServiceKey), PrincipalID: p.ID, Name: "k",
		Lookup: iam.KeyLookup(key), Digest: iam.Digest(key), CreatedBy: p.ID, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}))
	return p, key
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
