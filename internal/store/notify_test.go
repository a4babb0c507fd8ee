package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestDeploymentChangesWakeSubscribers: a committed change to a deployment
// wakes the subscribers of its Agent's topic (on PostgreSQL also those of
// another store handle, as another occ replica); a rolled-back one wakes
// nobody.
func TestDeploymentChangesWakeSubscribers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, url string) {
		ctx := context.Background()
		writer := storetest.Open(t, url)
		watcher := writer
		if strings.HasPrefix(url, "postgres") {
			watcher = storetest.Open(t, url) // another replica on the same database
		}
		agent, other := occ.NewID(occ.PrefixAgent), occ.NewID(occ.PrefixAgent)
		woke, stop := watcher.Subscribe(store.AgentTopic(agent))
		defer stop()
		otherWoke, stopOther := watcher.Subscribe(store.AgentTopic(other))
		defer stopOther()
		// The PostgreSQL listener wakes everyone once it listens: a
		// change seen by a third subscriber says it does, and the
		// wake-ups it gave are dropped.
		warm := occ.NewID(occ.PrefixAgent)
		warmWoke, stopWarm := watcher.Subscribe(store.AgentTopic(warm))
		defer stopWarm()
		if err := writer.InsertDeployment(ctx, newDeployment(warm)); err != nil {
			t.Fatal(err)
		}
		wait(t, warmWoke, "the first change")
		drain(woke, otherWoke)

		dep := newDeployment(agent)
		if err := writer.InsertDeployment(ctx, dep); err != nil {
			t.Fatal(err)
		}
		wait(t, woke, "the admitted deployment")

		// A rolled-back change is never announced: the committed change
		// to the other Agent, announced after it, arrives alone.
		boom := errors.New("boom")
		err := writer.InTx(ctx, func(tx *store.Tx) error {
			dep.Status = occ.DeploymentRunning
			if err := tx.UpdateDeployment(ctx, dep); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if err := writer.InsertDeployment(ctx, newDeployment(other)); err != nil {
			t.Fatal(err)
		}
		wait(t, otherWoke, "the other Agent's deployment")
		select {
		case <-woke:
			t.Fatal("a rolled-back change woke the subscriber")
		default:
		}

		// A change committed in a transaction wakes after the commit.
		if err := writer.InTx(ctx, func(tx *store.Tx) error {
			dep.Status = occ.DeploymentSucceeded
			return tx.UpdateDeployment(ctx, dep)
		}); err != nil {
			t.Fatal(err)
		}
		wait(t, woke, "the finished deployment")
	})
}

// newDeployment is a queued deployment of a new revision of the Agent.
func newDeployment(agent string) store.DeploymentRow {
	return store.DeploymentRow{RevisionID: occ.NewID(occ.PrefixRevision), AgentID: agent, NamespaceID: occ.NewID(occ.PrefixNamespace),
		ActorID: "usr_x", Status: occ.DeploymentQueued, Warnings: "[]", AdmittedAt: 1, UpdatedAt: 1}
}

// drain empties channels that may hold a wake-up.
func drain(chs ...<-chan struct{}) {
	for _, ch := range chs {
		select {
		case <-ch:
		default:
		}
	}
}

// wait fails the test when ch receives nothing in 30 s.
func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("no wake-up for %s", what)
	}
}
