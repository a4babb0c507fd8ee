package occ

// Deployment error codes (terminal) and attempt codes (progress).
const (
	DeployConvergenceDeadline  = "CONVERGENCE_DEADLINE_EXCEEDED"
	DeployRuntimeAuthFailed    = "RUNTIME_AUTHENTICATION_FAILED"
	DeployRuntimeStartup       = "RUNTIME_STARTUP_FAILED"
	DeployModelProbeTimeout    = "RUNTIME_MODEL_PROBE_TIMEOUT"
	DeployModelProbeFailed     = "RUNTIME_MODEL_PROBE_FAILED"
	DeploySuperseded           = "REVISION_SUPERSEDED"
	DeployStopped              = "REVISION_STOPPED"
	DeployGatewayUnavailable   = "AGENT_GATEWAY_UNAVAILABLE"
	DeployAuthorizationDenied  = "AUTHORIZATION_DENIED"
	DeployActorRevoked         = "ACTOR_REVOKED"
	DeployBackendUnavailable   = "BACKEND_UNAVAILABLE"
	DeploySecretUnavailable    = "SECRET_BINDING_UNAVAILABLE"
	DeployInvalidOwner         = "INVALID_REVISION_OWNER"
	DeployNamespaceNotReady    = "NAMESPACE_NOT_READY"
	DeployDependency           = "DEPENDENCY_UNAVAILABLE"
	DeployDriverUnsupported    = "COMPUTE_DRIVER_UNSUPPORTED"
	DeployPluginNotInCatalog   = "PLUGIN_NOT_IN_CATALOG"
	DeployPluginUnsupported    = "PLUGIN_SELECTION_UNSUPPORTED"
	DeployWorkspaceSetupFailed = "WORKSPACE_SETUP_FAILED"

	AttemptIncomplete  = "REVISION_INCOMPLETE"
	AttemptDependency  = "DEPENDENCY_UNAVAILABLE"
	AttemptGateway     = "AGENT_GATEWAY_UNAVAILABLE"
	AttemptActiveMoved = "ACTIVE_REVISION_CHANGED"
	AttemptLeaseLost   = "LEASE_EXPIRED"
	AttemptPending     = "RECONCILIATION_PENDING"
)

// Terminal codes a compute driver reports as permanent failures.
const (
	DeployInvalidConfiguration = "INVALID_CONFIGURATION"
	DeployRuntimeNotConfigured = "RUNTIME_NOT_CONFIGURED"
)

var deploymentMessages = map[string]string{
	DeployInvalidConfiguration: "The revision's Configuration cannot be turned into a gateway configuration; fix the Configuration and deploy again.",
	DeployRuntimeNotConfigured: "The compute driver has no agent runtime to start gateways with; install it (occ runtime install) or configure one.",
	DeployConvergenceDeadline:  "The deployment did not become ready before its convergence deadline.",
	DeployRuntimeAuthFailed:    "The runtime rejected the model credential (HTTP 401/403). Fix the credential and deploy again.",
	DeployRuntimeStartup:       "The gateway could not start.",
	DeployModelProbeTimeout:    "The runtime's startup model probe did not answer in time. Check the model provider and deploy again.",
	DeployModelProbeFailed:     "The runtime's startup model probe failed; error.data.runtimeFailure.cause says how. Check the model and its provider and deploy again.",
	DeploySuperseded:           "A newer deployment of this Agent replaced this one.",
	DeployStopped:              "The Agent was stopped before this deployment completed.",
	DeployGatewayUnavailable:   "The Agent gateway was unavailable.",
	DeployPluginNotInCatalog:   "A selected plugin is not in any plugin catalog of the installation; change the Agent's plugins and deploy again.",
	DeployPluginUnsupported:    "The compute driver cannot run a selected plugin with its approval policy; change the Agent's plugins and deploy again.",
	DeployWorkspaceSetupFailed: "The Agent's initial workspace files were prepared for other workspace defaults than this runtime's; delete and recreate the Agent with current initial files.",
}

// DeploymentMessage is the fixed message of a terminal deployment code.
func DeploymentMessage(code string) string {
	if m, ok := deploymentMessages[code]; ok {
		return m
	}
	return "Deployment reconciliation failed."
}

var attemptMessages = map[string]string{
	AttemptIncomplete:  "The revision is not ready yet.",
	AttemptDependency:  "A dependency was unavailable; the attempt will be retried.",
	AttemptGateway:     "The Agent gateway was unavailable; the attempt will be retried.",
	AttemptActiveMoved: "Another revision became active meanwhile; the attempt will be retried.",
	AttemptLeaseLost:   "The previous attempt did not finish; the attempt will be retried.",
}

// AttemptProgress maps an attempt code to the allowlisted code and fixed
// message shown in progress.lastAttempt.
func AttemptProgress(code string) (string, string) {
	if m, ok := attemptMessages[code]; ok {
		return code, m
	}
	return AttemptPending, "Deployment has not completed. Another reconciliation is pending."
}

// Diagnostics of a deployment (CONTRACT.md §7): at most MaxDiagnosticChecks
// checks, each with one of the statuses below.
const (
	MaxDiagnosticChecks = 32
	CheckSucceeded      = "succeeded"
	CheckFailed         = "failed"
	CheckUnknown        = "unknown"
)
