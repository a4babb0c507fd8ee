package iam_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
	"github.com/openclaw/occ/internal/store/storetest"
)

// Shape of the policy the benchmark loads.
const (
	benchBindings     = 10_000
	benchPrincipals   = 1_000
	benchNamespaces   = 100
	benchRoles        = 40
	benchRestrictions = 500
)

// BenchmarkAuthorize measures one authorization decision against a policy
// of 10,000 bindings (over 1,000 principals, 100 Namespaces, exact targets
// and 40 roles), for a principal holding a handful of them. Besides ns/op it
// reports the p50 and p99 of the per-decision durations.
//
// The SQLite lane always runs; the PostgreSQL lane runs when
// OCC_TEST_POSTGRES_URL is set and is skipped otherwise.
//
//	go test -run '^$' -bench BenchmarkAuthorize -benchtime 20000x ./internal/iam/
func BenchmarkAuthorize(b *testing.B) {
	for _, dialect := range storetest.Dialects {
		b.Run(dialect, func(b *testing.B) {
			var url string
			switch dialect {
			case "sqlite":
				url = "sqlite://" + filepath.Join(b.TempDir(), "occ.db")
			case "postgres":
				if os.Getenv("OCC_TEST_POSTGRES_URL") == "" {
					b.Skip("OCC_TEST_POSTGRES_URL is not set (scripts/test sets it)")
				}
				url = storetest.URL(b, "postgres")
			}
			st := storetest.Open(b, url)
			subject, agent, ns := loadBenchPolicy(b, st)
			a := iam.NewAuthorizer(st)
			ctx := context.Background()
			caller := occ.Caller{PrincipalID: subject, Kind: occ.PrincipalService, Method: occ.AuthServiceKey}
			read := occ.P(occ.KindAgent, occ.ActionRead)
			target := occ.ResourceRef{Kind: occ.KindAgent, ID: agent, NamespaceID: ns}
			elsewhere := occ.ResourceRef{Kind: occ.KindAgent, ID: occ.NewID(occ.PrefixAgent), NamespaceID: occ.NewID(occ.PrefixNamespace)}

			b.Run("Decide/allowed", func(b *testing.B) {
				measure(b, func() error {
					d, err := a.Decide(ctx, caller, read, target)
					if err == nil && !d.Allowed {
						err = fmt.Errorf("denied: %s", d.Reason)
					}
					return err
				})
			})
			b.Run("Decide/denied", func(b *testing.B) {
				measure(b, func() error {
					d, err := a.Decide(ctx, caller, read, elsewhere)
					if err == nil && d.Allowed {
						err = fmt.Errorf("allowed outside the grants")
					}
					return err
				})
			})
			b.Run("Authorize/allowed", func(b *testing.B) {
				check := iam.Check{Caller: caller, Permission: read, Resource: target, Action: "agents.read"}
				measure(b, func() error {
					d, err := a.Authorize(ctx, check)
					if err == nil && !d.Allowed {
						err = fmt.Errorf("denied: %s", d.Reason)
					}
					return err
				})
			})
		})
	}
}

