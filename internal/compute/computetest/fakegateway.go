package computetest

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/compute"
)

// FakeModelDocument configures a model provider whose key comes from
// FAKEPROV_API_KEY, so that a gateway probes it at start.
func FakeModelDocument() map[string]any {
	return map[string]any{
		"models": map[string]any{"providers": map[string]any{"fakeprov": map[string]any{
			"baseUrl": "http://127.0.0.1:9/v1", "apiKey": "${FAKEPROV_API_KEY}", "api": "openai-completions",
			"models": []any{map[string]any{"id": "m1", "name": "M1"}}}}},
		"agents": map[string]any{"defaults": map[string]any{"model": map[string]any{"primary": "fakeprov/m1"}}},
	}
}

// FakeDedicatedDocument is a dedicated revision's document for the fake
// Codex CLI (gatewaytest.CodexBinaryPackage), which decides by the
// credential: the primary model openai/gpt-5.4 at an openai provider on a
// port nothing answers.
func FakeDedicatedDocument() map[string]any {
	return map[string]any{
		"models": map[string]any{"providers": map[string]any{"openai": map[string]any{"baseUrl": "http://127.0.0.1:9/v1"}}},
		"agents": map[string]any{"defaults": map[string]any{"model": map[string]any{"primary": "openai/gpt-5.4"}}},
	}
}

// FakeGatewaySlowStart is Options.SlowStart for a driver whose workloads run
// the fake gateway binary (gatewaytest.BuildBinary), which takes its
// switches from its environment: the port opens after 1 s, the gateway is
// started after 2 s more.
func FakeGatewaySlowStart(s compute.RevisionSpec) compute.RevisionSpec {
	s.Env = withEnv(s.Env, map[string]string{"FAKEGATEWAY_LISTEN_DELAY": "1s", "FAKEGATEWAY_STARTUP_DELAY": "2s"})
	return s
}

// FakeGatewayRejectCredential is Options.RejectCredential for the fake
// gateway binary: FakeModelDocument's provider rejects the key.
func FakeGatewayRejectCredential(s compute.RevisionSpec) compute.RevisionSpec {
	doc := maps.Clone(s.Document)
	if doc == nil {
		doc = map[string]any{}
	}
	maps.Copy(doc, FakeModelDocument())
	s.Document = doc
	s.Env = withEnv(s.Env, map[string]string{"FAKEPROV_API_KEY": "sk-rejected", "FAKEGATEWAY_MODEL_AUTH": "rejected"})
	return s
}

// withEnv is env with more laid over it, in a new map.
func withEnv(env, more map[string]string) map[string]string {
	out := maps.Clone(env)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, more)
	return out
}

// FakeGatewayAcceptCredential gives spec FakeModelDocument's provider with
// a key the fake gateway accepts.
func FakeGatewayAcceptCredential(s compute.RevisionSpec) compute.RevisionSpec {
	doc := maps.Clone(s.Document)
	if doc == nil {
		doc = map[string]any{}
	}
	maps.Copy(doc, FakeModelDocument())
	s.Document = doc
	s.Env = withEnv(s.Env, map[string]string{"FAKEPROV_API_KEY": "sk-good", "FAKEGATEWAY_MODEL_AUTH": "ok"})
	return s
}

// FakeGatewayModelProbes counts the provider calls the revision's fake
// gateway logged (it logs each models.probe it answers), read through the
// driver's Logs.
func FakeGatewayModelProbes(t *testing.T, d compute.Driver, rev compute.RevisionRef) int {
	t.Helper()
	l, err := d.Logs(context.Background(), rev, compute.LogOptions{TailLines: compute.MaxLogLines})
	if err != nil || !l.Found {
		t.Fatalf("Logs = %+v, %v", l, err)
	}
	return strings.Count(strings.Join(l.Lines, "\n"), "model probe of provider fakeprov")
}
