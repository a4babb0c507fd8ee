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
	var found *store.HeldKey
	if len(rows) == 0 {
		DigestEqual(digest, dummyDigest)
	}
	for i := range rows {
		if DigestEqual(digest, rows[i].Digest) {
			found = &rows[i]
		}
	}
	if found == nil || found.RevokedAt != nil || !a.now().Before(found.ExpiresAt) || !mayAuthenticate(found.Holder) {
		return occ.Caller{}, occ.ErrUnauthenticated
	}
	return occ.Caller{PrincipalID: found.PrincipalID, Kind: found.Holder.Kind, Method: occ.AuthServiceKey, KeyID: found.ID, PinnedNS: found.NamespaceID,
		PolicyGeneration: found.Holder.PolicyGeneration}, nil
}

// Session verifies a session token from the cookie.
func (a *Authenticator) Session(ctx context.Context, token string) (occ.Caller, error) {
	if token == "" || len(token) > 128 {
		return occ.Caller{}, occ.ErrUnauthenticated
	}
	s, h, err := a.st.SessionByDigest(ctx, Digest(token))
	return a.session(s, h, err)
}

// SessionByID verifies the session with that ID, for a credential that
// names its session and was proven by other means (the native admin
// proxy's shared token): the same checks as Session.
func (a *Authenticator) SessionByID(ctx context.Context, id string) (occ.Caller, error) {
	if !occ.ValidID(occ.PrefixSession, id) {
		return occ.Caller{}, occ.ErrUnauthenticated
	}
	s, h, err := a.st.SessionByID(ctx, id)
	return a.session(s, h, err)
}

// session turns a looked-up session into a Caller: it must exist, be
// neither revoked nor expired, and belong to a principal that may sign in.
func (a *Authenticator) session(s occ.Session, h store.Holder, err error) (occ.Caller, error) {
	if errors.Is(err, store.ErrNotFound) {
		return occ.Caller{}, occ.ErrUnauthenticated
	}
	if err != nil {
		return occ.Caller{}, occ.Unavailable(fmt.Errorf("look up session: %w", err))
	}
	if s.RevokedAt != nil || !a.now().Before(s.ExpiresAt) || !mayAuthenticate(h) {
		return occ.Caller{}, occ.ErrUnauthenticated
	}
	return occ.Caller{PrincipalID: s.PrincipalID, Kind: h.Kind, Method: occ.AuthSession, SessionID: s.ID, PolicyGeneration: h.PolicyGeneration}, nil
}

// mayAuthenticate reports whether a credential's principal may use it: it
// is enabled and is not an Agent's service principal (a seed limitation).
func mayAuthenticate(h store.Holder) bool { return !h.Disabled && h.AgentID == "" }
