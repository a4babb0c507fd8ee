package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
	"github.com/openclaw/occ/internal/store/storetest"
)

func TestAccountsStore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, url string) {
		st := storetest.Open(t, url)
		t.Run("ServiceAccounts", func(t *testing.T) { testServiceAccounts(t, st) })
		t.Run("CredentialSources", func(t *testing.T) { testCredentialSources(t, st) })
		t.Run("NamespaceOwned", func(t *testing.T) { testAccountsBlockNamespace(t, st) })
	})
}

func newServiceAccount(nsID, name string, at time.Time) occ.ServiceAccount {
	return occ.ServiceAccount{ID: occ.NewID(occ.PrefixServiceAccount), NamespaceID: nsID, Name: name, BackendID: "chatgpt-main",
		CreatedBy: "prn_x", CreatedAt: at, UpdatedAt: at, Version: 1}
}

func testServiceAccounts(t *testing.T, st *store.Store) {
	ctx := context.Background()
	nsA, nsB := occ.NewID(occ.PrefixNamespace), occ.NewID(occ.PrefixNamespace)
	base := time.Now().Truncate(time.Millisecond)
	var ids []string
	for i := range 5 {
		sa := newServiceAccount(nsA, "sa-"+string(rune('a'+i)), base.Add(time.Duration(i%2)*time.Millisecond))
		if err := st.InsertServiceAccount(ctx, sa); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sa.ID)
	}
	if err := st.InsertServiceAccount(ctx, newServiceAccount(nsA, "sa-a", base)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate name: %v, want ErrConflict", err)
	}
	other := newServiceAccount(nsB, "sa-a", base)
	if err := st.InsertServiceAccount(ctx, other); err != nil {
		t.Fatalf("same name in another Namespace: %v", err)
	}
	got, err := st.GetServiceAccount(ctx, nsA, ids[0])
	if err != nil || got.Name != "sa-a" || got.BackendID != "chatgpt-main" || got.Credential != nil || got.Version != 1 ||
		!got.CreatedAt.Equal(base) {
		t.Fatalf("GetServiceAccount = %+v, %v", got, err)
	}
	if _, err := st.GetServiceAccount(ctx, nsB, ids[0]); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("account read through another Namespace: %v", err)
	}

	// Paging with a small limit visits each account of the Namespace once.
	var seen []string
	after := store.Cursor{}
	for {
		rows, err := st.ListServiceAccounts(ctx, nsA, after, 2)
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
	slices.Sort(seen)
	want := slices.Sorted(slices.Values(ids))
	if !slices.Equal(seen, want) {
		t.Fatalf("paged %v, want %v", seen, want)
	}

	// The first credential is kept; a second is ErrConflict; a missing account ErrNotFound.
	if _, err := st.ServiceAccountCiphertext(ctx, nsA, ids[0]); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ciphertext before issue: %v", err)
	}
	exp := base.Add(time.Hour)
	cred := occ.IssuedCredential{Kind: "access_token", IssuedAt: base, ExpiresAt: &exp}
	sa, err := st.SetServiceAccountCredential(ctx, nsA, ids[0], cred, "Y2lwaGVy", occ.Millis(base))
	if err != nil || sa.Credential == nil || sa.Credential.Kind != "access_token" || !sa.Credential.IssuedAt.Equal(base) ||
		sa.Credential.ExpiresAt == nil || !sa.Credential.ExpiresAt.Equal(exp) || sa.Version != 2 {
		t.Fatalf("SetServiceAccountCredential = %+v, %v", sa, err)
	}
	if _, err := st.SetServiceAccountCredential(ctx, nsA, ids[0], cred, "b3RoZXI=", occ.Millis(base)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second credential: %v, want ErrConflict", err)
	}
	if _, err := st.SetServiceAccountCredential(ctx, nsB, ids[1], cred, "x", occ.Millis(base)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("credential for an account of another Namespace: %v, want ErrNotFound", err)
	}
	if c, err := st.ServiceAccountCiphertext(ctx, nsA, ids[0]); err != nil || c != "Y2lwaGVy" {
		t.Fatalf("ciphertext = %q, %v", c, err)
	}

	if err := st.DeleteServiceAccount(ctx, nsB, ids[0]); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete through another Namespace: %v", err)
	}
	if err := st.DeleteServiceAccount(ctx, nsA, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetServiceAccount(ctx, nsA, ids[0]); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted account readable: %v", err)
	}
	// The name is free again.
	if err := st.InsertServiceAccount(ctx, newServiceAccount(nsA, "sa-a", base)); err != nil {
		t.Fatalf("reuse of a deleted account's name: %v", err)
	}
}