// measure runs op b.N times, timing each call, and reports p50 and p99;
// up to 1,000 unmeasured calls first warm the caches.
func measure(b *testing.B, op func() error) {
	b.Helper()
	for range min(b.N, 1000) {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	durs := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		err := op()
		durs = append(durs, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(durs[len(durs)*99/100].Nanoseconds()), "p99-ns")
}

// loadBenchPolicy inserts the principals, roles, bindings and restrictions,
// and returns the subject principal with an Agent (and its Namespace) one of
// its bindings targets exactly.
func loadBenchPolicy(b *testing.B, st *store.Store) (subject, agent, namespace string) {
	b.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Now()

	namespaces := make([]string, benchNamespaces)
	for i := range namespaces {
		namespaces[i] = occ.NewID(occ.PrefixNamespace)
	}
	principals := make([]occ.Principal, benchPrincipals)
	for i := range principals {
		principals[i] = occ.Principal{ID: occ.NewID(occ.PrefixServicePrincipal), Kind: occ.PrincipalService,
			Name: fmt.Sprintf("svc-%d", i), CreatedAt: now, UpdatedAt: now, Version: 1}
	}
	// Roles of a few permissions each, from every kind and action, the
	// built-in roles among them.
	var all []occ.Permission
	for p := range occ.Routable {
		all = append(all, p)
	}
	slices.SortFunc(all, func(x, y occ.Permission) int { return strings.Compare(x.String(), y.String()) })
	var roles []occ.Role
	for name, perms := range iam.BuiltinRoles() {
		roles = append(roles, occ.Role{ID: occ.NewID(occ.PrefixRole), Name: name, Builtin: true, Permissions: perms, CreatedAt: now})
	}
	for i := len(roles); i < benchRoles; i++ {
		perms := map[occ.Permission]bool{occ.P(occ.KindAgent, occ.ActionRead): i%2 == 0}
		for range 2 + rng.IntN(6) {
			perms[all[rng.IntN(len(all))]] = true
		}
		r := occ.Role{ID: occ.NewID(occ.PrefixRole), Name: fmt.Sprintf("custom-%d", i), CreatedAt: now}
		for p, ok := range perms {
			if ok {
				r.Permissions = append(r.Permissions, p)
			}
		}
		slices.SortFunc(r.Permissions, func(x, y occ.Permission) int { return strings.Compare(x.String(), y.String()) })
		roles = append(roles, r)
	}
	slices.SortFunc(roles, func(x, y occ.Role) int { return strings.Compare(x.Name, y.Name) })
	readRoles := slices.DeleteFunc(slices.Clone(roles), func(r occ.Role) bool {
		return !slices.Contains(r.Permissions, occ.P(occ.KindAgent, occ.ActionRead))
	})

	// grant draws a scope and target: a quarter installation-wide, a
	// quarter a whole Namespace, half one exact Agent.
	grant := func() (string, *occ.Target) {
		switch n := rng.IntN(4); {
		case n == 0:
			return "", nil
		case n == 1:
			return namespaces[rng.IntN(len(namespaces))], nil
		default:
			return namespaces[rng.IntN(len(namespaces))], &occ.Target{Kind: occ.KindAgent, ID: occ.NewID(occ.PrefixAgent)}
		}
	}
	subj := principals[0]
	namespace, agent = namespaces[7], occ.NewID(occ.PrefixAgent)
	var bindings []occ.Binding
	bind := func(p, role, ns string, t *occ.Target) {
		bindings = append(bindings, occ.Binding{ID: occ.NewID(occ.PrefixBinding), PrincipalID: p, RoleID: role,
			NamespaceID: ns, Target: t, CreatedBy: p, CreatedAt: now})
	}
	// The subject: five bindings, one granting agent:read on the Agent
	// exactly, the others elsewhere; and one restriction that does not match.
	bind(subj.ID, readRoles[0].ID, namespace, &occ.Target{Kind: occ.KindAgent, ID: agent})
	bind(subj.ID, readRoles[1].ID, namespaces[8], nil)
	bind(subj.ID, readRoles[2].ID, namespaces[9], &occ.Target{Kind: occ.KindAgent, ID: occ.NewID(occ.PrefixAgent)})
	bind(subj.ID, roles[3].ID, namespaces[10], nil)
	bind(subj.ID, roles[4].ID, namespace, nil)
	for len(bindings) < benchBindings {
		ns, t := grant()
		bind(principals[1+rng.IntN(len(principals)-1)].ID, roles[rng.IntN(len(roles))].ID, ns, t)
	}
	var restrictions []occ.Restriction
	restrict := func(p string, perm occ.Permission, ns string, t *occ.Target) {
		restrictions = append(restrictions, occ.Restriction{ID: occ.NewID(occ.PrefixRestriction), PrincipalID: p,
			Permission: perm, NamespaceID: ns, Target: t, CreatedBy: p, CreatedAt: now})
	}
	restrict(subj.ID, occ.P(occ.KindAgent, occ.ActionRead), namespaces[9], nil)
	for len(restrictions) < benchRestrictions {
		ns, t := grant()
		restrict(principals[1+rng.IntN(len(principals)-1)].ID, all[rng.IntN(len(all))], ns, t)
	}

	err := st.InTx(ctx, func(tx *store.Tx) error {
		for _, p := range principals {
			if err := tx.InsertPrincipal(ctx, p); err != nil {
				return err
			}
		}
		for _, r := range roles {
			if err := tx.InsertRole(ctx, r); err != nil {
				return err
			}
		}
		for _, bd := range bindings {
			if err := tx.InsertBinding(ctx, bd); err != nil {
				return err
			}
		}
		for _, r := range restrictions {
			if err := tx.InsertRestriction(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if st.Dialect() == store.Postgres {
		// Planner statistics, as autovacuum keeps them on a live server
		// (without them the first minute plans a sequential scan).
		if _, err := st.DB().ExecContext(ctx, `ANALYZE`); err != nil {
			b.Fatal(err)
		}
	}
	return subj.ID, agent, namespace
}
