package app

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/occ"
)

// The shared token: the second session cookie, scoped to the shared cookie
// parent domain, that only the native admin proxy accepts (CONTRACT.md
// §2). It names the session and proves it with an HMAC under an
// installation key:
//
//	occa_<session ID>.<hex HMAC-SHA256(key, "occ native admin\x00" + session ID)>
//
// so it lives and dies with the session (sign-out, expiry, a disabled
// principal end both), needs no storage of its own, and is useless to the
// API and console, which look session tokens up by digest. The key is made
// once per installation and kept encrypted with the Secrets keyring (a
// process without a keyring uses a per-process key).
const sharedTokenPrefix = "occa_"

// nativeAdminKey returns the HMAC key, loading or making it on first use.
func (a *App) nativeAdminKey(ctx context.Context) ([]byte, error) {
	a.nativeKeyMu.Lock()
	defer a.nativeKeyMu.Unlock()
	if a.nativeKey != nil {
		return a.nativeKey, nil
	}
	var key []byte
	if a.opts.Secrets != nil {
		k, err := installationKey(ctx, a.st, a.opts.Secrets, a.instID, "native-admin-session")
		if err != nil {
			return nil, occ.Unavailable(fmt.Errorf("native admin session key: %w", err))
		}
		key = k
	} else {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
	}
	a.nativeKey = key
	return key, nil
}

func sharedMAC(key []byte, sessionID string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("occ native admin\x00" + sessionID))
	return hex.EncodeToString(m.Sum(nil))
}

// nativeAdminToken returns the shared token of a session.
func (a *App) nativeAdminToken(ctx context.Context, sessionID string) (string, error) {
	key, err := a.nativeAdminKey(ctx)
	if err != nil {
		return "", err
	}
	return sharedTokenPrefix + sessionID + "." + sharedMAC(key, sessionID), nil
}

// NativeAdminSession authenticates the shared cookie's token: a valid MAC,
// then the same checks as a console session (not revoked, not expired, a
// principal that may sign in). Every failure is UNAUTHENTICATED.
func (a *App) NativeAdminSession(ctx context.Context, token string) (occ.Caller, error) {
	if !a.opts.NativeAdmin.Enabled || len(token) > 200 {
		return occ.Caller{}, occ.ErrUnauthenticated
	}
	rest, ok := strings.CutPrefix(token, sharedTokenPrefix)
	id, mac, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || !occ.ValidID(occ.PrefixSession, id) {
		return occ.Caller{}, occ.ErrUnauthenticated
	}
	key, err := a.nativeAdminKey(ctx)
	if err != nil {
		return occ.Caller{}, err
	}
	if !hmac.Equal([]byte(mac), []byte(sharedMAC(key, id))) {
		return occ.Caller{}, occ.ErrUnauthenticated
	}
	return iam.NewAuthenticator(a.st).SessionByID(ctx, id)
}
