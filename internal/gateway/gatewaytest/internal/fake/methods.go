package fake

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// agentFileNames are the names agents.files.* accept.
var agentFileNames = []string{"AGENTS.md", "SOUL.md", "USER.md", "IDENTITY.md", "BOOTSTRAP.md", "MEMORY.md"}

// listedFileNames are the names agents.files.list reports (IDENTITY.md is
// not listed, even when present).
var listedFileNames = []string{"AGENTS.md", "SOUL.md", "USER.md", "BOOTSTRAP.md", "MEMORY.md"}

var sha256Pattern = regexp.MustCompile(`^[a-fA-F0-9]{64}$`)

// call runs one method with its (non-empty) params.
func (s *Server) call(method string, raw json.RawMessage) (any, *rpcErr) {
	switch method {
	case "health":
		var p struct {
			Probe bool `json:"probe,omitempty"`
		}
		if err := params(method, raw, &p); err != nil {
			return nil, err
		}
		return s.health(), nil
	case "agents.list":
		if err := params(method, raw, &struct{}{}); err != nil {
			return nil, err
		}
		fc := s.config()
		var agents []any
		for _, id := range fc.agents {
			agents = append(agents, map[string]any{"id": id, "workspace": fc.workspace})
		}
		return map[string]any{"defaultId": "main", "mainKey": "main", "scope": "per-sender", "agents": agents}, nil
	case "agents.files.list":
		var p struct {
			AgentID string `json:"agentId"`
		}
		if err := params(method, raw, &p); err != nil {
			return nil, err
		}
		ws, err := s.agentWorkspace(method, p.AgentID)
		if err != nil {
			return nil, err
		}
		files := []any{}
		for _, name := range listedFileNames {
			files = append(files, fileEntry(ws, name, false))
		}
		return map[string]any{"agentId": p.AgentID, "workspace": ws, "files": files}, nil
	case "agents.files.get":
		var p struct {
			AgentID string `json:"agentId"`
			Name    string `json:"name"`
		}
		if err := params(method, raw, &p); err != nil {
			return nil, err
		}
		ws, err := s.agentWorkspace(method, p.AgentID)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(agentFileNames, p.Name) {
			return nil, invalid("unsupported file %q", p.Name)
		}
		return map[string]any{"agentId": p.AgentID, "workspace": ws, "file": fileEntry(ws, p.Name, true)}, nil
	case "agents.files.set":
		var p struct {
			AgentID      string  `json:"agentId"`
			Name         string  `json:"name"`
			Content      *string `json:"content"`
			ExpectedHash *string `json:"expectedHash,omitempty"`
		}
		if err := params(method, raw, &p); err != nil {
			return nil, err
		}
		if p.Content == nil {
			return nil, invalid("invalid %s params: must have required property 'content'", method)
		}
		if p.ExpectedHash != nil && !sha256Pattern.MatchString(*p.ExpectedHash) {
			return nil, invalid("invalid %s params: at /expectedHash: must match pattern \"^[a-fA-F0-9]{64}$\"", method)
		}
		ws, err := s.agentWorkspace(method, p.AgentID)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(agentFileNames, p.Name) {
			return nil, invalid("unsupported file %q", p.Name)
		}
		if err := s.writeAgentFile(ws, p.Name, *p.Content, p.ExpectedHash); err != nil {
			return nil, err
		}
		// Like the real gateway, the answer echoes what was written (a
		// concurrent later write cannot leak into it); only size and time
		// come from the file.
		file := map[string]any{"name": p.Name, "path": filepath.Join(ws, p.Name), "missing": false,
			"size": len(*p.Content), "hash": hashHex([]byte(*p.Content)), "content": *p.Content}
		if st, err := os.Stat(filepath.Join(ws, p.Name)); err == nil {
			file["updatedAtMs"] = st.ModTime().UnixMilli()
		}
		return map[string]any{"ok": true, "agentId": p.AgentID, "workspace": ws, "file": file}, nil
	case "config.get":
		if err := params(method, raw, &struct{}{}); err != nil {
			return nil, err
		}
		fc := s.config()
		var parsed any = map[string]any{}
		if fc.exists {
			parsed = fc.doc
		}
		return map[string]any{"path": s.cfg.ConfigPath, "exists": fc.exists, "raw": string(fc.raw), "hash": hashHex(fc.raw),
			"valid": true, "issues": []any{}, "config": parsed}, nil
	case "channels.status":
		var p struct {
			Probe     bool   `json:"probe,omitempty"`
			TimeoutMs *int64 `json:"timeoutMs,omitempty"`
			Channel   string `json:"channel,omitempty"`
		}
		if err := params(method, raw, &p); err != nil {
			return nil, err
		}
		if p.TimeoutMs != nil && *p.TimeoutMs < 0 {
			return nil, invalid("invalid %s params: at /timeoutMs: must be >= 0", method)
		}
		return s.channelsStatus(p.Probe), nil
	case "models.probe":
		var p struct {
			Provider  string `json:"provider"`
			TimeoutMs *int64 `json:"timeoutMs,omitempty"`
		}
		if err := params(method, raw, &p); err != nil {
			return nil, err
		}
		if p.Provider == "" {
			return nil, invalid("invalid %s params: must have required property 'provider'", method)
		}
		return s.modelsProbe(p.Provider), nil
	case "models.authStatus":
		if err := params(method, raw, &struct{}{}); err != nil {
			return nil, err
		}
		fc := s.config()
		providers := []any{}
		for _, id := range s.probeableProviders(fc) {
			providers = append(providers, map[string]any{"provider": id, "status": "static", "profiles": []any{}, "apiKey": map[string]any{"source": "config"}})
		}
		return map[string]any{"providers": providers, "providerCapabilities": map[string]any{}}, nil
	case "plugins.list":
		if err := params(method, raw, &struct{}{}); err != nil {
			return nil, err
		}
		return s.pluginsList(), nil
	}
	return nil, invalid("unknown method: %s", method)
}

