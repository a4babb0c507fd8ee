package servertest

import (
	"testing"
)

func (d *DeployWorld) NewSecret(t *testing.T, name, value string) string {
	r := d.E.Call("POST", d.Path("/secrets"), d.E.Admin, map[string]any{"name": name, "value": value})
	if r.Status != 201 {
		t.Fatalf("secret %s = %d %v", name, r.Status, r.Body)
	}
	return r.Data()["id"].(string)
}

// diagnose calls the route as key.
func (d *DeployWorld) Diagnose(key, agent, rev string) Resp {
	return d.E.Call("POST", d.Path("/agents/"+agent+"/deployments/"+rev+"/diagnostics"), key, nil)
}

// verdicts are a 200 answer's checks as "component/check" → "status CODE".
func Verdicts(t *testing.T, r Resp, rev string) map[string]string {
	t.Helper()
	if r.Status != 200 || r.Data()["revisionId"] != rev {
		t.Fatalf("diagnostics = %d %v", r.Status, r.Body)
	}
	out := map[string]string{}
	for _, c := range r.Data()["checks"].([]any) {
		c := c.(map[string]any)
		out[c["component"].(string)+"/"+c["check"].(string)] = c["status"].(string) + " " + c["code"].(string)
	}
	return out
}

// untouched returns a check that what a caller reads of the deployment and
// the Agent is byte for byte what it was when untouched was called.
func (d *DeployWorld) Untouched(t *testing.T, agent, rev string) func() {
	read := func() string {
		dep := d.E.Call("GET", d.Path("/agents/"+agent+"/deployments/"+rev), d.E.Admin, nil)
		ag := d.E.Call("GET", d.Path("/agents/"+agent), d.E.Admin, nil)
		return ToJSON(dep.Data()) + ToJSON(ag.Data()) + ag.Header.Get("ETag")
	}
	before := read()
	return func() {
		t.Helper()
		if after := read(); after != before {
			t.Fatalf("diagnostics changed stored state:\nbefore %s\nafter  %s", before, after)
		}
	}
}
