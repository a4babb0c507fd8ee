package occ

import (
	"maps"
	"slices"
)

// DeployGrant is one exact permission a deployment needs, held by the
// deploying actor or by the Agent's own service principal.
type DeployGrant struct {
	AgentPrincipal bool // held by the Agent's service principal, not the actor
	Permission     Permission
	Resource       ResourceRef
}

// DeployGrants is the whole permission set of deploying an Agent with a
// harness binding and a Configuration's Secret bindings (seed: Identity and
// deployment, Secret consumption grants). Admission checks it before the
// revision exists and the worker checks it again before any effect, so
// both refuse the same thing:
//   - the actor: agent:deploy on the Agent and configuration:read on the
//     Configuration;
//   - the actor: the harness source's grant (secret:operate for an api_key
//     or codex_pat Secret, service_account:read for a ChatGPT account,
//     credential_source:operate for a credential source);
//   - the actor and the Agent's service principal: secret:operate on every
//     Secret the deployment delivers (harness Secret and Configuration
//     bindings). There is no implied account grant for the principal.
//
// Principal grants come first, in Secret order, so that a caller who holds
// everything learns which grant the Agent itself misses.
func DeployGrants(nsID, agentID, configurationID string, h *HarnessAuth, bindings map[string]SecretBinding) []DeployGrant {
	ref := func(kind Kind, id string) ResourceRef { return ResourceRef{Kind: kind, ID: id, NamespaceID: nsID} }
	var secrets []string
	for _, name := range slices.Sorted(maps.Keys(bindings)) {
		secrets = append(secrets, bindings[name].Source.ID)
	}
	var harness *DeployGrant
	if h != nil {
		switch h.Method {
		case HarnessAPIKey, HarnessCodexPAT:
			if h.Source != nil {
				secrets = append(secrets, h.Source.ID)
			}
		case HarnessChatGPTServiceAccount:
			harness = &DeployGrant{Permission: P(KindServiceAccount, ActionRead), Resource: ref(KindServiceAccount, h.ServiceAccountID)}
		case HarnessCredentialSource:
			harness = &DeployGrant{Permission: P(KindCredentialSource, ActionOperate), Resource: ref(KindCredentialSource, h.SourceID)}
		}
	}
	operate := P(KindSecret, ActionOperate)
	var out []DeployGrant
	for _, id := range secrets {
		out = append(out, DeployGrant{AgentPrincipal: true, Permission: operate, Resource: ref(KindSecret, id)})
	}
	out = append(out,
		DeployGrant{Permission: P(KindAgent, ActionDeploy), Resource: ref(KindAgent, agentID)},
		DeployGrant{Permission: P(KindConfiguration, ActionRead), Resource: ref(KindConfiguration, configurationID)})
	if harness != nil {
		out = append(out, *harness)
	}
	for _, id := range secrets {
		out = append(out, DeployGrant{Permission: operate, Resource: ref(KindSecret, id)})
	}
	return out
}

// SnapshotGrants is DeployGrants of an admitted revision.
func SnapshotGrants(nsID, agentID string, s *RevisionSnapshot) []DeployGrant {
	return DeployGrants(nsID, agentID, s.Configuration.ID, s.HarnessAuth, s.SecretBindings)
}
