package local_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
)

// relay plays a Credential Gateway's model relay: it knows one
// placeholder, answers a model request carrying it as the provider
// answers the source's real credential would ("rejected" 401), and counts
// the requests.
type relay struct {
	*httptest.Server
	placeholder, real string

	mu       sync.Mutex
	requests int
}

func newRelay(t *testing.T, real string) *relay {
	r := &relay{placeholder: "cgw-" + canary(t), real: real}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.requests++
		r.mu.Unlock()
		if req.URL.Path != "/relay/v1/responses" || req.Header.Get("Authorization") != "Bearer "+r.placeholder || strings.Contains(r.real, "rejected") {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Write([]byte(`{"status":"completed"}`))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *relay) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// TestDedicatedCodexCredentialSourceUsesTheGatewaysBaseURL: a harness
// delivered a Credential Gateway's placeholder and base URL logs in with
// the placeholder and sends every model request (the probe, and the
// app-server's settings) to the gateway's base URL instead of the
// document's; neither the placeholder nor the source's credential reaches
// the gateway's environment or document. A credential the provider
// rejects behind the gateway holds the revision as AUTHENTICATION_FAILED.
func TestDedicatedCodexCredentialSourceUsesTheGatewaysBaseURL(t *testing.T) {
	d, _ := openDedicated(t)
	real := "sk-source-" + canary(t)
	rl := newRelay(t, real)
	ag := newAgent(t, d)
	spec := dedicatedSpec(ag, 1, map[string]string{compute.HarnessAPIKeyEnv: rl.placeholder, compute.HarnessBaseURLEnv: rl.URL + "/relay/v1"})
	ready(t, d, spec)
	if rl.count() == 0 {
		t.Fatal("the model probe did not go through the gateway's relay")
	}
	if a := codexFile(t, d, ag, "auth.json"); !strings.Contains(a, rl.placeholder) || strings.Contains(a, real) {
		t.Fatalf("the harness's login = %s; want the placeholder only", a)
	}
	args := codexFile(t, d, ag, "exec.args")
	if !strings.Contains(args, `openai_base_url="`+rl.URL+`/relay/v1"`) || strings.Contains(args, "127.0.0.1:9") {
		t.Fatalf("the probe's overrides %q; want the gateway's base URL, not the document's", args)
	}
	for _, pid := range harnessPIDs(d, ag) {
		b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if !strings.Contains(string(b), rl.URL+"/relay/v1") {
			t.Fatalf("the app-server's command line %q lacks the gateway's base URL", b)
		}
	}
	for k, v := range environ(t, onlyPID(t, d, ag)) {
		if strings.Contains(v, rl.placeholder) || strings.Contains(v, real) {
			t.Fatalf("the gateway's environment holds the placeholder or the credential in %s", k)
		}
	}
	cfg, err := os.ReadFile(filepath.Join(d.AgentDir(ag), gateway.ConfigFileName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg), rl.placeholder) || strings.Contains(string(cfg), real) {
		t.Fatal("the gateway's openclaw.json holds the placeholder or the credential")
	}

	rejected := newRelay(t, "sk-rejected-"+canary(t))
	r := heldDedicated(t, d, map[string]string{compute.HarnessAPIKeyEnv: rejected.placeholder, compute.HarnessBaseURLEnv: rejected.URL + "/relay/v1"})
	if rf := r.RuntimeFailure; rf.Code != compute.HeldAuthenticationFailed || rf.Check != compute.HeldCheckModelCredential {
		t.Fatalf("a credential rejected behind the gateway: %+v; want %s", rf, compute.HeldAuthenticationFailed)
	}
}

// TestDedicatedCodexServiceAccountIsHeldToItsWorkspace: a ChatGPT
// account's issued access token logs the harness in by Codex's
// access-token login, and every Codex command (the probe, the app-server)
// is held to the Backend's workspace (forced_chatgpt_workspace_id); the
// token never reaches the gateway's environment or document.
func TestDedicatedCodexServiceAccountIsHeldToItsWorkspace(t *testing.T) {
	d, _ := openDedicated(t)
	ag := newAgent(t, d)
	tok := "at-" + canary(t)
	ready(t, d, dedicatedSpec(ag, 1, map[string]string{compute.HarnessAccessTokenEnv: tok, compute.HarnessWorkspaceEnv: "ws_team-1"}))
	if a := codexFile(t, d, ag, "auth.json"); !strings.Contains(a, tok) || !strings.Contains(a, `"access_token"`) {
		t.Fatalf("the harness's login = %s; want the issued access token", a)
	}
	const forced = `forced_chatgpt_workspace_id="ws_team-1"`
	if args := codexFile(t, d, ag, "exec.args"); !strings.Contains(args, forced) {
		t.Fatalf("the probe's overrides %q lack %s", args, forced)
	}
	hp := harnessPIDs(d, ag)
	if len(hp) != 1 {
		t.Fatalf("harness processes %v, want one", hp)
	}
	if b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(hp[0]), "cmdline")); !strings.Contains(string(b), forced) {
		t.Fatalf("the app-server's command line %q lacks %s", b, forced)
	}
	for k, v := range environ(t, onlyPID(t, d, ag)) {
		if strings.Contains(v, tok) {
			t.Fatalf("the gateway's environment holds the account's token in %s", k)
		}
	}
	cfg, err := os.ReadFile(filepath.Join(d.AgentDir(ag), gateway.ConfigFileName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg), tok) {
		t.Fatal("the gateway's openclaw.json holds the account's token")
	}
}