// params decodes a closed params object.
func params(method string, raw json.RawMessage, v any) *rpcErr {
	if err := strictUnmarshal(raw, v); err != nil {
		return invalid("invalid %s params: %v", method, err)
	}
	return nil
}

// strictUnmarshal decodes one JSON object, refusing unknown fields and
// trailing data.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}

// agentWorkspace checks the agent ID and returns its workspace.
func (s *Server) agentWorkspace(method, agentID string) (string, *rpcErr) {
	if agentID == "" {
		return "", invalid("invalid %s params: must have required property 'agentId'", method)
	}
	fc := s.config()
	if !slices.Contains(fc.agents, agentID) {
		return "", invalid("agent %q not found", agentID)
	}
	return fc.workspace, nil
}

// fileEntry describes one workspace file, with its content when asked.
func fileEntry(ws, name string, withContent bool) map[string]any {
	path := filepath.Join(ws, name)
	b, err := os.ReadFile(path)
	if err != nil {
		return map[string]any{"name": name, "path": path, "missing": true, "expectedAbsent": name == "BOOTSTRAP.md" || name == "MEMORY.md"}
	}
	e := map[string]any{"name": name, "path": path, "missing": false, "size": len(b), "hash": hashHex(b)}
	if st, err := os.Stat(path); err == nil {
		e["updatedAtMs"] = st.ModTime().UnixMilli()
	}
	if withContent {
		e["content"] = decodeUTF8(b)
	}
	return e
}

// writeAgentFile writes content, honouring expectedHash.
func (s *Server) writeAgentFile(ws, name, content string, expectedHash *string) *rpcErr {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	path := filepath.Join(ws, name)
	if expectedHash != nil {
		details := map[string]any{"type": "agent_file_conflict", "name": name}
		b, err := os.ReadFile(path)
		if err == nil {
			details["currentHash"] = hashHex(b)
		}
		if err != nil || !strings.EqualFold(hashHex(b), *expectedHash) {
			return &rpcErr{Code: "INVALID_REQUEST", Message: fmt.Sprintf("agent file %q changed since it was read", name), Details: details}
		}
	}
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return &rpcErr{Code: "UNAVAILABLE", Message: "workspace: " + err.Error()}
	}
	tmp, err := os.CreateTemp(ws, "."+name+".tmp-*")
	if err != nil {
		return &rpcErr{Code: "UNAVAILABLE", Message: "write: " + err.Error()}
	}
	_, werr := tmp.WriteString(content)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o600)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return &rpcErr{Code: "UNAVAILABLE", Message: "write: " + werr.Error()}
	}
	s.logf("INFO", "agent file %s written", name)
	return nil
}

