package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/jobs"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
	"github.com/openclaw/occ/internal/store/storetest"
)

func TestStore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, url string) {
		st := storetest.Open(t, url)
		ctx := context.Background()
		t.Run("MigrateIsRepeatable", func(t *testing.T) {
			if err := st.Migrate(ctx, jobs.Migrate(st)); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("Namespaces", func(t *testing.T) { testNamespaces(t, st) })
		t.Run("Policy", func(t *testing.T) { testPolicy(t, st) })
		t.Run("AuditFilters", func(t *testing.T) { testAudit(t, st) })
		t.Run("Secrets", func(t *testing.T) { testSecrets(t, st) })
		t.Run("RollbackKeepsNothing", func(t *testing.T) {
			ns := newNamespace("rolled-back")
			boom := errors.New("boom")
			err := st.InTx(ctx, func(tx *store.Tx) error {
				if err := tx.InsertNamespace(ctx, ns); err != nil {
					return err
				}
				return boom
			})
			if !errors.Is(err, boom) {
				t.Fatalf("InTx = %v", err)
			}
			if _, err := st.GetNamespace(ctx, ns.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("rolled-back namespace readable: %v", err)
			}
		})
	})
}

// TestConcurrentMigrations starts several replicas' migrations at once on
// each database; all must succeed.
func TestConcurrentMigrations(t *testing.T) {
	storetest.Each(t, func(t *testing.T, url string) {
		n := 4
		if url[:6] == "sqlite" {
			n = 1 // one process owns a SQLite file (occ locks it)
		}
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := store.Open(context.Background(), url)
				if err != nil {
					errs <- err
					return
				}
				defer st.Close()
				errs <- st.Migrate(context.Background(), jobs.Migrate(st))
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("concurrent migration: %v", err)
			}
		}
	})
}

func newNamespace(name string) occ.Namespace {
	now := time.Now()
	return occ.Namespace{ID: occ.NewID(occ.PrefixNamespace), Name: name, Status: occ.NamespaceProvisioning,
		CreatedAt: now, UpdatedAt: now, Version: 1}
}

func testNamespaces(t *testing.T, st *store.Store) {
	ctx := context.Background()
	var ids []string
	for i := 0; i < 5; i++ {
		ns := newNamespace("ns-" + string(rune('a'+i)))
		if err := st.InsertNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ns.ID)
	}
	if err := st.InsertNamespace(ctx, newNamespace("ns-a")); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate name: %v, want ErrConflict", err)
	}
	got, err := st.GetNamespace(ctx, ids[0])
	if err != nil || got.Name != "ns-a" {
		t.Fatalf("GetNamespace = %+v, %v", got, err)
	}
	stale := got
	got.Name = "ns-a2"
	if got, err = st.UpdateNamespace(ctx, got); err != nil || got.Version != 2 {
		t.Fatalf("UpdateNamespace = %+v, %v", got, err)
	}
	if _, err := st.UpdateNamespace(ctx, stale); !errors.Is(err, store.ErrStale) {
		t.Fatalf("stale update: %v, want ErrStale", err)
	}
	// Paging through with a small limit visits every row once, in order.
	var seen []string
	after := store.Cursor{}
	for {
		rows, err := st.ListNamespaces(ctx, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			seen = append(seen, r.ID)
		}
		if len(rows) < 2 {
			break
		}
		after = store.After(rows[len(rows)-1].CreatedAt, rows[len(rows)-1].ID)
	}
	if len(seen) != 5 {
		t.Fatalf("paged %d namespaces, want 5", len(seen))
	}
	if err := st.TombstoneNamespace(ctx, ids[1], occ.Millis(time.Now())); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetNamespace(ctx, ids[1]); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("tombstoned namespace readable: %v", err)
	}
	// A live name is taken; a tombstoned Namespace's name is free again.
	if err := st.InsertNamespace(ctx, newNamespace("ns-c")); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("live name taken twice: %v, want ErrConflict", err)
	}
	again := newNamespace("ns-b")
	if err := st.InsertNamespace(ctx, again); err != nil {
		t.Fatalf("a deleted Namespace's name: %v, want it released", err)
	}
	if got, err := st.GetNamespace(ctx, again.ID); err != nil || got.Name != "ns-b" {
		t.Fatalf("the new ns-b = %+v, %v", got, err)
	}
}

