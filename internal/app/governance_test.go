package app_test

import (
	"testing"
	"time"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store/storetest"
)

// namespaceAdminPerms is everything the built-in admin role holds except
// installation permissions: bound in one Namespace, a Namespace administrator.
func namespaceAdminPerms() []occ.Permission {
	var out []occ.Permission
	for _, p := range iam.BuiltinRoles()[iam.RoleAdmin] {
		if p.Kind != occ.KindInstallation {
			out = append(out, p)
		}
	}
	return out
}

var (
	nsRead       = occ.P(occ.KindNamespace, occ.ActionRead)
	nsAdminister = occ.P(occ.KindNamespace, occ.ActionAdminister)
	agentRead    = occ.P(occ.KindAgent, occ.ActionRead)
)

// TestNamespaceAdminGovernsOnlyPrincipalsItCovers: a Namespace
// administrator may restrict or bind a principal in its Namespace only when
// it holds every grant of that principal the change would touch; the
// installation administrator's installation-wide grants are never covered
// from a Namespace. Refusals are 403, audited, and write nothing.
func TestNamespaceAdminGovernsOnlyPrincipalsItCovers(t *testing.T) {
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := newEnv(t, url)
		nsA, nsB := e.namespace("gov-a"), e.namespace("gov-b")
		adminA := e.principal(grant{perms: namespaceAdminPerms(), namespace: nsA})
		adminB := e.principal(grant{perms: namespaceAdminPerms(), namespace: nsB})
		roleA, err := e.app.CreateRole(e.ctx, adminA, nsA, "readers", []string{nsRead.String(), agentRead.String()})
		e.must("role in A", err)

		// The installation administrator: neither restricted nor bound from A.
		for _, perm := range []occ.Permission{nsRead, nsAdminister, agentRead} {
			_, err := e.app.CreateRestriction(e.ctx, adminA, nsA, app.GrantRequest{PrincipalID: e.admin.PrincipalID, Permission: perm.String()})
			e.wantCode("Namespace admin restricting the installation admin's "+perm.String(), err, occ.CodeForbidden)
		}
		_, err = e.app.CreateBinding(e.ctx, adminA, nsA, app.GrantRequest{PrincipalID: e.admin.PrincipalID, RoleID: roleA.ID})
		e.wantCode("Namespace admin binding the installation admin", err, occ.CodeForbidden)
		if msg := occ.AsError(err).Message; msg != occ.MsgPrincipalNotCovered {
			t.Fatalf("refusal message %q, want %q", msg, occ.MsgPrincipalNotCovered)
		}
		for action, n := range map[string]int{"iam.restrictions.create": 3, "iam.bindings.create": 1} {
			got := e.denials(adminA.PrincipalID, action)
			if len(got) != n {
				t.Fatalf("%d %s denials audited, want %d", len(got), action, n)
			}
			for _, ev := range got {
				if ev.ReasonCode != occ.ReasonPrincipalNotCovered || ev.NamespaceID != nsA {
					t.Fatalf("denial %s: reason %q in %q, want %s in %s", action, ev.ReasonCode, ev.NamespaceID, occ.ReasonPrincipalNotCovered, nsA)
				}
			}
		}
		restrictions, err := e.app.ListRestrictions(e.ctx, e.admin, nsA, app.PageRequest{})
		e.must("list restrictions", err)
		bindings, err := e.app.ListBindings(e.ctx, e.admin, nsA, app.PageRequest{})
		e.must("list bindings", err)
		if len(restrictions.Items) != 0 || len(bindings.Items) != 1 || bindings.Items[0].PrincipalID != adminA.PrincipalID {
			t.Fatalf("refused changes wrote restrictions %+v and bindings %+v (want only adminA's own)", restrictions.Items, bindings.Items)
		}
		if _, err := e.app.GetNamespace(e.ctx, e.admin, nsA); err != nil {
			t.Fatalf("installation admin reading A: %v", err)
		}

		// A principal holding grants in A (covered by A's administrator)
		// and in B (not covered by it, but untouched by a change in A).
		p := e.principal(grant{perms: []occ.Permission{nsRead, agentRead}, namespace: nsA})
		e.must("grant in B", e.bind(p.PrincipalID, nsB, nsRead, agentRead))
		x, err := e.app.CreateRestriction(e.ctx, adminA, nsA, app.GrantRequest{PrincipalID: p.PrincipalID, Permission: nsRead.String()})
		e.must("Namespace admin restricting a principal it covers", err)
		_, err = e.app.CreateBinding(e.ctx, adminA, nsA, app.GrantRequest{PrincipalID: p.PrincipalID, RoleID: roleA.ID})
		e.must("Namespace admin binding a principal it covers", err)
		e.wantCode("restricted principal reading A", second(e.app.GetNamespace(e.ctx, p, nsA)), occ.CodeNotFound)
		e.must("restricted principal reading B", second(e.app.GetNamespace(e.ctx, p, nsB)))

		// Across Namespaces: A's administrator cannot even see B's IAM; B's
		// administrator covers p's grants in B but not the installation admin.
		_, err = e.app.CreateRestriction(e.ctx, adminA, nsB, app.GrantRequest{PrincipalID: p.PrincipalID, Permission: nsRead.String()})
		e.wantCode("A's administrator restricting in B", err, occ.CodeNotFound)
		e.wantCode("B's administrator lifting A's restriction", e.app.DeleteRestriction(e.ctx, adminB, nsA, x.ID), occ.CodeNotFound)
		_, err = e.app.CreateRestriction(e.ctx, adminB, nsB, app.GrantRequest{PrincipalID: p.PrincipalID, Permission: agentRead.String()})
		e.must("B's administrator restricting a principal it covers in B", err)
		_, err = e.app.CreateRestriction(e.ctx, adminB, nsB, app.GrantRequest{PrincipalID: e.admin.PrincipalID, Permission: agentRead.String()})
		e.wantCode("B's administrator restricting the installation admin", err, occ.CodeForbidden)

		// Lifting is governing too: an installation-wide principal restricted
		// in A by the installation admin stays restricted for A's administrator.
		peer := e.principal(grant{perms: []occ.Permission{nsRead}})
		y, err := e.app.CreateRestriction(e.ctx, e.admin, nsA, app.GrantRequest{PrincipalID: peer.PrincipalID, Permission: nsRead.String()})
		e.must("installation admin restricting in A", err)
		e.wantCode("A's administrator lifting a restriction on a principal it does not cover",
			e.app.DeleteRestriction(e.ctx, adminA, nsA, y.ID), occ.CodeForbidden)
		e.must("installation admin lifting it", e.app.DeleteRestriction(e.ctx, e.admin, nsA, y.ID))
		e.must("A's administrator lifting its own restriction", e.app.DeleteRestriction(e.ctx, adminA, nsA, x.ID))
	})
}

