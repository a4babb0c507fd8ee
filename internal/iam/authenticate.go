package iam

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// Authenticator turns presented credentials into a Caller.
type Authenticator struct {
	st  *store.Store
	now func() time.Time
}

// NewAuthenticator returns an Authenticator over st.
func NewAuthenticator(st *store.Store) *Authenticator {
	return &Authenticator{st: st, now: time.Now}
}

// ServiceKey verifies a bearer service key. Every failure is the same
// UNAUTHENTICATED error; a database failure is DEPENDENCY_UNAVAILABLE.
func (a *Authenticator) ServiceKey(ctx context.Context, key string) (occ.Caller, error) {
	if !ServiceKeyPattern.MatchString(key) {
		return occ.Caller{}, occ.ErrUnauthenticated
	}
	rows, err := a.st.ServiceKeysByLookup(ctx, KeyLookup(key))
	if err != nil {
		return occ.Caller{}, occ.Unavailable(fmt.Errorf("look up service key: %w", err))
	}
	digest := Digest(key)
	var found *occ.ServiceKey
	if len(rows) == 0 {
		DigestEqual(digest, dummyDigest)
	}
	for i := range rows {
		if DigestEqual(digest, rows[i].Digest) {
			found = &rows[i]
		}
	}
	if found == nil || found.RevokedAt != nil || !a.now().Before(found.ExpiresAt) {
		return occ.Caller{}, occ.ErrUnauthenticated
	}
	p, err := a.principal(ctx, found.PrincipalID)
	if err != nil {
		return occ.Caller{}, err
	}
	return occ.Caller{PrincipalID: p.ID, Kind: p.Kind, Method: occ.AuthServiceKey, KeyID: found.ID, PinnedNS: found.NamespaceID}, nil
}

// Session verifies a session token from the cookie.
func (a *Authenticator) Session(ctx context.Context, token string) (occ.Caller, error) {
	if token == "" || len(token) > 128 {
		return occ.Caller{}, occ.ErrUnauthenticated
	}
	s, err := a.st.SessionByDigest(ctx, Digest(token))
	return a.session(ctx, s, err)
}

// SessionByID verifies the session with that ID, for a credential that
// names its session and was proven by other means (the native admin
// proxy's shared token): the same checks as Session.
func (a *Authenticator) SessionByID(ctx context.Context, id string) (occ.Caller, error) {
	if !occ.ValidID(occ.PrefixSession, id) {
		return occ.Caller{}, occ.ErrUnauthenticated
	}
	s, err := a.st.SessionByID(ctx, id)
	return a.session(ctx, s, err)
}

// session turns a looked-up session into a Caller: it must exist, be
// neither revoked nor expired, and belong to a principal that may sign in.
func (a *Authenticator) session(ctx context.Context, s occ.Session, err error) (occ.Caller, error) {
	if errors.Is(err, store.ErrNotFound) {
		return occ.Caller{}, occ.ErrUnauthenticated
	}
	if err != nil {
		return occ.Caller{}, occ.Unavailable(fmt.Errorf("look up session: %w", err))
	}
	if s.RevokedAt != nil || !a.now().Before(s.ExpiresAt) {
		return occ.Caller{}, occ.ErrUnauthenticated
	}
	p, err := a.principal(ctx, s.PrincipalID)
	if err != nil {
		return occ.Caller{}, err
	}
	return occ.Caller{PrincipalID: p.ID, Kind: p.Kind, Method: occ.AuthSession, SessionID: s.ID}, nil
}

// principal loads a principal that may authenticate: it exists, is enabled
// and is not an Agent's service principal (a seed limitation).
func (a *Authenticator) principal(ctx context.Context, id string) (occ.Principal, error) {
	p, err := a.st.GetPrincipal(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return p, occ.ErrUnauthenticated
	}
	if err != nil {
		return p, occ.Unavailable(fmt.Errorf("load principal: %w", err))
	}
	if p.Disabled || p.AgentID != "" {
		return p, occ.ErrUnauthenticated
	}
	return p, nil
}
