package iam

import (
	"sort"

	"github.com/openclaw/occ/internal/occ"
)

// Built-in role names. They exist at installation scope and cannot change.
const (
	RoleAdmin    = "admin"
	RoleEditor   = "editor"
	RoleOperator = "operator"
	RoleViewer   = "viewer"
)

// namespaceKinds are the kinds a Namespace owns.
var namespaceKinds = []occ.Kind{occ.KindConfiguration, occ.KindPreset, occ.KindServiceAccount,
	occ.KindSecret, occ.KindAgent, occ.KindAgentRevision, occ.KindCredentialSource}

// BuiltinRoles returns the permissions of each built-in role, sorted.
func BuiltinRoles() map[string][]occ.Permission {
	var admin, editor, operator, viewer []occ.Permission
	for p := range occ.Routable {
		admin = append(admin, p)
		if p.Action == occ.ActionRead {
			viewer = append(viewer, p)
			operator = append(operator, p)
		}
	}
	operator = append(operator,
		occ.P(occ.KindAgent, occ.ActionDeploy), occ.P(occ.KindAgent, occ.ActionOperate),
		occ.P(occ.KindSecret, occ.ActionOperate), occ.P(occ.KindCredentialSource, occ.ActionOperate))
	editor = append(editor, operator...)
	for _, k := range namespaceKinds {
		for _, a := range []occ.Action{occ.ActionCreate, occ.ActionUpdate, occ.ActionDelete} {
			if occ.Routable[occ.P(k, a)] {
				editor = append(editor, occ.P(k, a))
			}
		}
	}
	out := map[string][]occ.Permission{RoleAdmin: admin, RoleEditor: editor, RoleOperator: operator, RoleViewer: viewer}
	for _, ps := range out {
		sort.Slice(ps, func(i, j int) bool { return ps[i].String() < ps[j].String() })
	}
	return out
}