func testCredentialSources(t *testing.T, st *store.Store) {
	ctx := context.Background()
	ns := occ.NewID(occ.PrefixNamespace)
	now := time.Now().Truncate(time.Millisecond)
	sec1, sec2 := occ.NewID(occ.PrefixSecret), occ.NewID(occ.PrefixSecret)
	cs := occ.CredentialSource{ID: occ.NewID(occ.PrefixCredentialSource), NamespaceID: ns, Name: "openai", Type: "openai",
		Config:  map[string]any{"baseUrl": "https://api.example", "nested": map[string]any{"n": 1.5}},
		Secrets: map[string]occ.SecretRef{"apiKey": {Kind: "secret", NamespaceID: ns, ID: sec1}},
		State:   occ.CredentialSourceRegistering, CreatedBy: "prn_x", CreatedAt: now, UpdatedAt: now, Version: 1}
	if err := st.InsertCredentialSource(ctx, cs); err != nil {
		t.Fatal(err)
	}
	dup := cs
	dup.ID = occ.NewID(occ.PrefixCredentialSource)
	if err := st.InsertCredentialSource(ctx, dup); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate name: %v, want ErrConflict", err)
	}
	got, err := st.GetCredentialSource(ctx, ns, cs.ID)
	if err != nil || got.Type != "openai" || got.State != occ.CredentialSourceRegistering || got.Config["baseUrl"] != "https://api.example" ||
		got.Secrets["apiKey"] != cs.Secrets["apiKey"] {
		t.Fatalf("GetCredentialSource = %+v, %v", got, err)
	}
	if users, err := st.CredentialSourcesUsingSecret(ctx, ns, sec1); err != nil || !slices.Equal(users, []string{cs.ID}) {
		t.Fatalf("sources using %s = %v, %v", sec1, users, err)
	}
	if binders, err := st.SecretBinders(ctx, ns, sec1); err != nil || len(binders) != 1 ||
		binders[0] != (store.Owned{Kind: "credential_source", ID: cs.ID}) {
		t.Fatalf("SecretBinders(%s) = %v, %v", sec1, binders, err)
	}

	// Replace the references and the state; a stale version is refused.
	stale := got
	got.Secrets = map[string]occ.SecretRef{"token": {Kind: "secret", NamespaceID: ns, ID: sec2}}
	got.State = occ.CredentialSourceReady
	got.UpdatedAt = now.Add(time.Second)
	upd, err := st.UpdateCredentialSource(ctx, got)
	if err != nil || upd.Version != 2 {
		t.Fatalf("UpdateCredentialSource = %+v, %v", upd, err)
	}
	if _, err := st.UpdateCredentialSource(ctx, stale); !errors.Is(err, store.ErrStale) {
		t.Fatalf("stale update: %v, want ErrStale", err)
	}
	if users, _ := st.CredentialSourcesUsingSecret(ctx, ns, sec1); len(users) != 0 {
		t.Fatalf("a dropped reference still counts: %v", users)
	}
	if users, _ := st.CredentialSourcesUsingSecret(ctx, ns, sec2); !slices.Equal(users, []string{cs.ID}) {
		t.Fatalf("new reference not found: %v", users)
	}
	rows, err := st.ListCredentialSources(ctx, ns, store.Cursor{}, 10)
	if err != nil || len(rows) != 1 || rows[0].State != occ.CredentialSourceReady || rows[0].Secrets["token"].ID != sec2 {
		t.Fatalf("ListCredentialSources = %+v, %v", rows, err)
	}
	if rows, err := st.ListCredentialSources(ctx, occ.NewID(occ.PrefixNamespace), store.Cursor{}, 10); err != nil || len(rows) != 0 {
		t.Fatalf("another Namespace lists %v, %v", rows, err)
	}

	if err := st.DeleteCredentialSource(ctx, occ.NewID(occ.PrefixNamespace), cs.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete through another Namespace: %v", err)
	}
	if users, _ := st.CredentialSourcesUsingSecret(ctx, ns, sec2); len(users) != 1 {
		t.Fatalf("a refused delete dropped references: %v", users)
	}
	if err := st.DeleteCredentialSource(ctx, ns, cs.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetCredentialSource(ctx, ns, cs.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted source readable: %v", err)
	}
	if users, _ := st.CredentialSourcesUsingSecret(ctx, ns, sec2); len(users) != 0 {
		t.Fatalf("references outlive their source: %v", users)
	}
}

// testAccountsBlockNamespace: accounts and sources are owned resources
// that block their Namespace's deletion.
func testAccountsBlockNamespace(t *testing.T, st *store.Store) {
	ctx := context.Background()
	ns := newNamespace("owner-" + occ.NewUUID()[:8])
	if err := st.InsertNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	if owned, err := st.NamespaceOwned(ctx, ns.ID); err != nil || len(owned) != 0 {
		t.Fatalf("empty Namespace owns %v, %v", owned, err)
	}
	now := time.Now()
	sa := newServiceAccount(ns.ID, "bot", now)
	cs := occ.CredentialSource{ID: occ.NewID(occ.PrefixCredentialSource), NamespaceID: ns.ID, Name: "src", Type: "openai",
		State: occ.CredentialSourceReady, CreatedBy: "prn_x", CreatedAt: now, UpdatedAt: now, Version: 1}
	if err := errors.Join(st.InsertServiceAccount(ctx, sa), st.InsertCredentialSource(ctx, cs)); err != nil {
		t.Fatal(err)
	}
	owned, err := st.NamespaceOwned(ctx, ns.ID)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, o := range owned {
		kinds[o.Kind] = o.ID
	}
	if kinds["service_account"] != sa.ID || kinds["credential_source"] != cs.ID {
		t.Fatalf("NamespaceOwned = %v", owned)
	}
}
