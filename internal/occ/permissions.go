package occ

import (
	"fmt"
	"strings"
)

// Kind is a resource kind that permissions and audit events name.
type Kind string

// Resource kinds (CONTRACT.md §3).
const (
	KindInstallation     Kind = "installation"
	KindNamespace        Kind = "namespace"
	KindConfiguration    Kind = "configuration"
	KindPreset           Kind = "preset"
	KindServiceAccount   Kind = "service_account"
	KindSecret           Kind = "secret"
	KindAgent            Kind = "agent"
	KindAgentRevision    Kind = "agent_revision"
	KindCredentialSource Kind = "credential_source"
)

// Kinds lists every resource kind.
var Kinds = []Kind{KindInstallation, KindNamespace, KindConfiguration, KindPreset,
	KindServiceAccount, KindSecret, KindAgent, KindAgentRevision, KindCredentialSource}

// Action is what a permission allows on a kind. No action implies another.
type Action string

// Actions (CONTRACT.md §3).
const (
	ActionCreate     Action = "create"
	ActionRead       Action = "read"
	ActionUpdate     Action = "update"
	ActionDelete     Action = "delete"
	ActionDeploy     Action = "deploy"
	ActionOperate    Action = "operate"
	ActionAdminister Action = "administer"
	ActionReadLogs   Action = "read_logs"
	ActionUse        Action = "use"
)

// Actions lists every action.
var Actions = []Action{ActionCreate, ActionRead, ActionUpdate, ActionDelete, ActionDeploy,
	ActionOperate, ActionAdminister, ActionReadLogs, ActionUse}

// Permission is "kind:action".
type Permission struct {
	Kind   Kind
	Action Action
}

// P builds a permission.
func P(k Kind, a Action) Permission { return Permission{Kind: k, Action: a} }

func (p Permission) String() string { return string(p.Kind) + ":" + string(p.Action) }

// ParsePermission parses "kind:action" and rejects unknown kinds or actions.
func ParsePermission(s string) (Permission, error) {
	k, a, ok := strings.Cut(s, ":")
	if !ok || !knownKind(Kind(k)) || !knownAction(Action(a)) {
		return Permission{}, fmt.Errorf("unknown permission %q", s)
	}
	return Permission{Kind: Kind(k), Action: Action(a)}, nil
}

func knownKind(k Kind) bool {
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}

func knownAction(a Action) bool {
	for _, x := range Actions {
		if x == a {
			return true
		}
	}
	return false
}

// Routable lists the permissions that some route or worker checks; roles may
// hold only these (a role with secret:read_logs would grant nothing).
var Routable = map[Permission]bool{}

func init() {
	add := func(k Kind, as ...Action) {
		for _, a := range as {
			Routable[P(k, a)] = true
		}
	}
	add(KindInstallation, ActionRead, ActionAdminister)
	add(KindNamespace, ActionCreate, ActionRead, ActionUpdate, ActionDelete, ActionAdminister)
	add(KindConfiguration, ActionCreate, ActionRead, ActionUpdate, ActionDelete)
	add(KindPreset, ActionCreate, ActionRead, ActionUpdate, ActionDelete)
	add(KindServiceAccount, ActionCreate, ActionRead, ActionUpdate, ActionDelete)
	add(KindSecret, ActionCreate, ActionRead, ActionUpdate, ActionDelete, ActionOperate)
	add(KindCredentialSource, ActionCreate, ActionRead, ActionUpdate, ActionDelete, ActionOperate)
	add(KindAgent, ActionCreate, ActionRead, ActionUpdate, ActionDelete, ActionDeploy,
		ActionOperate, ActionAdminister, ActionReadLogs, ActionUse)
	add(KindAgentRevision, ActionRead)
}

// ResourceRef names one exact resource for authorization and audit. For a
// collection create, Kind is the child kind and ID the parent Namespace ID.
type ResourceRef struct {
	Kind        Kind   `json:"kind"`
	ID          string `json:"id"`
	NamespaceID string `json:"namespaceId,omitempty"`
}
