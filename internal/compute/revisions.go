package compute

import (
	"errors"
	"fmt"
	"time"

	"github.com/openclaw/occ/internal/occ"
)

// AgentRef names an Agent to a driver.
type AgentRef struct {
	NamespaceID string
	AgentID     string
}

// RevisionRef names one revision of an Agent.
type RevisionRef struct {
	AgentRef
	RevisionID string
}

// The keys of RevisionSpec.HarnessEnv.
const (
	// HarnessAPIKeyEnv: an API key, logged in as one (harnessAuth api_key,
	// a ChatGPT account's issued api_key, or a Credential Gateway's
	// placeholder for credential_source).
	HarnessAPIKeyEnv = "OPENAI_API_KEY"
	// HarnessAccessTokenEnv: a Codex access token, logged in as one
	// (codex_pat, or a ChatGPT account's issued access_token).
	HarnessAccessTokenEnv = "CODEX_ACCESS_TOKEN"
	// HarnessBaseURLEnv: the OpenAI base URL every model request of the
	// harness goes to instead of the document's (a Credential Gateway's,
	// which inserts the credential on the way out). Not a secret.
	HarnessBaseURLEnv = "OPENAI_BASE_URL"
	// HarnessWorkspaceEnv: the ChatGPT workspace the harness's login must
	// belong to (chatgpt_service_account, the matching Backend's). Not a
	// secret.
	HarnessWorkspaceEnv = "CODEX_CHATGPT_WORKSPACE_ID"
)

// RevisionSpec is everything a driver needs to run one revision. Secret
// values are resolved by the worker just before the call, live only in
// memory, and reach the gateway through its process environment only.
type RevisionSpec struct {
	RevisionRef
	Number             int64
	ServicePrincipalID string
	ExecutionMode      string // embedded | dedicated
	// HarnessAuthMethod is the revision's harness authentication method
	// (occ.Harness*), "" when it has none. With occ.HarnessRuntime the
	// credentials are the operator's, on the place that runs the gateway:
	// occ runs no model probe of its own (the seed).
	HarnessAuthMethod string
	Document          map[string]any // the frozen native Configuration document
	Env               map[string]string
	// HarnessEnv is the secret environment of a dedicated revision's
	// harness (the Codex app-server), never given to its gateway: its
	// credential in HarnessAPIKeyEnv or HarnessAccessTokenEnv, and, for
	// some methods, where it sends model requests (HarnessBaseURLEnv) and
	// the ChatGPT workspace it must use (HarnessWorkspaceEnv). Nil for an
	// embedded revision.
	HarnessEnv   map[string]string
	Plugins      []string          // plugin IDs (name@catalog)
	InitialFiles map[string]string // applied once before the first start; nil when none
	// NativeAdminOrigin, when set, is the browser origin of the Agent's
	// native admin UI: the gateway then runs in trusted-proxy mode
	// (gateway.NativeAdminProxy), trusting only occ's proxy for that origin,
	// and occ's own client uses the password instead of the token. Empty:
	// token mode.
	NativeAdminOrigin string
	// OnProgress, when set, hears what a PrepareRevision call is doing
	// while it lasts: a driver reports a slow step (the startup model
	// probe: occ.PendingModelProbeRunning) before it begins, so that the
	// deployment's progress shows it. What a revision still waits for after
	// the call is Readiness.PendingReason.
	OnProgress func(reason string)
}

// Report tells OnProgress, if any, that the call now does reason.
func (s RevisionSpec) Report(reason string) {
	if s.OnProgress != nil {
		s.OnProgress(reason)
	}
}

// Warning is a closed-code warning a ready revision carries.
type Warning struct {
	Code     string // PLUGIN_INSTALL_FAILED | PLUGIN_AUTH_REQUIRED
	PluginID string
}

// RuntimeFailure is bounded, credential-free evidence of why a revision is
// not ready, captured by the driver for that exact revision.
type RuntimeFailure struct {
	Component string
	Check     string
	CheckedAt time.Time
	Code      string
	// Cause narrows a MODEL_PROBE_FAILED down; nil with every other code.
	Cause *FailureCause
}

