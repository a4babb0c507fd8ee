package api_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store"
)

// tenant is one Namespace with one resource of every kind, made by the
// bootstrap admin: fixture name (as path parameters and example
// placeholders say it) → value.
type tenant map[string]string

func (tn tenant) ns() string { return tn["namespaceId"] }

// ids lists the tenant's IDs (its non-ID values, like a file name, aside).
func (tn tenant) ids() []string {
	var out []string
	for _, v := range tn {
		if isID(v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// value is the tenant's fixture for a path parameter or placeholder of a
// route; a name without one fails the test (add it to newTenant).
func (tn tenant) value(t *testing.T, route, name string) string {
	if name == "principalId" {
		name = "servicePrincipalId" // a body's principal: any kind
		if strings.HasPrefix(route, "/iam/principals") {
			name = "human" // the human principal routes
		}
	}
	v, ok := tn[name]
	if !ok {
		t.Fatalf("%s: no cross-tenant fixture for %q: add one to newTenant", route, name)
	}
	return v
}

func isID(v string) bool { return occ.ValidID(occ.PrefixOf(v), v) }

// newTenant makes a Namespace and one of everything in it: Configuration,
// Secret, Preset, Service Account, Credential Source, an Agent deployed
// (with its revision), a role, binding and restriction, a service
// principal of the Namespace with a key, and a human bound there only.
func newTenant(e *servertest.Env, name string) tenant {
	e.T.Helper()
	ns := e.CreateNamespace(name + "-" + occ.NewUUID()[:8])
	sp := e.Call("POST", "/iam/service-principals", e.Admin, map[string]any{"name": name, "namespaceId": ns})
	if sp.Status != 201 {
		e.T.Fatalf("service principal: %d %v", sp.Status, sp.Body)
	}
	fx := &fixtures{e: e, scope: ns, made: map[string]string{"namespaceId": ns, "servicePrincipalId": sp.Data()["id"].(string),
		"_route": "/workspace/"}} // "/workspace/": the Agent is deployed
	for _, k := range []string{"configurationId", "secretId", "presetId", "serviceAccountId", "credentialSourceId", "agentId",
		"roleId", "bindingId", "restrictionId", "keyId", "human", "email", "name", "adminEmail", "adminPassword"} {
		fx.get(k)
	}
	bind := e.Call("POST", "/namespaces/"+ns+"/iam/bindings", e.Admin, map[string]any{"principalId": fx.made["human"], "roleId": fx.made["roleId"]})
	if bind.Status != 201 {
		e.T.Fatalf("bind the human: %d %v", bind.Status, bind.Body)
	}
	agent := e.Call("GET", "/namespaces/"+ns+"/agents/"+fx.made["agentId"], e.Admin, nil).Data()
	fx.made["revisionId"] = agent["activeRevisionId"].(string)
	fx.made["agentServicePrincipalId"] = agent["servicePrincipalId"].(string)
	delete(fx.made, "_route")
	return fx.made
}

// tenantAdmin makes a service principal holding every permission in the
// Namespace and installation:read, and returns its key.
func tenantAdmin(e *servertest.Env, ns string) string {
	e.T.Helper()
	var perms []occ.Permission
	for p := range occ.Routable {
		if p.Kind != occ.KindInstallation {
			perms = append(perms, p)
		}
	}
	key, id := e.Principal(servertest.Grant{Perms: perms, Namespace: ns})
	ctx, now := context.Background(), time.Now()
	role := occ.Role{ID: occ.NewID(occ.PrefixRole), Name: "reader-" + occ.NewUUID()[:8], Permissions: []occ.Permission{occ.P(occ.KindInstallation, occ.ActionRead)}, CreatedAt: now}
	err := e.M.Store().InTx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertRole(ctx, role); err != nil {
			return err
		}
		return tx.InsertBinding(ctx, occ.Binding{ID: occ.NewID(occ.PrefixBinding), PrincipalID: id, RoleID: role.ID, CreatedBy: id, CreatedAt: now})
	})
	if err != nil {
		e.T.Fatal(err)
	}
	if r := e.Call("GET", "/installation", key, nil); r.Status != 200 {
		e.T.Fatalf("the tenant admin cannot read the installation: %d", r.Status)
	}
	return key
}

// waitSettled waits until B's deployment is terminal and the worker has
// finished every job, so that only a request can change B's rows afterwards.
func waitSettled(e *servertest.Env, tn tenant) {
	e.T.Helper()
	path := "/namespaces/" + tn.ns() + "/agents/" + tn["agentId"] + "/deployments/" + tn["revisionId"]
	servertest.WaitFor(e.T, "B's deployment terminal", func() bool {
		s, _ := e.Call("GET", path, e.Admin, nil).Data()["status"].(string)
		return occ.DeploymentTerminal(s)
	})
	servertest.WaitFor(e.T, "the worker idle", func() bool {
		var n int
		err := e.M.Store().DB().QueryRow(`SELECT count(*) FROM river_job WHERE state NOT IN ('completed', 'cancelled', 'discarded')`).Scan(&n)
		if err != nil {
			e.T.Fatal(err)
		}
		return n == 0
	})
}
