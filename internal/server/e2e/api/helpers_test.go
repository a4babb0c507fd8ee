package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store"
)

type storeTx = store.Tx

func scopePrincipal(tx *store.Tx, principalID, namespaceID string) error {
	return tx.ScopePrincipalForTest(context.Background(), principalID, namespaceID)
}

// breakAudit makes every audit insert fail, as a full disk or revoked
// grant would.
func breakAudit(t *testing.T, e *servertest.Env) { servertest.BreakAuditWhen(t, e, "") }

var nsCreate = []occ.Permission{occ.P(occ.KindNamespace, occ.ActionCreate)}

// insertRevision stores a revision and a settled deployment of it straight
// in the database, for read routes that need one without a worker run.
func insertRevision(e *servertest.Env, nsID, agentID, configurationID string) string {
	e.T.Helper()
	rev := occ.Revision{ID: occ.NewID(occ.PrefixRevision), AgentID: agentID, NamespaceID: nsID, Number: time.Now().UnixNano() % 1_000_000_000,
		CreatedBy: "test", CreatedAt: time.Now(), Snapshot: &occ.RevisionSnapshot{
			Configuration: occ.ConfigurationSnapshot{ID: configurationID, Kind: "agent", Generation: 1, Document: map[string]any{}},
			ExecutionMode: "embedded", Plugins: map[string]occ.PluginSelection{}, ComputeDriver: "local", ServicePrincipalID: "spn_x"}}
	row, err := store.EncodeRevision(rev)
	if err != nil {
		e.T.Fatal(err)
	}
	if err := e.M.Store().InsertRevision(context.Background(), row); err != nil {
		e.T.Fatal(err)
	}
	now := occ.Millis(time.Now())
	if err := e.M.Store().InsertDeployment(context.Background(), store.DeploymentRow{RevisionID: rev.ID, AgentID: agentID, NamespaceID: nsID,
		ActorID: "test", Status: "failed", ErrorCode: "REVISION_SUPERSEDED", Warnings: "[]", AdmittedAt: now, FinishedAt: now, UpdatedAt: now}); err != nil {
		e.T.Fatal(err)
	}
	return rev.ID
}
