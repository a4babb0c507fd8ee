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

// SignIn checks a local password and opens a session.
//
// Every attempt is charged, before its password is checked, to its
// (account, client address) pair and to its client address (429 with
// Retry-After over either limit), and taken back when it succeeds; so
// attempts made at once cannot slip past the limits, and a stranger's
// wrong guesses lock the account only for the stranger's address, never
// for the owner's. At most Options.SignInConcurrency passwords are hashed
// at once (argon2id holds 64 MiB each); an attempt that finds no free slot
// in time is refused with 429 and not charged. An unknown email is hashed
// against a dummy, through the same steps, so it costs what a known one
// costs.
func (a *App) SignIn(ctx context.Context, email, password, clientAddr string) (SignInResult, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	now := a.now()
	refund, err := a.chargeSignIn(email, clientAddr, now)
	if err != nil {
		return SignInResult{}, err
	}
	p, err := a.st.GetPrincipalByEmail(ctx, email)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		refund()
		return SignInResult{}, occ.Unavailable(err)
	}
	leave, err := a.hashes.enter(ctx)
	if err != nil {
		refund()
		return SignInResult{}, err
	}
	ok := a.checkPassword(password, p.PasswordHash)
	leave()
	if !ok || p.Disabled {
		ev := audit.Denial("auth.sign_in", orUnknown(p.ID), occ.ResourceRef{Kind: "principal", ID: orUnknown(p.ID)}, "INVALID_CREDENTIALS", nil)
		if err := audit.Append(ctx, a.st, ev); err != nil {
			return SignInResult{}, occ.Unavailable(err)
		}
		return SignInResult{}, errBadCredentials
	}
	refund()
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

// chargeSignIn charges one sign-in attempt to its account-and-client pair
// and to its client, or refuses it (429) when either is at its limit; the
// returned function takes the charge back.
func (a *App) chargeSignIn(email, client string, now time.Time) (func(), error) {
	pair := email + "\x00" + client
	ok, wait := a.pairThrottle.take(pair, now)
	if ok {
		if ok, wait = a.clientThrottle.take(client, now); !ok {
			a.pairThrottle.refund(pair, now)
		}
	}
	if !ok {
		return nil, &occ.Error{Code: occ.CodeRateLimited, Message: occ.MsgSignInThrottled, RetryAfter: int(math.Ceil(wait.Seconds()))}
	}
	return func() {
		a.pairThrottle.refund(pair, now)
		a.clientThrottle.refund(client, now)
	}, nil
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
