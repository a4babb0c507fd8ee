package computetest

import (
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/occ"
)

// The closed vocabularies a driver declares its capabilities and reports
// its readiness in.
var (
	// executionModes are the execution modes of an Agent.
	executionModes = []string{occ.ExecutionEmbedded, occ.ExecutionDedicated}
	// harnessAuthMethods are the harness authentication methods.
	harnessAuthMethods = []string{occ.HarnessAPIKey, occ.HarnessCodexPAT, occ.HarnessChatGPTServiceAccount,
		occ.HarnessCredentialSource, occ.HarnessRuntime}
	// approvalPolicies are the plugin approval policies (the OpenAPI
	// document's approvalPolicy enum).
	approvalPolicies = []string{occ.DefaultApprovalPolicy, "all_actions", "write_actions", "none"}
	// pendingReasons are the reasons a not-ready revision may give.
	pendingReasons = []string{occ.PendingGatewayStarting, occ.PendingGatewayUnavailable,
		occ.PendingWorkloadUnschedulable, occ.PendingWorkspaceNode}
	// heldCodes are the codes of a held runtime failure.
	heldCodes = []string{compute.HeldAuthenticationFailed, compute.HeldModelProbeTimeout, compute.HeldModelProbeFailed}
	// warningCodes are the codes of a ready revision's warnings.
	warningCodes = []string{gateway.WarningPluginInstallFailed, gateway.WarningPluginAuthRequired}
	// checkStatuses are the statuses of a diagnostics check.
	checkStatuses = []string{"succeeded", "failed", "unknown"}
)
