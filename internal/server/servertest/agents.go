package servertest

// agentWorld is a Namespace with a Configuration and a Secret to build Agents from.
type AgentWorld struct {
	E              *Env
	Ns, Cfg, Other string // other: a Configuration of another Namespace
	Secret         string
}

func (w *AgentWorld) Path(p string) string { return "/namespaces/" + w.Ns + p }

func (w *AgentWorld) Create(key string, body map[string]any) Resp {
	if _, ok := body["configurationId"]; !ok {
		body["configurationId"] = w.Cfg
	}
	return w.E.Call("POST", w.Path("/agents"), key, body)
}