func testPolicy(t *testing.T, st *store.Store) {
	ctx := context.Background()
	now := time.Now()
	p := occ.Principal{ID: occ.NewID(occ.PrefixServicePrincipal), Kind: occ.PrincipalService, Name: "svc", CreatedAt: now, UpdatedAt: now, Version: 1}
	role := occ.Role{ID: occ.NewID(occ.PrefixRole), Name: "readers", Permissions: []occ.Permission{occ.P(occ.KindNamespace, occ.ActionRead)}, CreatedAt: now}
	nsID := occ.NewID(occ.PrefixNamespace)
	b := occ.Binding{ID: occ.NewID(occ.PrefixBinding), PrincipalID: p.ID, RoleID: role.ID, NamespaceID: nsID,
		Target: &occ.Target{Kind: occ.KindNamespace, ID: nsID}, CreatedBy: p.ID, CreatedAt: now}
	r := occ.Restriction{ID: occ.NewID(occ.PrefixRestriction), PrincipalID: p.ID, Permission: occ.P(occ.KindNamespace, occ.ActionRead),
		NamespaceID: nsID, CreatedBy: p.ID, CreatedAt: now}
	err := st.InTx(ctx, func(tx *store.Tx) error {
		return errors.Join(tx.InsertPrincipal(ctx, p), tx.InsertRole(ctx, role), tx.InsertBinding(ctx, b), tx.InsertRestriction(ctx, r))
	})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := st.LoadPolicy(ctx, p.ID, occ.P(occ.KindNamespace, occ.ActionRead))
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Found || rows.Disabled || len(rows.Bindings) != 1 || len(rows.Restrictions) != 1 ||
		rows.Bindings[0].Target == nil || rows.Bindings[0].Target.ID != nsID {
		t.Fatalf("LoadPolicy = %+v", rows)
	}
	other, err := st.LoadPolicy(ctx, p.ID, occ.P(occ.KindNamespace, occ.ActionDelete))
	if err != nil || len(other.Bindings) != 0 || len(other.Restrictions) != 0 {
		t.Fatalf("LoadPolicy for an ungranted permission = %+v, %v", other, err)
	}
	if err := st.DeleteRole(ctx, role.ID); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("deleting a bound role: %v, want ErrConflict", err)
	}
}

func testAudit(t *testing.T, st *store.Store) {
	ctx := context.Background()
	base := time.Now().Add(-time.Hour)
	for i := 0; i < 6; i++ {
		e := occ.AuditEvent{ID: occ.NewID(occ.PrefixAudit), OccurredAt: base.Add(time.Duration(i) * time.Second),
			Kind: occ.AuditMutation, Action: "a" + string(rune('0'+i%2)), Outcome: occ.OutcomeSuccess, ActorID: "prn_x",
			Resource: occ.ResourceRef{Kind: occ.KindNamespace, ID: "ns_x"}, Details: map[string]any{"i": i}}
		if err := st.InsertAuditEvent(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	evs, err := st.ListAuditEvents(ctx, store.AuditFilter{Action: "a1", Limit: 10})
	if err != nil || len(evs) != 3 {
		t.Fatalf("filter by action: %d events, %v", len(evs), err)
	}
	if !evs[0].OccurredAt.After(evs[1].OccurredAt) {
		t.Fatalf("events not newest first")
	}
	evs, err = st.ListAuditEvents(ctx, store.AuditFilter{SinceMillis: occ.Millis(base.Add(4 * time.Second)), Limit: 10})
	if err != nil || len(evs) < 2 {
		t.Fatalf("filter by since: %d events, %v", len(evs), err)
	}
}
