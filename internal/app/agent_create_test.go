package app_test

import (
	"testing"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestCreateAgentWritesAllOrNothing: an Agent and its service principal
// are written together (one statement on PostgreSQL) only into a live
// Namespace; a Namespace being deleted or failed, or a taken name, is
// refused with its code and leaves neither behind.
func TestCreateAgentWritesAllOrNothing(t *testing.T) {
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := newEnv(t, url, withNamespace)
		services := func() int {
			ps, err := e.st.ListPrincipals(e.ctx, occ.PrincipalService, store.Cursor{}, 1000)
			e.must("list service principals", err)
			return len(ps)
		}
		agents := func() int {
			rows, err := e.st.ListAgents(e.ctx, e.ns, store.Cursor{}, 1000)
			e.must("list agents", err)
			return len(rows)
		}
		create := func(name string) (occ.Agent, error) {
			return e.app.CreateAgent(e.ctx, e.admin, e.ns, app.AgentInput{Name: name, ConfigurationID: e.cfg})
		}

		g, err := create("first")
		e.must("create in a ready Namespace", err)
		sp, err := e.st.GetPrincipal(e.ctx, g.ServicePrincipalID)
		e.must("read the service principal", err)
		if sp.AgentID != g.ID || sp.NamespaceID != e.ns || sp.Kind != occ.PrincipalService || sp.Name != "agent first" {
			t.Fatalf("service principal = %+v, want the Agent's own in its Namespace", sp)
		}
		before, beforeAgents := services(), agents()

		_, err = create("first")
		e.wantCode("a taken name", err, occ.CodeResourceConflict)
		if services() != before || agents() != beforeAgents {
			t.Fatal("a refused create left a principal or an Agent behind")
		}

		for _, status := range []occ.NamespaceStatus{occ.NamespaceDeleting, occ.NamespaceFailed} {
			e.setNamespaceStatus(status)
			_, err = create("in-" + string(status))
			e.wantCode("a Namespace "+string(status), err, occ.CodeNamespaceNotReady)
			if services() != before || agents() != beforeAgents {
				t.Fatalf("a create refused in a %s Namespace left a principal or an Agent behind", status)
			}
		}
	})
}
