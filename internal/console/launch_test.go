package console

import (
	"reflect"
	"testing"

	"github.com/openclaw/occ/internal/occ"
)

// TestLaunchForm: the plugin lines read as a selection map (blank lines
// ignored, a line of three words refused at /plugins), each harness method
// sends only the reference it takes, and saved settings fill the form so
// that sending it back changes nothing.
func TestLaunchForm(t *testing.T) {
	got, err := launchForm{Plugins: "b@cat write_actions\n\n  a@cat  \n"}.plugins()
	want := map[string]occ.PluginSelection{"a@cat": {}, "b@cat": {ApprovalPolicy: "write_actions"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("plugins = %v, %v", got, err)
	}
	if _, err := (launchForm{Plugins: "a@cat none extra"}).plugins(); occ.AsError(err) == nil || occ.AsError(err).Details[0].Path != "/plugins" {
		t.Fatalf("a line of three words = %v", err)
	}
	f := launchForm{SecretID: "sec_1", ServiceAccountID: "sa_1", SourceID: "cs_1"}
	for method, want := range map[string]*occ.HarnessAuth{
		"":                               nil,
		occ.HarnessAPIKey:                {Method: occ.HarnessAPIKey, Source: &occ.SecretRef{Kind: "secret", NamespaceID: "ns_1", ID: "sec_1"}},
		occ.HarnessCodexPAT:              {Method: occ.HarnessCodexPAT, Source: &occ.SecretRef{Kind: "secret", NamespaceID: "ns_1", ID: "sec_1"}},
		occ.HarnessChatGPTServiceAccount: {Method: occ.HarnessChatGPTServiceAccount, ServiceAccountID: "sa_1"},
		occ.HarnessCredentialSource:      {Method: occ.HarnessCredentialSource, SourceID: "cs_1"},
		occ.HarnessRuntime:               {Method: occ.HarnessRuntime},
	} {
		f.HarnessMethod = method
		if got := f.harness("ns_1"); !reflect.DeepEqual(got, want) {
			t.Errorf("harness(%q) = %+v, want %+v", method, got, want)
		}
	}
	saved := occ.AgentSettings{ExecutionMode: "dedicated", BackendID: "b", Plugins: want,
		HarnessAuth: &occ.HarnessAuth{Method: occ.HarnessCodexPAT, Source: &occ.SecretRef{Kind: "secret", NamespaceID: "ns_1", ID: "sec_1"}}}
	back := launchFormOf("cfg_1", saved)
	if back.ConfigurationID != "cfg_1" || back.ExecutionMode != "dedicated" || back.BackendID != "b" || back.Plugins != "a@cat\nb@cat write_actions" {
		t.Fatalf("form of saved settings = %+v", back)
	}
	if plugins, _ := back.plugins(); !reflect.DeepEqual(plugins, want) || !reflect.DeepEqual(back.harness("ns_1"), saved.HarnessAuth) {
		t.Fatalf("the form sent back = %v %+v", plugins, back.harness("ns_1"))
	}
}