// TestInstallationAdminRemovesRestrictionsOnItself: restrictions written
// before the rule above (made here straight in the store) that deny the
// installation administrator a Namespace's read and administer do not keep
// it from seeing and deleting them.
func TestInstallationAdminRemovesRestrictionsOnItself(t *testing.T) {
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := newEnv(t, url)
		nsA := e.namespace("locked")
		var ids []string
		for _, perm := range []occ.Permission{nsRead, nsAdminister, occ.P(occ.KindNamespace, occ.ActionDelete)} {
			x := occ.Restriction{ID: occ.NewID(occ.PrefixRestriction), PrincipalID: e.admin.PrincipalID, Permission: perm,
				NamespaceID: nsA, CreatedBy: e.admin.PrincipalID, CreatedAt: time.Now()}
			e.must("insert restriction", e.st.InsertRestriction(e.ctx, x))
			ids = append(ids, x.ID)
		}
		e.wantCode("restricted read of A", second(e.app.GetNamespace(e.ctx, e.admin, nsA)), occ.CodeNotFound)

		list, err := e.app.ListRestrictions(e.ctx, e.admin, nsA, app.PageRequest{})
		e.must("list A's restrictions", err)
		if len(list.Items) != len(ids) {
			t.Fatalf("listed %d restrictions, want %d", len(list.Items), len(ids))
		}
		for _, id := range ids {
			e.must("read "+id, second(e.app.GetRestriction(e.ctx, e.admin, nsA, id)))
			e.must("delete "+id, e.app.DeleteRestriction(e.ctx, e.admin, nsA, id))
		}
		e.must("read A after lifting", second(e.app.GetNamespace(e.ctx, e.admin, nsA)))
		e.must("delete A after lifting", second(e.app.DeleteNamespace(e.ctx, e.admin, nsA, app.IfMatch{})))
	})
}

// second returns the error of a two-result call.
func second[T any](_ T, err error) error { return err }
