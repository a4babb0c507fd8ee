package computetest

import (
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/occ"
)

// The closed vocabularies a driver declares its capabilities and reports
// its readiness in.
var (
	// ExecutionModes are the execution modes of an Agent.
	ExecutionModes = []string{occ.ExecutionEmbedded, occ.ExecutionDedicated}
	// HarnessAuthMethods are the harness authentication methods.
	HarnessAuthMethods = []string{occ.HarnessAPIKey, occ.HarnessCodexPAT, occ.HarnessChatGPTServiceAccount,
		occ.HarnessCredentialSource, occ.HarnessRuntime}
	// ApprovalPolicies are the plugin approval policies (the OpenAPI
	// document's approvalPolicy enum).
	ApprovalPolicies = []string{occ.DefaultApprovalPolicy, "all_actions", "write_actions", "none"}
	// PendingReasons are the reasons a not-ready revision may give.
	PendingReasons = []string{occ.PendingGatewayStarting, occ.PendingGatewayUnavailable,
		occ.PendingWorkloadUnschedulable, occ.PendingWorkspaceNode}
	// HeldCodes are the codes of a held runtime failure.
	HeldCodes = []string{compute.HeldAuthenticationFailed, compute.HeldModelProbeTimeout, compute.HeldModelProbeFailed}
	// WarningCodes are the codes of a ready revision's warnings.
	WarningCodes = []string{gateway.WarningPluginInstallFailed, gateway.WarningPluginAuthRequired}
	// CheckStatuses are the statuses of a diagnostics check.
	CheckStatuses = []string{"succeeded", "failed", "unknown"}
)
