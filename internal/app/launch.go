package app

import (
	"fmt"
	"regexp"
	"sort"

	"github.com/openclaw/occ/internal/occ"
)

// Launch settings shared by Presets and Agents: execution mode, Backend,
// harness authentication and plugin selections. Only their structure is
// checked here; deployment checks catalog membership and grants.

var pluginID = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,127}@[a-z0-9][a-z0-9._-]{0,127}$`)

var approvalPolicies = map[string]bool{"": true, "provider_default": true, "all_actions": true, "write_actions": true, "none": true}

// maxPlugins bounds one plugin map.
const maxPlugins = 64

func invalidAt(path, msg string) error {
	return occ.Invalid(msg, occ.Detail{Path: path, Code: occ.DetailInvalidValue})
}

// validateExecutionMode accepts "" (unset), embedded or dedicated.
func validateExecutionMode(mode, at string) error {
	if mode != "" && mode != occ.ExecutionEmbedded && mode != occ.ExecutionDedicated {
		return invalidAt(at, "The execution mode must be embedded or dedicated.")
	}
	return nil
}

// validateBackend accepts "" or a configured Backend.
func (a *App) validateBackend(id, at string) error {
	if _, ok := a.backend(id); id != "" && !ok {
		return invalidAt(at, "The Backend is not configured in this installation.")
	}
	return nil
}

// validatePlugins checks plugin IDs (name@catalog) and approval policies.
func validatePlugins(ps map[string]occ.PluginSelection, at string) error {
	if len(ps) > maxPlugins {
		return invalidAt(at, "At most 64 plugins can be selected.")
	}
	ids := make([]string, 0, len(ps))
	for id := range ps {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if !pluginID.MatchString(id) {
			return invalidAt(at+"/"+pointerEscape(id), "A plugin is named name@catalog in lower case.")
		}
		if !approvalPolicies[ps[id].ApprovalPolicy] {
			return invalidAt(at+"/"+pointerEscape(id)+"/approvalPolicy", "The approval policy is not one of provider_default, all_actions, write_actions or none.")
		}
	}
	return nil
}

// validateHarnessAuth checks a binding's shape: the reference its method
// needs and no other, in the owner's Namespace. A missing Namespace in a
// Secret reference is the owner's. mode "" skips the topology rule.
func validateHarnessAuth(h *occ.HarnessAuth, nsID, mode, at string) error {
	if h == nil {
		return nil
	}
	needs := map[string]string{occ.HarnessAPIKey: "source", occ.HarnessCodexPAT: "source",
		occ.HarnessChatGPTServiceAccount: "serviceAccountId", occ.HarnessCredentialSource: "sourceId", occ.HarnessRuntime: ""}
	need, ok := needs[h.Method]
	if !ok {
		return invalidAt(at+"/method", "The harness authentication method is unknown.")
	}
	has := map[string]bool{"source": h.Source != nil, "serviceAccountId": h.ServiceAccountID != "", "sourceId": h.SourceID != ""}
	for field, present := range has {
		if present != (field == need) {
			return invalidAt(fmt.Sprintf("%s/%s", at, field), fmt.Sprintf("The %s method takes %s.", h.Method, takes(need)))
		}
	}
	switch need {
	case "source":
		if h.Source.NamespaceID == "" {
			h.Source.NamespaceID = nsID
		}
		if h.Source.Kind != "secret" || !occ.ValidID(occ.PrefixSecret, h.Source.ID) {
			return invalidAt(at+"/source", "The credential source must name a Secret.")
		}
		if h.Source.NamespaceID != nsID {
			return invalidAt(at+"/source/namespaceId", "A managed source must belong to the same Namespace.")
		}
	case "serviceAccountId":
		if !occ.ValidID(occ.PrefixServiceAccount, h.ServiceAccountID) {
			return invalidAt(at+"/serviceAccountId", "The service account ID is not valid.")
		}
	case "sourceId":
		if !occ.ValidID(occ.PrefixCredentialSource, h.SourceID) {
			return invalidAt(at+"/sourceId", "The credential source ID is not valid.")
		}
	}
	dedicatedOnly := h.Method == occ.HarnessCodexPAT || h.Method == occ.HarnessChatGPTServiceAccount || h.Method == occ.HarnessCredentialSource
	if dedicatedOnly && mode == occ.ExecutionEmbedded {
		return invalidAt(at+"/method", "This harness authentication method needs dedicated execution.")
	}
	if h.Method == occ.HarnessRuntime && mode == occ.ExecutionDedicated {
		return invalidAt(at+"/method", "Runtime authentication is only for embedded execution.")
	}
	return nil
}

func takes(field string) string {
	if field == "" {
		return "no reference"
	}
	return "only " + field
}
