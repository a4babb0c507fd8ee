package store_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// testSecrets is the store suite for Secrets (run by TestStore on both
// databases).
func testSecrets(t *testing.T, st *store.Store) {
	ctx := context.Background()
	ns, other := newNamespace("secrets-a"), newNamespace("secrets-b")
	for _, n := range []occ.Namespace{ns, other} {
		if err := st.InsertNamespace(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Now()
	newSecret := func(nsID, name string, i int) occ.Secret {
		at := base.Add(time.Duration(i) * time.Millisecond)
		return occ.Secret{ID: occ.NewID(occ.PrefixSecret), NamespaceID: nsID, Name: name, Version: 1, CreatedBy: "spn_test",
			CreatedAt: at, UpdatedAt: at}
	}
	var ids []string
	for i := range 5 {
		s := newSecret(ns.ID, "s-"+string(rune('a'+i)), i)
		if err := st.InsertSecret(ctx, s, store.Sealed{Ciphertext: []byte{1, 0, 0, 0, 7, byte(i)}, KeyID: 7}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	// Names are unique per Namespace only.
	if err := st.InsertSecret(ctx, newSecret(ns.ID, "s-a", 9), store.Sealed{Ciphertext: []byte{1}, KeyID: 7}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate name: %v, want ErrConflict", err)
	}
	elsewhere := newSecret(other.ID, "s-a", 9)
	if err := st.InsertSecret(ctx, elsewhere, store.Sealed{Ciphertext: []byte{1, 0, 0, 0, 8, 9}, KeyID: 8}); err != nil {
		t.Fatalf("same name in another Namespace: %v", err)
	}

	// Reads are scoped to the Namespace; metadata reads never need the value.
	got, err := st.GetSecret(ctx, ns.ID, ids[0])
	if err != nil || got.Name != "s-a" || got.Version != 1 || got.CreatedBy != "spn_test" {
		t.Fatalf("GetSecret = %+v, %v", got, err)
	}
	if _, err := st.GetSecret(ctx, other.ID, ids[0]); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetSecret across Namespaces: %v, want ErrNotFound", err)
	}
	_, sealed, err := st.GetSealedSecret(ctx, ns.ID, ids[0])
	if err != nil || !bytes.Equal(sealed.Ciphertext, []byte{1, 0, 0, 0, 7, 0}) || sealed.KeyID != 7 {
		t.Fatalf("GetSealedSecret = %+v, %v", sealed, err)
	}

	// Paging visits every Secret of the Namespace once, in order.
	var seen []string
	after := store.Cursor{}
	for {
		rows, err := st.ListSecrets(ctx, ns.ID, after, 2)
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
	if !slices.Equal(seen, ids) {
		t.Fatalf("paged %v, want %v", seen, ids)
	}

	// A value change is a compare-and-set on the version.
	stale := got
	got.UpdatedAt = base.Add(time.Second)
	if got, err = st.UpdateSecretValue(ctx, got, store.Sealed{Ciphertext: []byte{1, 0, 0, 0, 8, 1}, KeyID: 8}); err != nil || got.Version != 2 {
		t.Fatalf("UpdateSecretValue = %+v, %v", got, err)
	}
	if _, err := st.UpdateSecretValue(ctx, stale, store.Sealed{Ciphertext: []byte{1}, KeyID: 8}); !errors.Is(err, store.ErrStale) {
		t.Fatalf("stale update: %v, want ErrStale", err)
	}
	if _, err := st.UpdateSecretValue(ctx, newSecret(ns.ID, "missing", 0), store.Sealed{Ciphertext: []byte{1}, KeyID: 8}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update of a missing Secret: %v, want ErrNotFound", err)
	}

	// The rotation work list: every row not under key 8, any Namespace, by ID.
	todo, err := st.SealedSecretsNotUnder(ctx, 8, "", 100)
	if err != nil || len(todo) != 4 {
		t.Fatalf("SealedSecretsNotUnder(8) = %d rows, %v; want 4", len(todo), err)
	}
	if n, err := st.CountSecretsNotUnder(ctx, 8); err != nil || n != 4 {
		t.Fatalf("CountSecretsNotUnder(8) = %d, %v", n, err)
	}
	if !slices.IsSortedFunc(todo, func(a, b store.SealedSecret) int { return strings.Compare(a.ID, b.ID) }) {
		t.Fatal("work list not in ID order")
	}
	first := todo[0]
	if err := st.ResealSecret(ctx, first, store.Sealed{Ciphertext: []byte{1, 0, 0, 0, 8, 2}, KeyID: 8}); err != nil {
		t.Fatal(err)
	}
	// Resealing keeps version and update time, and loses to any change.
	if err := st.ResealSecret(ctx, first, store.Sealed{Ciphertext: []byte{1, 0, 0, 0, 8, 3}, KeyID: 8}); !errors.Is(err, store.ErrStale) {
		t.Fatalf("reseal of a row already resealed: %v, want ErrStale", err)
	}
	after1, sealed, _ := st.GetSealedSecret(ctx, first.NamespaceID, first.ID)
	if after1.Version != first.Version || sealed.KeyID != 8 || !bytes.Equal(sealed.Ciphertext, []byte{1, 0, 0, 0, 8, 2}) {
		t.Fatalf("after reseal: %+v %+v", after1, sealed)
	}
	if rest, _ := st.SealedSecretsNotUnder(ctx, 8, first.ID, 100); len(rest) != 3 {
		t.Fatalf("work list after %s = %d rows, want 3", first.ID, len(rest))
	}

	// Deletion blockers: a Secret blocks its Namespace; a Configuration
	// binding it blocks the Secret (its ID matched exactly, LIKE wildcards
	// in it taken literally).
	owned, err := st.NamespaceOwned(ctx, other.ID)
	if err != nil || !slices.Contains(owned, store.Owned{Kind: "secret", ID: elsewhere.ID}) {
		t.Fatalf("NamespaceOwned = %v, %v; want the Secret", owned, err)
	}
	decoy := strings.Replace(ids[1], "_", "x", 1)
	for i, bound := range []string{ids[1], decoy} {
		now := occ.Millis(time.Now())
		bindings := `{"SLACK_BOT_TOKEN":{"source":{"kind":"secret","namespaceId":"` + ns.ID + `","id":"` + bound + `"},"delivery":"env"}}`
		err := st.InsertConfiguration(ctx, store.ConfigurationRow{ID: occ.NewID(occ.PrefixConfiguration), NamespaceID: ns.ID,
			Name: "cfg-" + string(rune('a'+i)), Kind: "agent", SchemaVersion: 1, Values: `{}`, SecretBindings: bindings,
			Generation: 1, Version: 1, CreatedBy: "spn_test", CreatedAt: now, UpdatedAt: now})
		if err != nil {
			t.Fatal(err)
		}
	}
	if b, err := st.SecretBinders(ctx, ns.ID, ids[1]); err != nil || len(b) != 1 || b[0].Kind != "configuration" {
		t.Fatalf("SecretBinders(bound) = %v, %v", b, err)
	}
	if b, err := st.SecretBinders(ctx, ns.ID, ids[2]); err != nil || len(b) != 0 {
		t.Fatalf("SecretBinders(unbound) = %v, %v", b, err)
	}
	if b, err := st.SecretBinders(ctx, other.ID, ids[1]); err != nil || len(b) != 0 {
		t.Fatalf("SecretBinders in another Namespace = %v, %v", b, err)
	}

	if err := st.DeleteSecret(ctx, ns.ID, ids[4]); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteSecret(ctx, ns.ID, ids[4]); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
	if err := st.DeleteSecret(ctx, other.ID, ids[3]); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete across Namespaces: %v, want ErrNotFound", err)
	}
	// A deleted Secret's name is free again.
	if err := st.InsertSecret(ctx, newSecret(ns.ID, "s-e", 20), store.Sealed{Ciphertext: []byte{1}, KeyID: 8}); err != nil {
		t.Fatalf("reuse of a deleted Secret's name: %v", err)
	}
}