// FailureCause is the closed cause of a failed model probe: Kind
// PROCESS_EXIT, PROBE_STATUS, INVALID_OUTPUT or WRAPPER_ERROR, and a Detail
// from that kind's closed vocabulary (for PROBE_STATUS the provider's
// status bucket: format, rate_limit, billing, unknown, no_model or other).
type FailureCause struct {
	Kind   string
	Detail string
}

// Codes of held runtime failures (RuntimeFailure.Code with Readiness.Held):
// the runtime holds itself unready and nothing will change that short of a
// new deployment.
const (
	// HeldAuthenticationFailed: the model provider rejected the
	// credential (HTTP 401/403).
	HeldAuthenticationFailed = "AUTHENTICATION_FAILED"
	// HeldModelProbeTimeout: the startup model probe did not answer in
	// its budget.
	HeldModelProbeTimeout = "MODEL_PROBE_TIMEOUT"
	// HeldModelProbeFailed: the startup model probe answered with a
	// failure other than a rejected credential (see FailureCause).
	HeldModelProbeFailed = "MODEL_PROBE_FAILED"
)

// The component and checks of a held runtime failure, the same for every
// driver: HeldCheckModelCredential goes with HeldAuthenticationFailed,
// HeldCheckModelProbe with HeldModelProbeTimeout and HeldModelProbeFailed.
const (
	HeldComponent            = "gateway"
	HeldCheckModelCredential = "model-credential"
	HeldCheckModelProbe      = "model-probe"
)

// Readiness is what PrepareRevision observed.
type Readiness struct {
	Ready bool
	// PendingReason says why a revision is not ready yet, when the driver
	// knows: one of the occ.Pending* reasons (occ.AttemptOfPending names
	// the attempt code progress shows); "" otherwise.
	PendingReason string
	// Install is how far the runtime install got, with PendingReason
	// occ.PendingRuntimeInstalling.
	Install        *InstallProgress
	Warnings       []Warning
	RuntimeFailure *RuntimeFailure
	// Held says the runtime failed in a way it holds (RuntimeFailure.Code
	// is one of the Held* codes): the deployment fails at once instead of
	// waiting for its deadline.
	Held bool
}

// InstallProgress is how far a runtime install got: its phase (one of
// occ.InstallPhase*) and the bytes it has on disk so far.
type InstallProgress struct {
	Phase string
	Bytes int64
}

// InstallingError is the retryable error of a driver step that cannot go on
// while the agent runtime installs in the background (a first deploy); a
// driver's PrepareRevision turns it into pending readiness with
// PendingInstalling.
type InstallingError struct{ Progress InstallProgress }

func (e *InstallingError) Error() string {
	return fmt.Sprintf("the agent runtime is installing (%s, %d bytes so far)", e.Progress.Phase, e.Progress.Bytes)
}

// PendingInstalling is the readiness of a revision that waits for the
// runtime install err reports, and false for any other error.
func PendingInstalling(err error) (Readiness, bool) {
	var ie *InstallingError
	if !errors.As(err, &ie) {
		return Readiness{}, false
	}
	p := ie.Progress
	return Readiness{PendingReason: occ.PendingRuntimeInstalling, Install: &p}, true
}

// Endpoint is how occ reaches an Agent's gateway.
type Endpoint struct {
	URL string // ws://127.0.0.1:PORT (private)
	// Token, or Password for a gateway in trusted-proxy mode, is occ's
	// backend credential; exactly one is set.
	Token    string
	Password string
	// RevisionID is the revision the gateway runs.
	RevisionID string
	// NativeAdminOrigin is the native admin origin the gateway was started
	// for (RevisionSpec.NativeAdminOrigin), "" in token mode.
	NativeAdminOrigin string
	// ProxyIdentity is the identity the gateway trusts from occ's native
	// admin proxy (as secret as the token), "" in token mode.
	ProxyIdentity string
}

// MaxChecks is the most checks one diagnosis may hold (CONTRACT.md §7).
const MaxChecks = occ.MaxDiagnosticChecks

// Diagnosis is what Diagnose observed: the revision the checks are of and
// the checks themselves (at most MaxChecks), each with a fixed code and
// message, never text the runtime produced.
type Diagnosis struct {
	RevisionID string
	Checks     []Check
}

// Check is one diagnostics result.
type Check struct {
	Component string
	Check     string
	Status    string // succeeded | failed | unknown
	Code      string
	Message   string
}
