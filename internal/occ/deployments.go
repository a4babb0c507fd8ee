package occ

// Deployment statuses (GET …/deployments/{rev}: status).
const (
	DeploymentQueued    = "queued"
	DeploymentRunning   = "running"
	DeploymentSucceeded = "succeeded"
	DeploymentFailed    = "failed"
)

// DeploymentTerminal reports whether a deployment status is final: terminal
// results are never rewritten.
func DeploymentTerminal(status string) bool {
	return status == DeploymentSucceeded || status == DeploymentFailed
}

// Deployment error codes (terminal; error.code of a failed deployment).
const (
	DeployConvergenceDeadline         = "CONVERGENCE_DEADLINE_EXCEEDED"
	DeployRuntimeAuthFailed           = "RUNTIME_AUTHENTICATION_FAILED"
	DeployRuntimeStartup              = "RUNTIME_STARTUP_FAILED"
	DeployModelProbeTimeout           = "RUNTIME_MODEL_PROBE_TIMEOUT"
	DeployModelProbeFailed            = "RUNTIME_MODEL_PROBE_FAILED"
	DeploySuperseded                  = "REVISION_SUPERSEDED"
	DeployStopped                     = "REVISION_STOPPED"
	DeployGatewayUnavailable          = "AGENT_GATEWAY_UNAVAILABLE"
	DeployAuthorizationDenied         = ReasonAuthorizationDenied
	DeployActorRevoked                = ReasonActorRevoked
	DeployBackendUnavailable          = "BACKEND_UNAVAILABLE"
	DeployServiceAccountUnavailable   = "SERVICE_ACCOUNT_UNAVAILABLE"
	DeployCredentialSourceUnavailable = "CREDENTIAL_SOURCE_UNAVAILABLE"
	DeploySecretUnavailable           = "SECRET_BINDING_UNAVAILABLE"
	DeployInvalidOwner                = "INVALID_REVISION_OWNER"
	DeployInvalidAdmittedRevision     = "INVALID_ADMITTED_REVISION"
	DeployNamespaceNotReady           = "NAMESPACE_NOT_READY"
	DeployDependency                  = ReasonDependencyUnavailable
	DeployComputeDriverMismatch       = "COMPUTE_DRIVER_MISMATCH"
	DeployExecutionModeUnsupported    = "EXECUTION_MODE_UNSUPPORTED"
	DeployHarnessAuthUnsupported      = "HARNESS_AUTH_UNSUPPORTED"
	// DeploySecretEnvironmentUnsupported: the Configuration binds Secrets
	// and the driver delivers none (ssh: the operator's host file holds
	// what the gateway needs).
	DeploySecretEnvironmentUnsupported = "SECRET_ENVIRONMENT_UNSUPPORTED"
	DeployPluginNotInCatalog           = "PLUGIN_NOT_IN_CATALOG"
	DeployPluginUnsupported            = "PLUGIN_SELECTION_UNSUPPORTED"
	DeployWorkspaceSetupFailed         = "WORKSPACE_SETUP_FAILED"
	DeployWorkspaceSetupUnsupported    = "WORKSPACE_SETUP_UNSUPPORTED"
	// DeployInvalidConfiguration: the revision's Configuration sets a key
	// occ owns or forbids (dispatch), or a compute driver cannot render it.
	DeployInvalidConfiguration = "INVALID_CONFIGURATION"
	// DeployRuntimeNotConfigured: a compute driver has no runtime to start
	// gateways with (a permanent failure it reports).
	DeployRuntimeNotConfigured = "RUNTIME_NOT_CONFIGURED"
	// DeployRuntimeNPMNotFound: the agent runtime is not installed and
	// npm, which installs it, is not there.
	DeployRuntimeNPMNotFound = "RUNTIME_INSTALL_NPM_NOT_FOUND"
	// DeployRuntimeInstallFailed: installing the agent runtime with npm
	// failed (error.data.phase: the install phase that failed).
	DeployRuntimeInstallFailed = "RUNTIME_INSTALL_FAILED"
	// DeployPluginInstallFailed: a plugin the revision needs could not be
	// installed into the gateway (error.data.pluginId names it).
	DeployPluginInstallFailed = WarningPluginInstallFailed
)

