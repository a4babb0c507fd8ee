package app

import (
	"context"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/audit"
	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// SignInResult is a new session: the token goes only into the cookie.
// SharedToken, set when the installation enables the native admin UI, goes
// only into the second cookie, scoped to the shared cookie parent domain.
type SignInResult struct {
	Token       string
	SharedToken string
	Principal   occ.Principal
	ExpiresAt   time.Time
}

var errBadCredentials = occ.E(occ.CodeUnauthenticated, "The email or password is not correct.")

// SignIn checks a local password and opens a session. Failures are
// throttled per account and per client address (429 with Retry-After) and
// cost the same whether or not the account exists.
func (a *App) SignIn(ctx context.Context, email, password, clientAddr string) (SignInResult, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	now := a.now()
	for _, k := range []struct {
		t   *throttle
		key string
	}{{a.accountThrottle, email}, {a.clientThrottle, clientAddr}} {
		if blocked, wait := k.t.blocked(k.key, now); blocked {
			return SignInResult{}, &occ.Error{Code: occ.CodeRateLimited, Message: "Too many failed sign-ins; try again later.",
				RetryAfter: int(math.Ceil(wait.Seconds()))}
		}
	}
	p, err := a.st.GetPrincipalByEmail(ctx, email)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return SignInResult{}, occ.Unavailable(err)
	}
	if !iam.CheckPassword(password, p.PasswordHash) || p.Disabled {
		a.accountThrottle.fail(email, now)
		a.clientThrottle.fail(clientAddr, now)
		ev := audit.Denial("auth.sign_in", orUnknown(p.ID), occ.ResourceRef{Kind: "principal", ID: orUnknown(p.ID)}, "INVALID_CREDENTIALS", nil)
		if err := audit.Append(ctx, a.st, ev); err != nil {
			return SignInResult{}, occ.Unavailable(err)
		}
		return SignInResult{}, errBadCredentials
	}
	res := SignInResult{Token: iam.NewSessionToken(), Principal: p, ExpiresAt: now.Add(a.opts.SessionLifetime)}
	s := occ.Session{ID: occ.NewID(occ.PrefixSession), PrincipalID: p.ID, Digest: iam.Digest(res.Token), CreatedAt: now, ExpiresAt: res.ExpiresAt}
	err = a.tx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertSession(ctx, s); err != nil {
			return occ.Unavailable(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: "auth.sign_in", ActorID: p.ID, Resource: occ.ResourceRef{Kind: "session", ID: s.ID}})
	})
	if err != nil {
		return SignInResult{}, err // no cookie when the audit cannot be written
	}
	if a.opts.NativeAdmin.Enabled {
		if res.SharedToken, err = a.nativeAdminToken(ctx, s.ID); err != nil {
			return SignInResult{}, err
		}
	}
	return res, nil
}

func orUnknown(id string) string {
	if id == "" {
		return "unknown"
	}
	return id
}

// SignOut ends the caller's session.
func (a *App) SignOut(ctx context.Context, c occ.Caller) error {
	if c.Method != occ.AuthSession || c.SessionID == "" {
		return occ.E(occ.CodeUnauthenticated, "Signing out needs a browser session.")
	}
	return a.tx(ctx, func(tx *store.Tx) error {
		if err := tx.RevokeSession(ctx, c.SessionID, occ.Millis(a.now())); err != nil {
			return notFoundOr(err)
		}
		return a.record(ctx, tx, occ.AuditEvent{Action: "auth.sign_out", ActorID: c.PrincipalID, Resource: occ.ResourceRef{Kind: "session", ID: c.SessionID}})
	})
}

// Whoami returns the principal behind a session caller.
func (a *App) Whoami(ctx context.Context, c occ.Caller) (occ.Principal, error) {
	p, err := a.st.GetPrincipal(ctx, c.PrincipalID)
	return p, notFoundOr(err)
}
