package computetest

import "testing"

// NativeAdminOrigin is the native admin origin of the suite's specs.
const NativeAdminOrigin = "http://agent-0123456789abcdef0123456789abcdef.admin.occ.localhost:8080"

// nativeAdminObligations bind a driver that declares NativeAdmin: a
// revision with an origin runs behind occ's proxy (trusted-proxy mode)
// and its endpoint says so; the next one without is back in token mode.
var nativeAdminObligations = []obligation{
	{"TrustedProxyEndpointThenTokenMode", func(t *testing.T, s *subject) {
		ag := s.agent(t)
		spec := s.spec(ag, 1)
		spec.NativeAdminOrigin = NativeAdminOrigin
		s.ready(t, spec)
		ep := s.endpointOn(t, s.d, ag)
		if ep.URL == "" || ep.Token != "" || ep.Password == "" || ep.NativeAdminOrigin != NativeAdminOrigin ||
			ep.ProxyIdentity == "" || ep.RevisionID != spec.RevisionID {
			t.Fatalf("endpoint of a native admin revision = %+v; want a password, the origin, a proxy identity, no token", ep)
		}
		next := s.spec(ag, 2)
		s.ready(t, next)
		if ep := s.endpointOn(t, s.d, ag); ep.Token == "" || ep.Password != "" || ep.NativeAdminOrigin != "" ||
			ep.ProxyIdentity != "" || ep.RevisionID != next.RevisionID {
			t.Fatalf("endpoint of a token-mode revision = %+v", ep)
		}
	}},
}
