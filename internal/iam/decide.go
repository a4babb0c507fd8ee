// Package iam decides who may do what: principals, roles, bindings and
// restrictions with one decision algorithm (Decide), the Authorizer every use
// case calls, list filtering, and the credentials (service keys, sessions,
// passwords) that turn a request into a principal.
package iam

import (
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// Reason codes of a decision, recorded on denial audit events.
const (
	ReasonAllowed          = "ALLOWED"
	ReasonUnknownPrincipal = "PRINCIPAL_UNKNOWN"
	ReasonDisabled         = "PRINCIPAL_DISABLED"
	ReasonOutsideScope     = "PRINCIPAL_OUT_OF_SCOPE"
	ReasonKeyPin           = "KEY_NAMESPACE_PIN"
	ReasonNoGrant          = "NO_MATCHING_BINDING"
	ReasonRestricted       = "RESTRICTED"
)

// Decision is the outcome of one authorization check, with its evidence.
type Decision struct {
	Allowed        bool
	Reason         string
	BindingIDs     []string
	RestrictionIDs []string
}

// Decide applies the decision algorithm (CONTRACT.md §3) to the policy rows of
// one principal and one permission:
//  1. deny an unknown or disabled principal, a namespace-scoped principal
//     outside its Namespace, and a pinned key outside its pin;
//  2. allow only if a binding matches scope and target (its role holding
//     exactly the permission, which LoadPolicy already ensured);
//  3. then any matching restriction denies.
func Decide(rows store.PolicyRows, pin string, res occ.ResourceRef) Decision {
	switch {
	case !rows.Found:
		return Decision{Reason: ReasonUnknownPrincipal}
	case rows.Disabled:
		return Decision{Reason: ReasonDisabled}
	case rows.NamespaceID != "" && rows.NamespaceID != res.NamespaceID:
		return Decision{Reason: ReasonOutsideScope}
	case pin != "" && pin != res.NamespaceID:
		return Decision{Reason: ReasonKeyPin}
	}
	var d Decision
	for _, b := range rows.Bindings {
		if matches(b, res) {
			d.BindingIDs = append(d.BindingIDs, b.ID)
		}
	}
	if len(d.BindingIDs) == 0 {
		d.Reason = ReasonNoGrant
		return d
	}
	for _, r := range rows.Restrictions {
		if matches(r, res) {
			d.RestrictionIDs = append(d.RestrictionIDs, r.ID)
		}
	}
	if len(d.RestrictionIDs) > 0 {
		d.Reason = ReasonRestricted
		return d
	}
	d.Allowed, d.Reason = true, ReasonAllowed
	return d
}

// matches reports whether a binding or restriction applies to res: its scope
// is the installation or res's Namespace, and it has no target or targets
// exactly res.
func matches(g store.Grant, res occ.ResourceRef) bool {
	if g.NamespaceID != "" && g.NamespaceID != res.NamespaceID {
		return false
	}
	return g.Target == nil || (g.Target.Kind == res.Kind && g.Target.ID == res.ID)
}
