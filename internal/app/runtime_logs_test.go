package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestRuntimeLogsAuditedFirstAndRedacted: a log read whose audit cannot be
// written reads nothing (fail closed); once it can, the lines come back
// with the values of the revision's bound Secrets and the gateway's own
// credentials replaced, and a bound Secret that cannot be read any more
// shows nothing rather than an unredacted line.
func TestRuntimeLogsAuditedFirstAndRedacted(t *testing.T) {
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		const token = "gateway-token-0123456789"
		reads := 0
		reader := func(ctx context.Context, nsID, agentID, revisionID string, tailLines int) (RuntimeLogs, error) {
			reads++
			return RuntimeLogs{Found: true, Lines: []string{"key sk-bound-canary", "token " + token, "harness sk-harness-canary", "plain"},
				Credentials: []string{token}}, nil
		}
		e, faults := newFaultyTestEnv(t, url, Options{RuntimeLogs: reader})
		ctx := e.ctx
		ns, err := e.app.CreateNamespace(ctx, e.admin, "logs")
		if err != nil {
			t.Fatal(err)
		}
		if err := e.st.InTx(ctx, func(tx *store.Tx) error {
			row, err := tx.GetNamespace(ctx, ns.ID)
			if err != nil {
				return err
			}
			row.Status = occ.NamespaceReady
			_, err = tx.UpdateNamespace(ctx, row)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		bound, err := e.app.CreateSecret(ctx, e.admin, ns.ID, "bound", []byte("sk-bound-canary"))
		if err != nil {
			t.Fatal(err)
		}
		harness, err := e.app.CreateSecret(ctx, e.admin, ns.ID, "harness", []byte("sk-harness-canary"))
		if err != nil {
			t.Fatal(err)
		}
		agentID := occ.NewID(occ.PrefixAgent)
		sp := occ.Principal{ID: occ.NewID(occ.PrefixServicePrincipal), Kind: occ.PrincipalService, Name: "agent bot", NamespaceID: ns.ID,
			AgentID: agentID, CreatedAt: time.Now(), UpdatedAt: time.Now(), Version: 1}
		if err := e.st.InsertAgent(ctx, store.AgentRow{ID: agentID, NamespaceID: ns.ID, Name: "bot", Status: occ.AgentActive,
			DesiredState: occ.DesiredStopped, ServicePrincipalID: sp.ID, CreatedAt: occ.Millis(time.Now()), UpdatedAt: occ.Millis(time.Now()), Version: 1}, sp); err != nil {
			t.Fatal(err)
		}
		ref := func(id string) occ.SecretRef { return occ.SecretRef{Kind: "secret", NamespaceID: ns.ID, ID: id} }
		rev := occ.Revision{ID: occ.NewID(occ.PrefixRevision), AgentID: agentID, NamespaceID: ns.ID, Number: 1, CreatedBy: "test",
			CreatedAt: time.Now(), Snapshot: &occ.RevisionSnapshot{ExecutionMode: occ.ExecutionEmbedded,
				Configuration:  occ.ConfigurationSnapshot{Kind: "agent", Document: map[string]any{}},
				SecretBindings: map[string]occ.SecretBinding{"BOUND": {Source: ref(bound.ID), Delivery: "env"}},
				HarnessAuth:    &occ.HarnessAuth{Method: occ.HarnessAPIKey, Source: &occ.SecretRef{Kind: "secret", NamespaceID: ns.ID, ID: harness.ID}}}}
		row, err := store.EncodeRevision(rev)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.st.InsertRevision(ctx, row); err != nil {
			t.Fatal(err)
		}

		faults.Inject(storetest.CommitFault{Match: "INSERT INTO audit_events"})
		_, err = e.app.ReadRuntimeLogs(ctx, e.admin, ns.ID, agentID, rev.ID, 10)
		if occ.CodeOf(err) != occ.CodeDependencyUnavailable || reads != 0 {
			t.Fatalf("read with the audit failing = %v after %d driver reads; want DEPENDENCY_UNAVAILABLE and none", err, reads)
		}
		faults.Disarm()

		got, err := e.app.ReadRuntimeLogs(ctx, e.admin, ns.ID, agentID, rev.ID, 10)
		if err != nil || !got.Found || got.Credentials != nil {
			t.Fatalf("read = %+v, %v", got, err)
		}
		want := []string{"key [REDACTED]", "token [REDACTED]", "harness [REDACTED]", "plain"}
		if strings.Join(got.Lines, "\n") != strings.Join(want, "\n") {
			t.Fatalf("lines %q; want %q", got.Lines, want)
		}

		if err := e.app.DeleteSecret(ctx, e.admin, ns.ID, bound.ID, IfMatch{}); err != nil {
			t.Fatal(err)
		}
		if got, err := e.app.ReadRuntimeLogs(ctx, e.admin, ns.ID, agentID, rev.ID, 10); occ.CodeOf(err) != occ.CodeDependencyUnavailable || got.Lines != nil {
			t.Fatalf("read after a bound Secret was deleted = %+v, %v; want DEPENDENCY_UNAVAILABLE and no lines", got, err)
		}
	})
}
