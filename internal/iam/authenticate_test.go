package iam_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestAuthenticateHolder: a service key or a session authenticates its
// principal only while that principal may use it: enabled, and not an
// Agent's service principal. The principal is read with the credential
// (one statement), so this holds at the lowest layer on both databases.
func TestAuthenticateHolder(t *testing.T) {
	t.Parallel()
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		st := storetest.Open(t, url)
		ctx := context.Background()
		now := time.Now()
		a := iam.NewAuthenticator(st)
		type credentials struct{ key, session string }
		issue := func(name string, kind occ.PrincipalKind, agentID string, disabled bool) (string, credentials) {
			t.Helper()
			p := occ.Principal{ID: occ.NewID(occ.PrefixPrincipal), Kind: kind, Name: name, AgentID: agentID, Disabled: disabled,
				CreatedAt: now, UpdatedAt: now, Version: 1}
			if kind == occ.PrincipalHuman {
				p.Email = name + "@example.com"
			}
			if err := st.InsertPrincipal(ctx, p); err != nil {
				t.Fatal(err)
			}
			key := iam.NewServiceKey()
			if err := st.InsertServiceKey(ctx, occ.ServiceKey{ID: occ.NewID(occ.PrefixServiceKey), PrincipalID: p.ID, Name: name,
				Lookup: iam.KeyLookup(key), Digest: iam.Digest(key), CreatedBy: p.ID, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			token := iam.NewServiceKey()
			if err := st.InsertSession(ctx, occ.Session{ID: occ.NewID(occ.PrefixSession), PrincipalID: p.ID, Digest: iam.Digest(token),
				CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			return p.ID, credentials{key, token}
		}
		for _, c := range []struct {
			name     string
			kind     occ.PrincipalKind
			agentID  string
			disabled bool
			allowed  bool
		}{
			{"robot", occ.PrincipalService, "", false, true},
			{"ana", occ.PrincipalHuman, "", false, true},
			{"off", occ.PrincipalService, "", true, false},
			{"agents-own", occ.PrincipalService, occ.NewID(occ.PrefixAgent), false, false},
		} {
			id, cr := issue(c.name, c.kind, c.agentID, c.disabled)
			byKey, kerr := a.ServiceKey(ctx, cr.key)
			bySession, serr := a.Session(ctx, cr.session)
			if !c.allowed {
				if !errors.Is(kerr, occ.ErrUnauthenticated) || !errors.Is(serr, occ.ErrUnauthenticated) {
					t.Errorf("%s: key → %v, session → %v; want both unauthenticated", c.name, kerr, serr)
				}
				continue
			}
			if kerr != nil || byKey.PrincipalID != id || byKey.Kind != c.kind || byKey.Method != occ.AuthServiceKey {
				t.Errorf("%s by key: %+v, %v", c.name, byKey, kerr)
			}
			if serr != nil || bySession.PrincipalID != id || bySession.Kind != c.kind || bySession.Method != occ.AuthSession {
				t.Errorf("%s by session: %+v, %v", c.name, bySession, serr)
			}
		}
		if _, err := a.ServiceKey(ctx, iam.NewServiceKey()); !errors.Is(err, occ.ErrUnauthenticated) {
			t.Errorf("an unknown key: %v", err)
		}
		if _, err := a.Session(ctx, "no-such-session"); !errors.Is(err, occ.ErrUnauthenticated) {
			t.Errorf("an unknown session: %v", err)
		}
	})
}
