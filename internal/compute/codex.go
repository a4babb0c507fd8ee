package compute

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/occ"
)

// The dedicated Codex harness's decisions every driver shares (docs/CODEX.md):
// how it logs in with a revision's credential, the -c overrides of every
// Codex command, the tool-less model probe's command line and how its
// output reads, and the app-server's per-start token. Where the commands
// run (processes, containers) is the driver's.

// Harness diagnostics and held failures (component HarnessComponent).
const (
	HarnessComponent     = "harness"
	HarnessCheckProcess  = "process"
	HarnessCheckLogin    = "login"
	HarnessCheckAppServe = "app-server"
	// HarnessNotLoggedIn: the Agent's Codex home holds no login.
	HarnessNotLoggedIn = "NOT_LOGGED_IN"
	// HarnessLoginTimeout bounds a login.
	HarnessLoginTimeout = 30 * time.Second
	// HarnessAppServerWait bounds the wait for a new app-server's /readyz.
	HarnessAppServerWait = 60 * time.Second
)

// codexProbePrompt is the model probe's whole turn.
const codexProbePrompt = "Reply with the single word OK."

// CodexOverrides are the -c settings every Codex command of a revision
// gets: the OpenAI base URL, the delivered one (baseURL, a Credential
// Gateway's) or else the document's openai provider's
// (models.providers.openai.baseUrl); and the ChatGPT workspace the login
// must belong to (workspace, forced_chatgpt_workspace_id).
func CodexOverrides(doc map[string]any, baseURL, workspace string) []string {
	models, _ := doc["models"].(map[string]any)
	providers, _ := models["providers"].(map[string]any)
	openai, _ := providers["openai"].(map[string]any)
	u, _ := openai["baseUrl"].(string)
	if baseURL != "" {
		u = baseURL
	}
	var out []string
	if u != "" {
		out = append(out, "-c", "openai_base_url="+strconv.Quote(u))
	}
	if workspace != "" {
		out = append(out, "-c", "forced_chatgpt_workspace_id="+strconv.Quote(workspace))
	}
	return out
}

// CodexLogin is the login of a revision's harness credential (env is
// RevisionSpec.HarnessEnv): the login's arguments (after the overrides)
// and the secret to give on its stdin; or held, a credential no login can
// take (an access token that is not a Codex one: RUNTIME_AUTHENTICATION_FAILED;
// none at all: a failed login).
func CodexLogin(env map[string]string) (args []string, secret string, held *Readiness) {
	flag, value := "--with-api-key", env[HarnessAPIKeyEnv]
	if tok, ok := env[HarnessAccessTokenEnv]; ok {
		flag, value = "--with-access-token", tok
		if !strings.HasPrefix(tok, "at-") {
			r := HarnessHeld(HeldCheckModelCredential, HeldAuthenticationFailed, nil)
			return nil, "", &r
		}
	}
	if value == "" {
		r := HarnessHeld(HarnessCheckLogin, occ.DeployRuntimeStartup, nil)
		return nil, "", &r
	}
	return []string{"login", flag}, value, nil
}

// CodexLoginFailed is the held failure of a login that exited non-zero
// with output out: an access-token login asks the provider about the
// token, so a refusal is a rejected credential; anything else a failed
// login.
func CodexLoginFailed(out string) Readiness {
	if codexRejected(out) {
		return HarnessHeld(HeldCheckModelCredential, HeldAuthenticationFailed, nil)
	}
	return HarnessHeld(HarnessCheckLogin, occ.DeployRuntimeStartup, nil)
}

// CodexProbeArgs is the tool-less model probe (after the overrides): a
// `codex exec` turn of the document's primary model.
func CodexProbeArgs(doc map[string]any) []string {
	args := []string{"exec", "--skip-git-repo-check", "--ephemeral", "--sandbox", "read-only"}
	if _, model, ok := strings.Cut(gateway.PrimaryModel(doc), "/"); ok {
		args = append(args, "--model", model)
	}
	return append(args, codexProbePrompt)
}

// CodexProbeTimedOut is the held failure of a probe without an answer in
// its budget.
func CodexProbeTimedOut() Readiness {
	return HarnessHeld(HeldCheckModelProbe, HeldModelProbeTimeout, nil)
}

// CodexProbeVerdict reads a failed probe's output: the Codex CLI prints
// the provider's HTTP status ("unexpected status 401 Unauthorized: …").
func CodexProbeVerdict(out string) Readiness {
	switch {
	case codexRejected(out):
		return HarnessHeld(HeldCheckModelCredential, HeldAuthenticationFailed, nil)
	case strings.Contains(out, "429 Too Many Requests"):
		return HarnessHeld(HeldCheckModelProbe, HeldModelProbeFailed, &FailureCause{Kind: "PROBE_STATUS", Detail: "rate_limit"})
	}
	return HarnessHeld(HeldCheckModelProbe, HeldModelProbeFailed, &FailureCause{Kind: "PROBE_STATUS", Detail: "other"})
}

// codexRejected reports whether Codex output names a provider's 401 or 403.
func codexRejected(out string) bool {
	return strings.Contains(out, "401 Unauthorized") || strings.Contains(out, "403 Forbidden")
}

// HarnessHeld is a held failure of the harness: a held model failure
// names the contract's component and checks (HeldComponent, the same for
// every driver and mode), a failed login the harness.
func HarnessHeld(check, code string, cause *FailureCause) Readiness {
	component := HeldComponent
	if check == HarnessCheckLogin {
		component = HarnessComponent
	}
	return Readiness{Held: true, RuntimeFailure: &RuntimeFailure{
		Component: component, Check: check, CheckedAt: time.Now().UTC(), Code: code, Cause: cause}}
}

// CodexAppServerArgs is a new app-server's command line (after the
// overrides) listening on listen (ws://HOST:PORT) and its token: random,
// new for every start; only its SHA-256 is in the command line, the token
// goes to the gateway's environment (gateway.CodexTokenEnv).
func CodexAppServerArgs(listen string) (args []string, token string, err error) {
	var r [32]byte
	if _, err := rand.Read(r[:]); err != nil {
		return nil, "", err
	}
	token = hex.EncodeToString(r[:])
	return []string{"app-server", "--listen", listen, "--ws-auth", "capability-token", "--ws-token-sha256", CodexTokenSum(token)}, token, nil
}

// CodexTokenSum is the SHA-256 (hex) of an app-server token, as the
// app-server's command line names it.
func CodexTokenSum(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