// Attempt codes (progress.lastAttempt.code of a deployment still queued).
const (
	AttemptIncomplete    = "REVISION_INCOMPLETE"
	AttemptUnschedulable = "REVISION_UNSCHEDULABLE"
	AttemptWorkspaceNode = "WORKSPACE_NODE_PENDING"
	AttemptDependency    = ReasonDependencyUnavailable
	AttemptGateway       = "AGENT_GATEWAY_UNAVAILABLE"
	AttemptActiveMoved   = "ACTIVE_REVISION_CHANGED"
	AttemptLeaseLost     = "LEASE_EXPIRED"
	AttemptPending       = "RECONCILIATION_PENDING"
	// The phases of a revision on its way to ready, in the order a first
	// deploy meets them: the runtime installing (data {phase, bytes}), the
	// gateway starting, the startup model probe running.
	AttemptRuntimeInstalling = PendingRuntimeInstalling
	AttemptGatewayStarting   = PendingGatewayStarting
	AttemptModelProbeRunning = PendingModelProbeRunning
)

// Pending reasons a compute driver may give for a revision that is not
// ready yet (compute.Readiness.PendingReason); AttemptOfPending turns one
// into the attempt code shown in progress.
const (
	// PendingGatewayStarting: the workload runs but its gateway does not
	// answer its probes yet.
	PendingGatewayStarting = "AGENT_GATEWAY_STARTING"
	// PendingGatewayUnavailable: the gateway started but reports itself
	// unready (a failing channel or plugin).
	PendingGatewayUnavailable = "AGENT_GATEWAY_UNAVAILABLE"
	// PendingWorkloadUnschedulable: the driver cannot place the workload
	// yet (quota, capacity).
	PendingWorkloadUnschedulable = "WORKLOAD_UNSCHEDULABLE"
	// PendingWorkspaceNode: the node holding the Agent's workspace is
	// not available yet.
	PendingWorkspaceNode = "WORKSPACE_NODE_PENDING"
	// PendingRuntimeInstalling: the agent runtime is being installed (a
	// first deploy on a machine without it); the driver reports the
	// install's phase (RuntimeInstallPhases) and bytes on disk.
	PendingRuntimeInstalling = "RUNTIME_INSTALLING"
	// PendingModelProbeRunning: the gateway answers and is trying the
	// model credential (the startup model probe, one provider call).
	PendingModelProbeRunning = "MODEL_PROBE_RUNNING"
)

// The phases of a runtime install (progress.lastAttempt.data.phase of
// RUNTIME_INSTALLING): waiting for another install of the same runtime,
// resolving the Node.js release, fetching Node.js, fetching openclaw and
// its dependencies (running their install scripts), verifying.
const (
	InstallPhaseWaiting   = "waiting"
	InstallPhaseResolving = "resolving"
	InstallPhaseNode      = "fetching_node"
	InstallPhaseOpenClaw  = "fetching_openclaw"
	InstallPhaseVerifying = "verifying"
)

// InstallPhase reports whether phase is one of the install phases.
func InstallPhase(phase string) bool {
	switch phase {
	case InstallPhaseWaiting, InstallPhaseResolving, InstallPhaseNode, InstallPhaseOpenClaw, InstallPhaseVerifying:
		return true
	}
	return false
}

// AttemptOfPending is the attempt code of a not-ready revision with the
// driver's pending reason; an unknown reason is REVISION_INCOMPLETE.
func AttemptOfPending(reason string) string {
	switch reason {
	case PendingGatewayUnavailable:
		return AttemptGateway
	case PendingWorkloadUnschedulable:
		return AttemptUnschedulable
	case PendingWorkspaceNode:
		return AttemptWorkspaceNode
	case PendingRuntimeInstalling, PendingGatewayStarting, PendingModelProbeRunning:
		return reason
	}
	return AttemptIncomplete
}

