package computetest

import "maps"

// Running returns the revision whose workload runs for the Agent.
func (f *Fake) Running(agentID string) (revisionID string, ok bool) {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	if a := f.w.agents[agentID]; a != nil && a.revision != "" {
		return a.revision, true
	}
	return "", false
}

// Active returns the revision ActivateRevision made the serving one, ""
// when none serves.
func (f *Fake) Active(agentID string) string {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	if a := f.w.agents[agentID]; a != nil {
		return a.active
	}
	return ""
}

// Env returns a copy of the Env of the Agent's revision that last
// started (kept after a stop or a deletion); nil when none started.
func (f *Fake) Env(agentID string) map[string]string {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	return maps.Clone(f.w.lastEnv[agentID])
}

// HarnessEnv returns a copy of the harness environment (the dedicated
// model credential) of the Agent's last started workload.
func (f *Fake) HarnessEnv(agentID string) map[string]string {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	return maps.Clone(f.w.lastHarnessEnv[agentID])
}

// Files returns a copy of the Agent's workspace files (the initial files
// land there once); nil when the Agent has no state.
func (f *Fake) Files(agentID string) map[string]string {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	if a := f.w.agents[agentID]; a != nil {
		return maps.Clone(a.files)
	}
	return nil
}

// Calls is how many calls of the method (MethodPrepareRevision, …) were
// made for the Agent or Namespace ID, through this Fake and every Fake
// reopened from it, refused ones included.
func (f *Fake) Calls(method, id string) int { return f.w.calls.of(method, id) }

// Deleted reports whether the Agent was deleted (DeleteAgent, or
// DeleteNamespace of its Namespace) and not prepared since.
func (f *Fake) Deleted(agentID string) bool {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	return f.w.deleted[agentID]
}

// NamespaceExists reports whether the Namespace was ensured (or an Agent
// of it prepared) and not deleted since.
func (f *Fake) NamespaceExists(id string) bool {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	return f.w.namespaces[id]
}
