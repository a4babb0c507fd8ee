package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestHeldBackWritesAreTheTransactions: an audit event (a write PostgreSQL
// connections send with the transaction's next statement or its commit)
// commits and rolls back with the change it records, on both databases:
// kept with a commit, gone with a rollback or a later statement's failure,
// and its own failure, reported when it is sent, takes the change with it
// (and is not an unknown commit outcome). A transaction whose first
// statement is a write really is one (BEGIN went with that write).
func TestHeldBackWritesAreTheTransactions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, url string) {
		st := storetest.Open(t, url)
		ctx := context.Background()
		event := func(ns occ.Namespace) occ.AuditEvent {
			return occ.AuditEvent{ID: occ.NewID("aud"), OccurredAt: time.Now(), Kind: "change", Action: "namespaces.create", Outcome: "success",
				ActorID: "sp_test", NamespaceID: ns.ID, Resource: occ.ResourceRef{Kind: occ.KindNamespace, ID: ns.ID}}
		}
		present := func(ns occ.Namespace) (bool, int) {
			_, err := st.GetNamespace(ctx, ns.ID)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				t.Fatal(err)
			}
			evs, lerr := st.ListAuditEvents(ctx, store.AuditFilter{ResourceID: ns.ID, Limit: 10})
			if lerr != nil {
				t.Fatal(lerr)
			}
			return err == nil, len(evs)
		}
		check := func(what string, ns occ.Namespace, wantNS bool, wantEvents int) {
			t.Helper()
			if gotNS, gotEvents := present(ns); gotNS != wantNS || gotEvents != wantEvents {
				t.Fatalf("%s: Namespace present %v with %d audit events; want %v with %d", what, gotNS, gotEvents, wantNS, wantEvents)
			}
		}

		committed := newNamespace("committed")
		if err := st.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.InsertNamespace(ctx, committed); err != nil {
				return err
			}
			return tx.InsertAuditEvent(ctx, event(committed))
		}); err != nil {
			t.Fatal(err)
		}
		check("committed", committed, true, 1)

		rolledBack := newNamespace("rolled-back")
		refused := errors.New("refused")
		if err := st.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.InsertNamespace(ctx, rolledBack); err != nil {
				return err
			}
			if err := tx.InsertAuditEvent(ctx, event(rolledBack)); err != nil {
				return err
			}
			return refused
		}); !errors.Is(err, refused) {
			t.Fatalf("rolled back: %v", err)
		}
		check("rolled back after its audit event", rolledBack, false, 0)

		laterFails := newNamespace("later-fails")
		if err := st.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.InsertNamespace(ctx, laterFails); err != nil {
				return err
			}
			if err := tx.InsertAuditEvent(ctx, event(laterFails)); err != nil {
				return err
			}
			return tx.InsertNamespace(ctx, laterFails) // the same ID again
		}); err == nil {
			t.Fatal("a transaction whose last statement failed committed")
		}
		check("a later statement failed", laterFails, false, 0)

		auditFails := newNamespace("audit-fails")
		taken := mustFirstAuditID(t, st, committed)
		if err := st.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.InsertNamespace(ctx, auditFails); err != nil {
				return err
			}
			ev := event(auditFails)
			ev.ID = taken // the insert fails
			return tx.InsertAuditEvent(ctx, ev)
		}); err == nil || errors.Is(err, store.ErrCommitUnknown) {
			t.Fatalf("an audit event that could not be written: %v; want a failed transaction, not an unknown commit", err)
		}
		check("its audit event failed", auditFails, false, 0)
		check("the committed one after all this", committed, true, 1)
	})
}

func mustFirstAuditID(t *testing.T, st *store.Store, ns occ.Namespace) string {
	t.Helper()
	evs, err := st.ListAuditEvents(context.Background(), store.AuditFilter{ResourceID: ns.ID, Limit: 1})
	if err != nil || len(evs) != 1 {
		t.Fatalf("audit events of %s: %v, %v", ns.ID, evs, err)
	}
	return evs[0].ID
}
