package servertest

// secretsPath is the Secret collection of a Namespace.
func SecretsPath(ns string) string { return "/namespaces/" + ns + "/secrets" }

// createSecret creates a Secret as the admin and returns its ID.
func (e *Env) CreateSecret(ns, name, value string) string {
	e.T.Helper()
	r := e.Call("POST", SecretsPath(ns), e.Admin, map[string]any{"name": name, "value": value})
	if r.Status != 201 {
		e.T.Fatalf("create secret %s: %d %v", name, r.Status, r.Body)
	}
	return r.Data()["id"].(string)
}

// detail returns the first validation detail of an error response.
func (r Resp) Detail() (string, string) {
	e, _ := r.Body["error"].(map[string]any)
	ds, _ := e["details"].([]any)
	if len(ds) == 0 {
		return "", ""
	}
	d, _ := ds[0].(map[string]any)
	p, _ := d["path"].(string)
	c, _ := d["code"].(string)
	return p, c
}