// Reason codes of reconciliation outcomes shared by every kind of work
// (audit reasonCode; Namespace and Agent teardown lastCode).
const (
	ReasonAuthorizationDenied   = "AUTHORIZATION_DENIED"
	ReasonActorRevoked          = "ACTOR_REVOKED"
	ReasonDependencyUnavailable = string(CodeDependencyUnavailable)
	ReasonDeadline              = DeployConvergenceDeadline
	ReasonExhausted             = "MAX_ATTEMPTS_EXHAUSTED"
	ReasonNamespaceReconciled   = "NAMESPACE_RECONCILED"
	ReasonNamespaceDeleted      = "NAMESPACE_DELETED"
	ReasonRevisionActivated     = "REVISION_ACTIVATED"
	ReasonAgentStopped          = "AGENT_STOPPED"
	ReasonAgentDeleted          = "AGENT_DELETED"
	// ReasonStrayWorkload: an Agent desired stopped, with no active
	// revision, had a workload all the same (one an engine created after
	// the stop), and the worker removed it.
	ReasonStrayWorkload = "STRAY_WORKLOAD_REMOVED"
)

var deploymentMessages = map[string]string{
	DeployInvalidConfiguration: "The revision's Configuration cannot be turned into a gateway configuration; fix the Configuration and deploy again.",
	DeployRuntimeNotConfigured: "The compute driver has no agent runtime to start gateways with; install it (occ runtime install) or configure one.",
	DeployRuntimeNPMNotFound: "The agent runtime is not installed on the compute host, and npm, which installs it, is not on occ's PATH there; " +
		"install Node.js with npm (or run occ runtime install) and deploy again.",
	DeployRuntimeInstallFailed: "Installing the agent runtime with npm failed on the compute host (error.data.phase says in which phase); " +
		"run occ runtime install there to see npm's output, then deploy again.",
	DeployPluginInstallFailed: "A plugin the revision needs could not be installed into the gateway (error.data.pluginId names it); " +
		"check that its package is reachable from the compute host and deploy again.",
	KubernetesOwnershipConflict:        "A Kubernetes object exists under a name occ uses but without occ's ownership labels; occ never adopts it. Remove or rename it and deploy again.",
	KubernetesAccessDenied:             "The Kubernetes API server refused occ's credentials or permissions; fix occ's access to the cluster and deploy again.",
	KubernetesRequestInvalid:           "The Kubernetes API server refused a request as invalid; check the Kubernetes compute settings and deploy again.",
	DeployConvergenceDeadline:          "The deployment did not become ready before its convergence deadline.",
	DeployRuntimeAuthFailed:            "The runtime rejected the model credential (HTTP 401/403). Fix the credential and deploy again.",
	DeployRuntimeStartup:               "The gateway could not start.",
	DeployModelProbeTimeout:            "The runtime's startup model probe did not answer in time. Check the model provider and deploy again.",
	DeployModelProbeFailed:             "The runtime's startup model probe failed; error.data.runtimeFailure.cause says how. Check the model and its provider and deploy again.",
	DeploySuperseded:                   "A newer deployment of this Agent replaced this one.",
	DeployStopped:                      "The Agent was stopped before this deployment completed.",
	DeployGatewayUnavailable:           "The Agent gateway was unavailable.",
	DeployAuthorizationDenied:          "The deploying principal or the Agent's service principal lost a permission the deployment needs; restore it and deploy again.",
	DeployActorRevoked:                 "The principal that requested the deployment no longer exists.",
	DeployBackendUnavailable:           "The Agent's Backend is no longer configured on the installation; change the Agent's backendId and deploy again.",
	DeployServiceAccountUnavailable:    "The bound Service Account no longer exists, no longer matches the Agent's Backend, or has no issued credential.",
	DeployCredentialSourceUnavailable:  "The bound Credential Source no longer exists or is not registered with the Credential Gateway.",
	DeploySecretUnavailable:            "A bound Secret could not be read.",
	DeployInvalidOwner:                 "The Agent or the revision no longer exists.",
	DeployInvalidAdmittedRevision:      "The admitted revision does not belong to the Agent's current service principal.",
	DeployNamespaceNotReady:            "The Namespace is not ready.",
	DeployDependency:                   "A dependency stayed unavailable through every attempt.",
	DeployComputeDriverMismatch:        "The revision was admitted for another compute driver than the installation runs now; deploy again.",
	DeployExecutionModeUnsupported:     "The installation's compute driver cannot run the Agent's execution mode; change executionMode and deploy again.",
	DeployHarnessAuthUnsupported:       "The installation's compute driver cannot deliver the Agent's harness authentication method; change harnessAuth and deploy again.",
	DeploySecretEnvironmentUnsupported: "The installation's compute driver cannot deliver Secret bindings; remove the Configuration's secretBindings and deploy again.",
	DeployPluginNotInCatalog:           "A selected plugin is not in any plugin catalog of the installation; change the Agent's plugins and deploy again.",
	DeployPluginUnsupported:            "The compute driver cannot run a selected plugin with its approval policy; change the Agent's plugins and deploy again.",
	DeployWorkspaceSetupFailed:         "The Agent's initial workspace files were prepared for other workspace defaults than this runtime's; delete and recreate the Agent with current initial files.",
	DeployWorkspaceSetupUnsupported:    "The installation's compute driver cannot apply initial workspace files; recreate the Agent without them.",
}

