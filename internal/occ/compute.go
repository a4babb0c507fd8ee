package occ

import (
	"fmt"
	"slices"
	"sort"
)

// ComputeCapabilities is what a Compute Driver declares it can do. Deploy
// admission and the worker consult it through Refusal only, so a request
// the driver cannot honour is refused with one fixed code wherever it is
// caught, never run with the setting silently dropped.
type ComputeCapabilities struct {
	// ExecutionModes the driver runs (ExecutionEmbedded, ExecutionDedicated).
	ExecutionModes []string
	// HarnessAuthMethods the driver can deliver (HarnessAPIKey, …,
	// HarnessRuntime).
	HarnessAuthMethods []string
	// PluginApprovalPolicies the driver can enforce for a selected plugin
	// (provider_default, all_actions, write_actions, none); none listed:
	// the driver runs no plugins.
	PluginApprovalPolicies []string
	// WorkspaceSetup: the driver applies staged initial workspace files
	// before an Agent's first start.
	WorkspaceSetup bool
	// NativeAdmin: the driver can run a gateway behind occ's native admin
	// UI proxy (trusted-proxy mode) and give its private endpoint.
	NativeAdmin bool
	// PersistentState: gateway state and the workspace survive a stop and
	// the replacement of a revision.
	PersistentState bool
	// SecretEnvironment: the driver delivers the Configuration's Secret
	// bindings into the gateway's environment.
	SecretEnvironment bool
	// SharedEndpoints: every occ process reaches the driver's gateways
	// (where the worker runs does not matter, as with a cluster's API
	// server), so an API-only process (--role api) serves live workspace
	// files, the native admin UI, diagnostics and gateway logs itself.
	SharedEndpoints bool
}

// DefaultApprovalPolicy is the approval policy of a plugin selection that
// names none.
const DefaultApprovalPolicy = "provider_default"

// RevisionNeeds is what running one revision asks of a driver.
type RevisionNeeds struct {
	ExecutionMode     string
	HarnessAuthMethod string // "" when the revision has no harness binding
	// PluginPolicies maps each selected plugin ID to its approval policy.
	PluginPolicies map[string]string
	InitialFiles   bool
	// SecretBindings: the revision's Configuration binds Secrets.
	SecretBindings bool
}

// NeedsOf is what a revision with this snapshot asks of a driver.
func NeedsOf(s *RevisionSnapshot, initialFiles bool) RevisionNeeds {
	n := RevisionNeeds{ExecutionMode: s.ExecutionMode, InitialFiles: initialFiles, PluginPolicies: map[string]string{},
		SecretBindings: len(s.SecretBindings) > 0}
	if s.HarnessAuth != nil {
		n.HarnessAuthMethod = s.HarnessAuth.Method
	}
	for id, sel := range s.Plugins {
		policy := sel.ApprovalPolicy
		if policy == "" {
			policy = DefaultApprovalPolicy
		}
		n.PluginPolicies[id] = policy
	}
	return n
}

// Refusal names one need a driver cannot honour: Code is the deployment
// error code, Path the Agent setting it comes from (a JSON Pointer into
// the Agent), Message the fixed text shown to the user.
type Refusal struct {
	Code    string
	Path    string
	Message string
}

// Refusal returns the first need the driver named by driver cannot
// honour, in the order execution mode, harness authentication, Secret
// bindings, plugins, workspace setup; nil when it can run the revision.
func (c ComputeCapabilities) Refusal(driver string, n RevisionNeeds) *Refusal {
	if !slices.Contains(c.ExecutionModes, n.ExecutionMode) {
		return &Refusal{Code: DeployExecutionModeUnsupported, Path: "/executionMode",
			Message: fmt.Sprintf("The %s compute driver cannot run executionMode %q.", driver, n.ExecutionMode)}
	}
	if n.HarnessAuthMethod != "" && !slices.Contains(c.HarnessAuthMethods, n.HarnessAuthMethod) {
		return &Refusal{Code: DeployHarnessAuthUnsupported, Path: "/harnessAuth/method",
			Message: fmt.Sprintf("The %s compute driver cannot deliver harnessAuth method %q.", driver, n.HarnessAuthMethod)}
	}
	if n.SecretBindings && !c.SecretEnvironment {
		return &Refusal{Code: DeploySecretEnvironmentUnsupported, Path: "/secretBindings",
			Message: fmt.Sprintf("The %s compute driver cannot deliver the Configuration's Secret bindings.", driver)}
	}
	ids := make([]string, 0, len(n.PluginPolicies))
	for id := range n.PluginPolicies {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if !slices.Contains(c.PluginApprovalPolicies, n.PluginPolicies[id]) {
			return &Refusal{Code: DeployPluginUnsupported, Path: "/plugins/" + id,
				Message: fmt.Sprintf("The %s compute driver cannot run plugin %q with approval policy %q.", driver, id, n.PluginPolicies[id])}
		}
	}
	if n.InitialFiles && !c.WorkspaceSetup {
		return &Refusal{Code: DeployWorkspaceSetupUnsupported, Path: "/initialWorkspaceFiles",
			Message: fmt.Sprintf("The %s compute driver cannot apply initial workspace files.", driver)}
	}
	return nil
}
