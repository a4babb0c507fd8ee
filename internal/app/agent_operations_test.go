package app_test

import (
	"sync"
	"testing"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestConcurrentAgentOperations: many clients deploying and stopping one
// Agent at once, through two replicas of occ, are all admitted (none is
// answered 409 RESOURCE_CONFLICT for losing races to the others), and
// every deploy gets a revision number of its own.
func TestConcurrentAgentOperations(t *testing.T) {
	const clients, each = 8, 6
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		e := newEnvWithCompute(t, url, occ.ComputeCapabilities{ExecutionModes: []string{occ.ExecutionEmbedded},
			HarnessAuthMethods: []string{occ.HarnessAPIKey}}, withNamespace)
		key, err := e.app.CreateSecret(e.ctx, e.admin, e.ns, "model-key", []byte("sk-test"))
		e.must("create secret", err)
		g, err := e.app.CreateAgent(e.ctx, e.admin, e.ns, app.AgentInput{Name: "busy", ConfigurationID: e.cfg,
			HarnessAuth: app.Optional[*occ.HarnessAuth]{Set: true, Value: &occ.HarnessAuth{Method: occ.HarnessAPIKey, Source: &occ.SecretRef{Kind: "secret", NamespaceID: e.ns, ID: key.ID}}}})
		e.must("create agent", err)
		e.must("let the Agent use the key", e.bind(g.ServicePrincipalID, e.ns, occ.P(occ.KindSecret, occ.ActionOperate)))
		replicas := []*app.App{e.app, e.replica()}
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			numbers = map[int64]bool{}
		)
		for c := range clients {
			wg.Go(func() {
				a := replicas[c%len(replicas)]
				for i := range each {
					if (c+i)%3 == 2 {
						if _, err := a.Stop(e.ctx, e.admin, e.ns, g.ID); err != nil {
							t.Errorf("client %d, stop %d: %v", c, i, err)
						}
						continue
					}
					rev, err := a.Deploy(e.ctx, e.admin, e.ns, g.ID)
					if err != nil {
						t.Errorf("client %d, deploy %d: %v", c, i, err)
						continue
					}
					mu.Lock()
					if numbers[rev.Number] {
						t.Errorf("revision number %d given twice", rev.Number)
					}
					numbers[rev.Number] = true
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	})
}
