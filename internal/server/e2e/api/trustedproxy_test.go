package api_test

import (
	"testing"

	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestTrustedProxy: the test client stands for a reverse proxy on
// 127.0.0.1 forwarding for two clients. With the proxy in
// http.trustedProxies each client has its own per-client bucket and its
// own sign-in limits; without it every X-Forwarded-For is ignored, so the
// two share the proxy's.
func TestTrustedProxy(t *testing.T) {
	t.Parallel()
	const burst = 5
	const first, second = "203.0.113.1", "198.51.100.2, 203.0.113.2" // the second through another hop
	for _, trusted := range []bool{true, false} {
		name := map[bool]string{true: "trusted", false: "not trusted"}[trusted]
		boots := func(t *testing.T, opts ...func(*server.Main)) *servertest.Env {
			if trusted {
				opts = append(opts, func(m *server.Main) { m.Config.HTTP.TrustedProxies = config.List{"127.0.0.0/8", "10.0.0.0/8"} })
			}
			return servertest.Boot(t, storetest.Migrated(t, "sqlite"), servertest.NewFakeCompute(t), opts...)
		}
		t.Run(name+"/rate", func(t *testing.T) {
			e := boots(t, withLimits(func(l *config.Limits, _ *config.HTTP) { l.RequestsPerSecondPerClient, l.BurstPerClient = 1, burst })).WithT(t)
			_, r := untilLimited(t, func() servertest.Resp { return e.Call("GET", "/namespaces", "", nil, "X-Forwarded-For", first) })
			wantLimited(t, r, occ.MsgRateLimitedClient)
			got := e.Call("GET", "/namespaces", e.Admin, nil, "X-Forwarded-For", second+", 10.1.1.1").Status
			if want := map[bool]int{true: 200, false: 429}[trusted]; got != want {
				t.Fatalf("the other client behind the proxy = %d, want %d", got, want)
			}
		})
		t.Run(name+"/sign-in", func(t *testing.T) {
			e := boots(t).WithT(t)
			const admin = "admin@occ.local"
			signIn := func(xff, password string) servertest.Resp {
				return e.Call("POST", "/api/auth/sign-in", "", map[string]any{"email": admin, "password": password}, "X-Forwarded-For", xff)
			}
			_, r := untilLimited(t, func() servertest.Resp { return signIn(first, "wrong password") })
			wantLimited(t, r, occ.MsgSignInThrottled)
			got := signIn(second, servertest.AdminPassword).Status
			if want := map[bool]int{true: 200, false: 429}[trusted]; got != want {
				t.Fatalf("the owner from the other client behind the proxy = %d, want %d", got, want)
			}
		})
	}
}
