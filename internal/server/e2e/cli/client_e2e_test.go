package cli_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/client"
	"github.com/openclaw/occ/internal/client/gen"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// countingTransport counts requests by "METHOD /path".
type countingTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen map[string]int
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.seen[req.Method+" "+req.URL.Path]++
	c.mu.Unlock()
	return c.next.RoundTrip(req)
}

func (c *countingTransport) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[key]
}

// TestClientEndToEnd drives a whole Agent life through internal/client
// against a real server (SQLite, the in-memory compute driver), every
// exchange validated against api/openapi.yaml: a Namespace, a Secret, a
// Configuration and an Agent bound to the Secret; the 403 naming the
// Agent's principal until it is granted secret:operate; deploy, followed
// over Server-Sent Events to succeeded; stop; delete; and the Namespace
// emptied and deleted.
func TestClientEndToEnd(t *testing.T) {
	t.Parallel()
	fake := servertest.NewFakeCompute(t)
	e := servertest.Boot(t, storetest.URL(t, "sqlite"), fake)
	counts := &countingTransport{next: e.Client.Transport, seen: map[string]int{}}
	c := client.New(e.Base, client.WithKey(e.Admin), client.WithPollInterval(20*time.Millisecond),
		client.WithHTTPClient(&http.Client{Transport: counts}))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a bound against hangs, not an assertion
	defer cancel()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	// A Namespace, ready.
	ns, err := c.CreateNamespace(ctx, "e2e")
	must("create namespace", err)
	if ns.Status != client.NamespaceProvisioning {
		t.Fatalf("new namespace = %+v", ns)
	}
	ns, err = c.WaitNamespace(ctx, ns.Id, client.NamespaceReady)
	must("wait for ready", err)
	all, err := c.ListAllNamespaces(ctx)
	must("list namespaces", err)
	if len(all) != 2 {
		t.Fatalf("namespaces = %+v", all)
	}
	if byName, err := c.NamespaceByName(ctx, "default"); err != nil || byName.Id == ns.Id {
		t.Fatalf("default namespace = %+v %v", byName, err)
	}

	// A Secret, a Configuration and an Agent whose api_key is the Secret.
	sec, err := c.CreateSecret(ctx, ns.Id, "openai", "sk-e2e-canary")
	must("create secret", err)
	cfg, err := c.CreateConfiguration(ctx, ns.Id, client.ConfigurationCreate{Name: "support",
		Values: client.ConfigurationDocument{"agents": map[string]any{"defaults": map[string]any{"model": "openai/gpt-5"}}}})
	must("create configuration", err)
	body := client.AgentCreate{Name: "bot", ConfigurationId: cfg.Id}
	body.HarnessAuth.Set(client.APIKeyAuth(sec.Id))
	agent, err := c.CreateAgent(ctx, ns.Id, body)
	must("create agent", err)
	if agent.DesiredRuntimeState != "stopped" || agent.ActiveRevisionId.GetOrEmpty() != "" {
		t.Fatalf("new agent = %+v", agent)
	}

	// The Agent's own principal may not yet use the Secret: the error
	// envelope arrives as an *APIError naming it.
	_, err = c.DeployAgent(ctx, ns.Id, agent.Id)
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 403 || ae.Code != client.CodeForbidden || !strings.Contains(ae.Message, agent.ServicePrincipalId) ||
		!strings.HasPrefix(ae.RequestID, "req_") {
		t.Fatalf("deploy before the grant = %#v", err)
	}

	// Grant it secret:operate in the Namespace, through the generated API.
	role, err := c.API().CreateNamespaceRoleWithResponse(ctx, ns.Id, &gen.CreateNamespaceRoleParams{},
		gen.RoleCreate{Name: "operate-secrets", Permissions: []string{"secret:operate"}})
	must("create role", err)
	must("create role", client.ErrorFromResponse(role.HTTPResponse, role.Body))
	bnd, err := c.API().CreateNamespaceBindingWithResponse(ctx, ns.Id, &gen.CreateNamespaceBindingParams{},
		gen.BindingCreate{PrincipalId: agent.ServicePrincipalId, RoleId: role.JSON201.Data.Id})
	must("create binding", err)
	must("create binding", client.ErrorFromResponse(bnd.HTTPResponse, bnd.Body))

	// Deploy and follow the event stream to succeeded.
	rev, err := c.DeployAgent(ctx, ns.Id, agent.Id)
	must("deploy", err)
	if rev.Number != 1 || rev.AgentId != agent.Id {
		t.Fatalf("revision = %+v", rev)
	}
	var seen []string
	st, err := c.WatchDeployment(ctx, ns.Id, agent.Id, rev.Id, func(s *client.DeploymentStatus) { seen = append(seen, string(s.Status)) })
	must("wait for the deployment", err)
	if st.Status != client.DeploymentSucceeded || st.DeploymentId != rev.Id || len(seen) == 0 || seen[len(seen)-1] != client.DeploymentSucceeded {
		t.Fatalf("deployment = %+v, seen %v", st, seen)
	}
	deploymentPath := "/namespaces/" + ns.Id + "/agents/" + agent.Id + "/deployments/" + rev.Id
	if counts.count("GET "+deploymentPath+"/events") != 1 || counts.count("GET "+deploymentPath) != 0 {
		t.Fatalf("followed the stream %d times, polled %d times", counts.count("GET "+deploymentPath+"/events"), counts.count("GET "+deploymentPath))
	}
	fake.Get(func(f *servertest.FakeCompute) {
		if f.Active[agent.Id] != rev.Id || f.EnvSeen[agent.Id]["OPENAI_API_KEY"] != "sk-e2e-canary" {
			t.Fatalf("driver: active %v, env keys %d", f.Active, len(f.EnvSeen[agent.Id]))
		}
	})
	got, err := c.GetDeployment(ctx, ns.Id, agent.Id, rev.Id)
	must("get deployment", err)
	if got.Status != client.DeploymentSucceeded {
		t.Fatalf("deployment after the wait = %+v", got)
	}
	agent, err = c.GetAgent(ctx, ns.Id, agent.Id)
	must("get agent", err)
	if agent.ActiveRevisionId.GetOrEmpty() != rev.Id || agent.DesiredRuntimeState != "running" {
		t.Fatalf("deployed agent = %+v", agent)
	}

	// Stop: desired stopped, then the active revision cleared.
	stopped, err := c.StopAgent(ctx, ns.Id, agent.Id)
	must("stop", err)
	if stopped.DesiredRuntimeState != "stopped" {
		t.Fatalf("stopped agent = %+v", stopped)
	}
	for stopped.ActiveRevisionId.GetOrEmpty() != "" {
		if err := ctx.Err(); err != nil {
			t.Fatalf("active revision never cleared: %+v", stopped)
		}
		time.Sleep(20 * time.Millisecond)
		stopped, err = c.GetAgent(ctx, ns.Id, agent.Id)
		must("get agent", err)
	}

	// Delete the Agent and wait until it is gone.
	deleting, err := c.DeleteAgent(ctx, ns.Id, agent.Id)
	must("delete agent", err)
	if deleting.Status != "deleting" {
		t.Fatalf("deleting agent = %+v", deleting)
	}
	must("wait for the agent to go", c.WaitAgentGone(ctx, ns.Id, agent.Id))
	if _, err := c.GetAgent(ctx, ns.Id, agent.Id); !client.IsNotFound(err) {
		t.Fatalf("agent after deletion: %v", err)
	}
	fake.Get(func(f *servertest.FakeCompute) {
		if !f.Deleted[agent.Id] {
			t.Fatal("the driver never deleted the Agent")
		}
	})

	// A Namespace that owns resources refuses deletion; emptied, it goes.
	if _, err := c.DeleteNamespace(ctx, ns.Id, ""); !client.IsCode(err, client.CodeNamespaceNotEmpty) {
		t.Fatalf("delete a non-empty namespace: %v", err)
	}
	must("delete configuration", c.DeleteConfiguration(ctx, ns.Id, cfg.Id, ""))
	must("delete secret", c.DeleteSecret(ctx, ns.Id, sec.Id, ""))
	gone, err := c.DeleteNamespace(ctx, ns.Id, ns.Etag)
	must("delete namespace", err)
	if gone.Status != client.NamespaceDeleting {
		t.Fatalf("deleting namespace = %+v", gone)
	}
	_, err = c.WaitNamespace(ctx, ns.Id, client.NamespaceGone)
	must("wait for the namespace to go", err)
	if _, err := c.GetNamespace(ctx, ns.Id); !client.IsNotFound(err) {
		t.Fatalf("namespace after deletion: %v", err)
	}
}
