package servertest

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// deployWorld is a ready Namespace with a deployable Agent: an api_key
// binding to a Secret its service principal may operate, and a
// Configuration that binds a second Secret as an environment variable.
type DeployWorld struct {
	*AgentWorld
	Fake  *FakeCompute
	Agent string
	Sp    string
}

// newAgent creates an Agent; grant gives its service principal operate on
// every Secret of the Namespace.
func (d *DeployWorld) NewAgent(t *testing.T, name string, grant bool) (string, string) {
	e := d.E
	r := d.Create(e.Admin, map[string]any{"name": name, "harnessAuth": map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "id": d.Secret}},
		"initialWorkspaceFiles": map[string]any{"AGENTS.md": "Be brief.\n"}})
	if r.Status != 201 {
		t.Fatalf("agent = %d %v", r.Status, r.Body)
	}
	id, sp := r.Data()["id"].(string), r.Data()["servicePrincipalId"].(string)
	if grant {
		d.GrantSecrets(t, name, sp)
	}
	return id, sp
}

// grantSecrets gives a principal secret:operate on every Secret of the
// Namespace (through a role named after name).
func (d *DeployWorld) GrantSecrets(t *testing.T, name, principal string) {
	e := d.E
	role := e.Call("POST", d.Path("/iam/roles"), e.Admin, map[string]any{"name": "op-" + name, "permissions": []string{"secret:operate"}}).Data()["id"].(string)
	if r := e.Call("POST", d.Path("/iam/bindings"), e.Admin, map[string]any{"principalId": principal, "roleId": role}); r.Status != 201 {
		t.Fatalf("grant the Agent principal = %d %v", r.Status, r.Body)
	}
}

func (d *DeployWorld) Deploy(t *testing.T, agent string) string {
	r := d.E.Call("POST", d.Path("/agents/"+agent+"/deploy"), d.E.Admin, nil)
	if r.Status != 202 || r.Data()["id"] == nil {
		t.Fatalf("deploy = %d %v", r.Status, r.Body)
	}
	return r.Data()["id"].(string)
}

// waitDeployment polls until the deployment is terminal and returns it.
func (d *DeployWorld) WaitDeployment(t *testing.T, agent, rev string) map[string]any {
	return d.WatchDeployment(t, agent, rev, func(map[string]any) {})
}

// WatchDeployment polls a deployment as a client would, every 20 ms,
// giving each pending status it reads to seen, and returns the terminal
// one.
func (d *DeployWorld) WatchDeployment(t *testing.T, agent, rev string, seen func(status map[string]any)) map[string]any {
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := d.E.Call("GET", d.Path("/agents/"+agent+"/deployments/"+rev), d.E.Admin, nil)
		if r.Status != 200 {
			t.Fatalf("GET deployment = %d %v", r.Status, r.Body)
		}
		if s := r.Data()["status"]; s == "succeeded" || s == "failed" {
			return r.Data()
		}
		seen(r.Data())
		if time.Now().After(deadline) {
			t.Fatalf("deployment %s still %v", rev, r.Data())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func WaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// events opens a deployment's event stream as the admin and checks that it
// is one; the caller closes the body.
func (d *DeployWorld) Events(t *testing.T, agent, rev string) *http.Response {
	t.Helper()
	e := d.E
	req, _ := http.NewRequest("GET", e.Base+d.Path("/agents/"+agent+"/deployments/"+rev+"/events"), nil)
	req.Header.Set("Authorization", "Bearer "+e.Admin)
	res, err := e.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		res.Body.Close()
		t.Fatalf("events = %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	return res
}
