package gatewaytest

import (
	"strconv"
	"strings"
)

// DocAt is a configuration document that sets the dotted key path to v; a
// numeric segment after the first is an array index.
func DocAt(path string, v any) map[string]any {
	segs := strings.Split(path, ".")
	for i := len(segs) - 1; i >= 0; i-- {
		if n, err := strconv.Atoi(segs[i]); err == nil && i > 0 {
			arr := make([]any, n+1)
			arr[n] = v
			v = arr
			continue
		}
		v = map[string]any{segs[i]: v}
	}
	return v.(map[string]any)
}

// Merge adds src into dst: objects are merged, anything else replaced.
func Merge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				Merge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// AllowedKeys are native keys, by dotted path, that a Configuration may
// set although they sit beside keys occ owns or forbids
// (gateway.KeyRules).
func AllowedKeys() map[string]any {
	return map[string]any{
		"agents.defaults.model":                             "openai/gpt-5",
		"agents.defaults.sandbox.mode":                      "off",
		"agents.defaults.sandbox.docker.image":              "openclaw-sandbox:bookworm-slim",
		"agents.entries.main.model":                         "anthropic/claude",
		"agents.entries.main.identity.name":                 "Samantha",
		"agents.entries.main.memory.search.extraPathsLimit": 3,
		"bindings.0.agentId":                                "main",
		"channels.slack.enabled":                            true,
		"channels.slack.botToken":                           "${SLACK_BOT_TOKEN}",
		"channels.slack.webhookPath":                        "/slack/events",
		"channels.clickclack.workspace":                     "support-team",
		"channels.telegram.accounts.ops.webhookUrl":         "https://example.test/tg",
		"gateway.reload.mode":                               "hybrid",
		"gateway.http.endpoints.chatCompletions.enabled":    true,
		"hooks.path":                                     "/hooks",
		"logging.level":                                  "debug",
		"mcp.servers.docs.command":                       "npx",
		"models.providers.fakeprov.baseUrl":              "http://127.0.0.1:9/v1",
		"models.catalogRefresh.intervalMs":               5,
		"plugins.entries.slack.enabled":                  true,
		"plugins.entries.memory-wiki.config.vault.scope": "agent",
		"secrets.egressProxy.enabled":                    false,
		"tools.fs.workspaceOnly":                         true,
	}
}

// AllowedDocument is one document setting every key of AllowedKeys.
func AllowedDocument() map[string]any {
	doc := map[string]any{}
	for path, v := range AllowedKeys() {
		Merge(doc, DocAt(path, v))
	}
	return doc
}
