package computetest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"maps"
	"testing"

	"github.com/openclaw/occ/internal/compute"
)

// SecretEnvName is the variable the suite passes a secret canary in.
const SecretEnvName = "OCC_CONFORMANCE_SECRET"

// isolationObligations: Agents never share a workload or a credential.
var isolationObligations = []obligation{
	{"AgentsHaveTheirOwnWorkloadEndpointAndCredential", func(t *testing.T, s *subject) {
		ns := s.namespace(t)
		a1, a2 := agentIn(ns), agentIn(ns)
		s.ready(t, s.spec(a1, 1))
		s.ready(t, s.spec(a2, 1))
		w1, w2 := s.workload(t, a1), s.workload(t, a2)
		ep1, ep2 := s.endpointOn(t, s.d, a1), s.endpointOn(t, s.d, a2)
		if w1 == w2 || ep1.URL == ep2.URL || ep1.Token == ep2.Token {
			t.Fatalf("two Agents share a workload, an endpoint or a token: %s %+v, %s %+v", w1, ep1, w2, ep2)
		}
		stop(t, s.d, a1)
		s.noWorkload(t, a1, "StopAgent")
		if w := s.workload(t, a2); w != w2 {
			t.Fatalf("stopping one Agent touched the other's workload: %s, then %s", w2, w)
		}
		if ep := s.endpointOn(t, s.d, a2); ep != ep2 {
			t.Fatalf("stopping one Agent changed the other's endpoint: %+v, then %+v", ep2, ep)
		}
	}},
}

// secretEnvironmentObligations (a driver declaring SecretEnvironment): a
// secret reaches the workload only, from the spec, never from stored state.
var secretEnvironmentObligations = []obligation{
	{"SecretEnvReachesTheWorkloadNeverStoredState", func(t *testing.T, s *subject) {
		ag := s.agent(t)
		secret := canary()
		spec := s.spec(ag, 1)
		spec.Env = maps.Clone(spec.Env)
		if spec.Env == nil {
			spec.Env = map[string]string{}
		}
		spec.Env[SecretEnvName] = secret
		s.ready(t, spec)
		s.wantSecretEnv(t, ag, secret)
		// A stop and a new start: the secret comes from the spec again,
		// never from anything the driver stored.
		stop(t, s.d, ag)
		s.ready(t, spec)
		s.wantSecretEnv(t, ag, secret)
		s.obs.ScanState(t, func(where string, content []byte) {
			if bytes.Contains(content, []byte(secret)) {
				t.Errorf("%s holds the secret", where)
			}
		})
	}},
}

// wantSecretEnv fails unless the Agent's workload sees the secret.
func (s *subject) wantSecretEnv(t *testing.T, ag compute.AgentRef, secret string) {
	t.Helper()
	env, ok := s.obs.WorkloadEnv(t, ag)
	if !ok || env[SecretEnvName] != secret {
		t.Fatalf("workload environment (running %v) lacks %s", ok, SecretEnvName)
	}
}

// canary is a fresh secret value.
func canary() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "canary-" + hex.EncodeToString(b[:])
}