// health is the health payload.
func (s *Server) health() map[string]any {
	fc := s.config()
	s.mu.Lock()
	warnings := slices.Clone(s.plugins)
	s.mu.Unlock()
	// The shape of the real health.plugins: loaded plugin IDs; errors
	// {id, origin, activated, error, failurePhase}; unavailable (payload
	// verification failed) {id, state, diagnostic{kind, reason, detail}}.
	loaded := []any{"memory-core"}
	failed := map[string]bool{}
	errs, unavailable := []any{}, []any{}
	for _, w := range warnings {
		failed[w.PluginID] = true
		switch w.Kind {
		case PluginInstallFailed:
			unavailable = append(unavailable, map[string]any{"id": w.PluginID, "state": "unavailable",
				"diagnostic": map[string]any{"kind": "payload", "reason": "install-incomplete", "detail": "plugin install failed (fake)"}})
		case PluginAuthRequired:
			errs = append(errs, map[string]any{"id": w.PluginID, "origin": "global", "activated": true, "failurePhase": "service",
				"error": "service " + w.PluginID + ": authentication required (401 from the provider)"})
		}
	}
	if fc.slack && !failed["slack"] {
		loaded = append(loaded, "slack")
	}
	slices.SortFunc(loaded, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
	channels := map[string]any{}
	order := []any{}
	if fc.slack {
		order = append(order, "slack")
		channels["slack"] = s.slackSummary(fc, false)
	}
	return map[string]any{
		"ok": true, "ts": time.Now().UnixMilli(), "durationMs": 0,
		"plugins":      map[string]any{"loaded": loaded, "errors": errs, "unavailable": unavailable},
		"configReload": map[string]any{"hotReloadStatus": "active"},
		"channels":     channels, "channelOrder": order, "defaultAgentId": "main",
		"agents":       []any{map[string]any{"agentId": "main", "isDefault": true, "heartbeat": map[string]any{"enabled": false}, "sessions": map[string]any{"count": 0}}},
		"modelRuntime": map[string]any{}, "eventLoop": map[string]any{"degraded": false},
	}
}

// slackMode is the Slack mode in effect: "unconfigured" when a token is
// missing (the channel does not start, whatever the switch says).
func (s *Server) slackMode(fc *fileConfig) string {
	if fc.botTokenSource == "none" || fc.appTokenSource == "none" {
		return slackUnconfigured
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.slack
}

// slackUnconfigured is the mode of a channels.slack without both tokens.
const slackUnconfigured = "unconfigured"

// slackSummary is channels.slack; probe adds the probe verdict.
func (s *Server) slackSummary(fc *fileConfig, probe bool) map[string]any {
	mode := s.slackMode(fc)
	m := map[string]any{"configured": mode != slackUnconfigured, "botTokenSource": fc.botTokenSource, "appTokenSource": fc.appTokenSource,
		"running": true, "lastError": nil}
	switch mode {
	case slackUnconfigured:
		m["running"] = false
	case SlackInvalidAuth:
		m["running"], m["lastError"] = false, "An API error occurred: invalid_auth"
		if probe {
			m["probe"] = map[string]any{"ok": false, "status": 200, "error": "slack error: invalid_auth"}
		}
	case SlackOffline:
		if probe {
			m["probe"] = map[string]any{"ok": false, "status": nil, "error": "getaddrinfo ENOTFOUND slack.com"}
		}
	default:
		if probe {
			m["probe"] = map[string]any{"ok": true, "status": 200}
		}
	}
	return m
}

// channelsStatus is the channels.status payload.
func (s *Server) channelsStatus(probe bool) map[string]any {
	fc := s.config()
	out := map[string]any{"ts": time.Now().UnixMilli(), "channelOrder": []any{}, "channelLabels": map[string]any{},
		"channels": map[string]any{}, "channelAccounts": map[string]any{}, "channelDefaultAccountId": map[string]any{}}
	if !fc.slack {
		return out
	}
	summary := s.slackSummary(fc, probe)
	mode := s.slackMode(fc)
	account := map[string]any{"accountId": "default", "enabled": true, "configured": summary["configured"],
		"running": summary["running"], "lastError": summary["lastError"], "mode": "socket",
		"botTokenSource": fc.botTokenSource, "appTokenSource": fc.appTokenSource}
	switch mode {
	case SlackInvalidAuth:
		account["connected"], account["lifecycle"], account["terminalDisconnect"], account["healthState"] = false, "blocked", true, "terminal-disconnect"
	case SlackOffline:
		account["connected"], account["lifecycle"], account["healthState"] = false, "starting", "connecting"
	case SlackDisconnected:
		account["connected"], account["lifecycle"], account["healthState"] = false, "reconnecting", "disconnected"
	case slackUnconfigured:
		account["connected"], account["lifecycle"], account["healthState"] = false, "stopped", "stopped"
	default:
		account["connected"], account["lifecycle"], account["healthState"] = true, "running", "healthy"
	}
	if p, ok := summary["probe"]; ok {
		account["probe"] = p
	}
	out["channelOrder"] = []any{"slack"}
	out["channelLabels"] = map[string]any{"slack": "Slack"}
	out["channels"] = map[string]any{"slack": summary}
	out["channelAccounts"] = map[string]any{"slack": []any{account}}
	out["channelDefaultAccountId"] = map[string]any{"slack": "default"}
	return out
}

// probeableProviders are the providers the configuration names.
func (s *Server) probeableProviders(fc *fileConfig) []string {
	out := slices.Clone(fc.providers)
	if fc.primaryProvider != "" && !slices.Contains(out, fc.primaryProvider) {
		out = append(out, fc.primaryProvider)
	}
	slices.Sort(out)
	return out
}

// modelsProbe is the models.probe payload.
func (s *Server) modelsProbe(provider string) map[string]any {
	fc := s.config()
	if !slices.Contains(s.probeableProviders(fc), provider) {
		return map[string]any{"provider": provider, "status": "no_model", "error": "no model configured for provider " + provider, "results": []any{}}
	}
	if d := s.cfg.ModelProbeDelay; d > 0 {
		select {
		case <-time.After(d):
		case <-s.crashed:
		}
	}
	s.mu.Lock()
	status := "ok"
	if !s.modelOK {
		status = "auth"
	}
	s.mu.Unlock()
	if s.cfg.ModelProbe != "" {
		status = s.cfg.ModelProbe
	}
	label := "Configured credential · " + provider
	result := map[string]any{"label": label, "status": status, "latencyMs": 1}
	out := map[string]any{"provider": provider, "status": status, "latencyMs": 1, "results": []any{result}}
	if msg, failed := probeErrors[status]; failed {
		result["error"], out["error"] = msg, msg
	}
	// One line per call to the provider, as the real gateway's startup
	// phase logs its model probe: tests count the provider calls by it.
	s.logf("INFO", "model probe of provider %s: %s", provider, status)
	return out
}

// probeErrors are the error texts of the failed probe statuses.
var probeErrors = map[string]string{
	"auth": "Authentication failed.", "rate_limit": "Rate limited.", "billing": "Billing issue.", "timeout": "Timed out.",
	"format": "Unexpected response format.", "unknown": "Probe failed.", "no_model": "No model.",
}

// pluginsList is the plugins.list payload.
func (s *Server) pluginsList() map[string]any {
	fc := s.config()
	s.mu.Lock()
	warnings := slices.Clone(s.plugins)
	s.mu.Unlock()
	state := map[string]string{"memory-core": "loaded"}
	if fc.slack {
		state["slack"] = "loaded"
	}
	for _, w := range warnings {
		state[w.PluginID] = map[string]string{PluginInstallFailed: "error", PluginAuthRequired: "auth-required"}[w.Kind]
	}
	ids := make([]string, 0, len(state))
	for id := range state {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	plugins := []any{}
	for _, id := range ids {
		plugins = append(plugins, map[string]any{"id": id, "name": id, "installed": true, "enabled": state[id] == "loaded",
			"state": state[id], "origin": "bundled", "version": s.cfg.Version, "runtime": map[string]any{"state": state[id]}})
	}
	return map[string]any{"plugins": plugins, "diagnostics": []any{}, "mutationAllowed": false, "generation": 1}
}

// hashHex is lowercase hex SHA-256.
func hashHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// decodeUTF8 reads bytes as a UTF-8 decoder would, each invalid byte
// becoming U+FFFD.
func decodeUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		sb.WriteRune(r)
		b = b[n:]
	}
	return sb.String()
}