// DeploymentMessage is the fixed message of a terminal deployment code.
func DeploymentMessage(code string) string {
	if m, ok := deploymentMessages[code]; ok {
		return m
	}
	return "Deployment reconciliation failed."
}

// DeploymentCodes lists every deployment error code with a fixed message.
func DeploymentCodes() []string {
	out := make([]string, 0, len(deploymentMessages))
	for c := range deploymentMessages {
		out = append(out, c)
	}
	return out
}

var attemptMessages = map[string]string{
	AttemptIncomplete:    "The revision is not ready yet.",
	AttemptUnschedulable: "The compute driver cannot place the Agent's workload yet (quota or capacity); the attempt will be retried.",
	AttemptWorkspaceNode: "The node holding the Agent's workspace is not available yet; the attempt will be retried.",
	AttemptDependency:    "A dependency was unavailable; the attempt will be retried.",
	AttemptGateway:       "The Agent gateway was unavailable; the attempt will be retried.",
	AttemptActiveMoved:   "Another revision became active meanwhile; the attempt will be retried.",
	AttemptLeaseLost:     "The previous attempt did not finish; the attempt will be retried.",
	AttemptRuntimeInstalling: "The agent runtime is being installed on the compute host (the first deploy there); " +
		"progress.lastAttempt.data says the install's phase and bytes on disk.",
	AttemptGatewayStarting:   "The Agent's gateway is starting.",
	AttemptModelProbeRunning: "The gateway is trying the model credential (its startup model probe, one call to the provider).",
}

// AttemptRetry reports whether an attempt code is a retry after an
// attempt that did not succeed (the dependency, gateway, placement or
// lease was not there yet), as opposed to a phase of a deploy on its way
// (RUNTIME_INSTALLING, AGENT_GATEWAY_STARTING, MODEL_PROBE_RUNNING,
// REVISION_INCOMPLETE, RECONCILIATION_PENDING). Neither is an error: a
// deploy fails only with a terminal error code.
func AttemptRetry(code string) bool {
	switch code {
	case AttemptDependency, AttemptGateway, AttemptActiveMoved, AttemptLeaseLost, AttemptUnschedulable, AttemptWorkspaceNode:
		return true
	}
	return false
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

// Warning codes of a succeeded deployment (closed).
const (
	WarningPluginInstallFailed = "PLUGIN_INSTALL_FAILED"
	WarningPluginAuthRequired  = "PLUGIN_AUTH_REQUIRED"
)

// DeploymentWarning is a closed-code plugin warning of a succeeded
// deployment, for an admitted plugin.
type DeploymentWarning struct {
	Code     string `json:"code"`
	PluginID string `json:"pluginId"`
}

// DeploymentWarningCode reports whether code is a warning code.
func DeploymentWarningCode(code string) bool {
	return code == WarningPluginInstallFailed || code == WarningPluginAuthRequired
}
