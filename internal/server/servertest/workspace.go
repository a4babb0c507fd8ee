package servertest

import (
	"testing"
)

// liveAgent boots occ with the local driver running the fake gateway and
// creates, in a new Namespace, an Agent (not deployed yet) with an initial
// AGENTS.md.
func LiveAgent(t *testing.T, url, name string) (*DeployWorld, string) {
	t.Helper()
	e := Boot(t, url, nil)
	d := &DeployWorld{AgentWorld: &AgentWorld{E: e, Ns: e.CreateNamespace(name)}}
	d.Secret = e.Call("POST", d.Path("/secrets"), e.Admin, map[string]any{"name": "k", "value": "sk-x"}).Data()["id"].(string)
	d.Cfg = e.Call("POST", d.Path("/configurations"), e.Admin, map[string]any{"name": "c", "kind": "agent", "values": map[string]any{}}).Data()["id"].(string)
	agent, _ := d.NewAgent(t, name, true)
	return d, agent
}
