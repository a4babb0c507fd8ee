package iam

import (
	"testing"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	const nsA, nsB = "ns_a", "ns_b"
	agentA := occ.ResourceRef{Kind: occ.KindAgent, ID: "agt_1", NamespaceID: nsA}
	agentA2 := occ.ResourceRef{Kind: occ.KindAgent, ID: "agt_2", NamespaceID: nsA}
	agentB := occ.ResourceRef{Kind: occ.KindAgent, ID: "agt_3", NamespaceID: nsB}
	install := occ.ResourceRef{Kind: occ.KindInstallation, ID: "ins_1"}
	g := func(ns string, tk occ.Kind, ti string) store.Grant {
		gr := store.Grant{ID: "x", NamespaceID: ns}
		if ti != "" {
			gr.Target = &occ.Target{Kind: tk, ID: ti}
		}
		return gr
	}
	rows := func(b []store.Grant, r []store.Grant) store.PolicyRows {
		return store.PolicyRows{Found: true, Bindings: b, Restrictions: r}
	}
	cases := []struct {
		name   string
		rows   store.PolicyRows
		pin    string
		res    occ.ResourceRef
		allow  bool
		reason string
	}{
		{"unknown principal", store.PolicyRows{}, "", agentA, false, ReasonUnknownPrincipal},
		{"disabled principal", store.PolicyRows{Found: true, Disabled: true, Bindings: []store.Grant{g("", "", "")}}, "", agentA, false, ReasonDisabled},
		{"namespace-scoped principal outside its namespace", store.PolicyRows{Found: true, NamespaceID: nsB, Bindings: []store.Grant{g("", "", "")}}, "", agentA, false, ReasonOutsideScope},
		{"namespace-scoped principal inside", store.PolicyRows{Found: true, NamespaceID: nsA, Bindings: []store.Grant{g(nsA, "", "")}}, "", agentA, true, ReasonAllowed},
		{"pinned key outside its pin", rows([]store.Grant{g("", "", "")}, nil), nsB, agentA, false, ReasonKeyPin},
		{"pinned key inside its pin", rows([]store.Grant{g("", "", "")}, nil), nsA, agentA, true, ReasonAllowed},
		{"no binding", rows(nil, nil), "", agentA, false, ReasonNoGrant},
		{"installation-wide binding", rows([]store.Grant{g("", "", "")}, nil), "", agentB, true, ReasonAllowed},
		{"namespace binding in scope", rows([]store.Grant{g(nsA, "", "")}, nil), "", agentA, true, ReasonAllowed},
		{"namespace binding out of scope", rows([]store.Grant{g(nsA, "", "")}, nil), "", agentB, false, ReasonNoGrant},
		{"namespace binding never reaches the installation", rows([]store.Grant{g(nsA, "", "")}, nil), "", install, false, ReasonNoGrant},
		{"exact target matches", rows([]store.Grant{g(nsA, occ.KindAgent, "agt_1")}, nil), "", agentA, true, ReasonAllowed},
		{"exact target is exact", rows([]store.Grant{g(nsA, occ.KindAgent, "agt_1")}, nil), "", agentA2, false, ReasonNoGrant},
		{"namespace target grants no child", rows([]store.Grant{g(nsA, occ.KindNamespace, nsA)}, nil), "", agentA, false, ReasonNoGrant},
		{"exact target cannot grant create (collection ref)", rows([]store.Grant{g(nsA, occ.KindAgent, "agt_1")}, nil), "",
			occ.ResourceRef{Kind: occ.KindAgent, ID: nsA, NamespaceID: nsA}, false, ReasonNoGrant},
		{"restriction overrides", rows([]store.Grant{g("", "", "")}, []store.Grant{g(nsA, "", "")}), "", agentA, false, ReasonRestricted},
		{"exact restriction spares siblings", rows([]store.Grant{g("", "", "")}, []store.Grant{g(nsA, occ.KindAgent, "agt_1")}), "", agentA2, true, ReasonAllowed},
		{"restriction in another namespace", rows([]store.Grant{g("", "", "")}, []store.Grant{g(nsB, "", "")}), "", agentA, true, ReasonAllowed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(c.rows, c.pin, c.res)
			if d.Allowed != c.allow || d.Reason != c.reason {
				t.Fatalf("Decide = %+v, want allowed=%v reason=%s", d, c.allow, c.reason)
			}
		})
	}
}

func TestBuiltinRolesHoldOnlyRoutablePermissions(t *testing.T) {
	t.Parallel()
	roles := BuiltinRoles()
	for name, perms := range roles {
		seen := map[occ.Permission]bool{}
		for _, p := range perms {
			if !occ.Routable[p] || seen[p] {
				t.Errorf("role %s: %s is unroutable or repeated", name, p)
			}
			seen[p] = true
		}
	}
	if len(roles[RoleAdmin]) != len(occ.Routable) {
		t.Errorf("admin holds %d of %d permissions", len(roles[RoleAdmin]), len(occ.Routable))
	}
	for _, p := range roles[RoleViewer] {
		if p.Action != occ.ActionRead {
			t.Errorf("viewer holds %s", p)
		}
	}
}

func TestServiceKeyForm(t *testing.T) {
	t.Parallel()
	k := NewServiceKey()
	if !ServiceKeyPattern.MatchString(k) || NewServiceKey() == k {
		t.Fatalf("NewServiceKey() = %q", k)
	}
	for _, bad := range []string{"", "occ_short", "xoc_" + k[4:], k + "!", "occ_" + string(make([]byte, 40))} {
		if ServiceKeyPattern.MatchString(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
	if !DigestEqual(Digest(k), Digest(k)) || DigestEqual(Digest(k), Digest(k+"x")) {
		t.Fatal("digest comparison")
	}
}
