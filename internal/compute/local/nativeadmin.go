package local

import (
	"github.com/openclaw/occ/internal/gateway"
)

// The native admin UI on the local driver. A revision whose spec names a
// NativeAdminOrigin runs its gateway in trusted-proxy mode
// (gateway.NativeAdminProxy): occ's proxy in this process connects over
// loopback, and occ's own client (probes, workspace files, diagnostics)
// authenticates with the Agent's secret as the gateway password
// (OPENCLAW_GATEWAY_PASSWORD) instead of the token, which the gateway
// refuses in this mode. The origin is kept in run.json, so a restart after
// a crash, or by a new occ process, renders the same mode; the next
// revision's spec decides again. Without an origin nothing changes (token
// mode).

// targetOf copies what a probe or a client needs of the Agent's gateway.
func targetOf(a *agent, st *runState) target {
	return target{proc: a.proc, port: st.Port, token: readToken(a.dir), nativeAdminOrigin: st.NativeAdminOrigin, dedicated: st.Dedicated}
}

// dialOptions is how occ's client connects to the gateway.
func (t target) dialOptions() gateway.Options {
	if t.nativeAdminOrigin != "" {
		return gateway.Options{URL: t.wsURL(), Password: t.token}
	}
	return gateway.Options{URL: t.wsURL(), Token: t.token}
}

// trustedProxy is the trusted-proxy rendering for st, or nil (token mode).
func trustedProxy(st *runState, secret string) *gateway.TrustedProxy {
	if st.NativeAdminOrigin == "" {
		return nil
	}
	return gateway.NativeAdminProxy(st.NativeAdminOrigin, gateway.NativeAdminIdentity(secret))
}

// secretEnv returns the secret as the token or, in trusted-proxy mode, as
// the password.
func secretEnv(st *runState, secret string) (token, password string) {
	if st.NativeAdminOrigin != "" {
		return "", secret
	}
	return secret, ""
}
