package fake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ConfigError is a configuration-class start failure: the real gateway exits
// 78 and prints "Gateway failed to start: Invalid config at <path>:" followed
// by one line per issue.
type ConfigError struct {
	Path   string
	Issues []string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("Invalid config at %s:\n%s", e.Path, strings.Join(e.Issues, "\n"))
}

// fileConfig is what the fake reads from openclaw.json.
type fileConfig struct {
	raw    []byte
	exists bool
	doc    map[string]any

	mode, bind, authMode string
	authToken            string
	authPassword         string
	trustedProxies       []string
	userHeader           string
	allowLoopback        bool
	identityScopes       map[string][]string
	allowedOrigins       []string
	allowUsers           []string

	workspace string
	logFile   string
	agents    []string

	slack           bool
	botTokenSource  string
	appTokenSource  string
	providers       []string
	primaryProvider string
}

// loadConfig reads and checks openclaw.json. home is used for the default
// workspace (<home>/.openclaw/workspace) when the file names none; env
// resolves ${VAR} references.
func loadConfig(path, home string, env func(string) string) (*fileConfig, error) {
	c := &fileConfig{authMode: "token", userHeader: "x-forwarded-user"}
	if path != "" {
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			c.raw, c.exists = b, true
		case os.IsNotExist(err):
		default:
			return nil, &ConfigError{Path: path, Issues: []string{err.Error()}}
		}
	}
	c.doc = map[string]any{}
	var issues []string
	if c.exists {
		dec := json.NewDecoder(bytes.NewReader(c.raw))
		dec.UseNumber()
		if err := dec.Decode(&c.doc); err != nil {
			return nil, &ConfigError{Path: path, Issues: []string{"JSON parse error: " + err.Error()}}
		}
	}
	issues = append(issues, bogusKeys("", c.doc)...)

	str := func(at string, v any) string {
		if v == nil {
			return ""
		}
		s, ok := v.(string)
		if !ok {
			issues = append(issues, fmt.Sprintf("%s: Invalid input: expected string, received %s", at, kind(v)))
		}
		return resolveEnv(s, env)
	}
	obj := func(at string, v any) map[string]any {
		if v == nil {
			return nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			issues = append(issues, fmt.Sprintf("%s: Invalid input: expected object, received %s", at, kind(v)))
		}
		return m
	}
	strs := func(at string, v any) []string {
		if v == nil {
			return nil
		}
		a, ok := v.([]any)
		if !ok {
			issues = append(issues, fmt.Sprintf("%s: Invalid input: expected array, received %s", at, kind(v)))
			return nil
		}
		var out []string
		for i, e := range a {
			out = append(out, str(fmt.Sprintf("%s.%d", at, i), e))
		}
		return out
	}

	gw := obj("gateway", c.doc["gateway"])
	c.mode = str("gateway.mode", gw["mode"])
	c.bind = str("gateway.bind", gw["bind"])
	if p, ok := gw["port"]; ok {
		if _, isNum := p.(json.Number); !isNum {
			issues = append(issues, fmt.Sprintf("gateway.port: Invalid input: expected number, received %s", kind(p)))
		}
	}
	auth := obj("gateway.auth", gw["auth"])
	if m := str("gateway.auth.mode", auth["mode"]); m != "" {
		c.authMode = m
	}
	switch c.authMode {
	case "none", "token", "password", "trusted-proxy":
	default:
		issues = append(issues, fmt.Sprintf("gateway.auth.mode: Invalid option: expected one of \"none\"|\"token\"|\"password\"|\"trusted-proxy\", received %q", c.authMode))
	}
	c.authToken = str("gateway.auth.token", auth["token"])
	c.authPassword = str("gateway.auth.password", auth["password"])
	tp := obj("gateway.auth.trustedProxy", auth["trustedProxy"])
	if h := str("gateway.auth.trustedProxy.userHeader", tp["userHeader"]); h != "" {
		c.userHeader = strings.ToLower(h)
	}
	c.allowLoopback, _ = tp["allowLoopback"].(bool)
	c.allowUsers = strs("gateway.auth.trustedProxy.allowUsers", tp["allowUsers"])
	if is := obj("gateway.auth.identityScopes", auth["identityScopes"]); is != nil {
		c.identityScopes = map[string][]string{}
		for user, v := range is {
			c.identityScopes[user] = strs("gateway.auth.identityScopes."+user, v)
		}
	}
	c.trustedProxies = strs("gateway.trustedProxies", gw["trustedProxies"])
	cui := obj("gateway.controlUi", gw["controlUi"])
	c.allowedOrigins = strs("gateway.controlUi.allowedOrigins", cui["allowedOrigins"])

	agents := obj("agents", c.doc["agents"])
	defaults := obj("agents.defaults", agents["defaults"])
	c.workspace = str("agents.defaults.workspace", defaults["workspace"])
	if c.workspace == "" && home != "" {
		c.workspace = filepath.Join(home, ".openclaw", "workspace")
	}
	c.agents = []string{"main"}
	for id := range obj("agents.entries", agents["entries"]) {
		if id != "main" {
			c.agents = append(c.agents, id)
		}
	}
	sort.Strings(c.agents[1:])
	switch m := defaults["model"].(type) {
	case string:
		c.primaryProvider, _, _ = strings.Cut(m, "/")
	case map[string]any:
		p, _ := m["primary"].(string)
		c.primaryProvider, _, _ = strings.Cut(p, "/")
	}
	models := obj("models", c.doc["models"])
	for id := range obj("models.providers", models["providers"]) {
		c.providers = append(c.providers, id)
	}
	sort.Strings(c.providers)

	logging := obj("logging", c.doc["logging"])
	c.logFile = str("logging.file", logging["file"])

	channels := obj("channels", c.doc["channels"])
	if slack := obj("channels.slack", channels["slack"]); slack != nil {
		enabled, set := slack["enabled"].(bool)
		c.slack = !set || enabled
		c.botTokenSource = tokenSource(slack["botToken"])
		c.appTokenSource = tokenSource(slack["appToken"])
	}

	if len(issues) > 0 {
		return nil, &ConfigError{Path: path, Issues: issues}
	}
	return c, nil
}

// startIssues are the checks made at start beyond the schema: the mode
// guard and the auth settings.
func (c *fileConfig) startIssues(token, password string, allowUnconfigured bool) []string {
	var out []string
	if c.mode != "local" && !allowUnconfigured {
		out = append(out, `gateway.mode: the gateway only starts with gateway.mode "local" (or --allow-unconfigured)`)
	}
	switch c.authMode {
	case "token":
		if token == "" {
			out = append(out, "gateway.auth: token auth needs gateway.auth.token or OPENCLAW_GATEWAY_TOKEN")
		}
	case "password":
		if password == "" {
			out = append(out, "gateway.auth: password auth needs gateway.auth.password or OPENCLAW_GATEWAY_PASSWORD")
		}
	case "trusted-proxy":
		if token != "" {
			out = append(out, "gateway.auth: trusted-proxy auth cannot be combined with a shared token")
		}
		if len(c.trustedProxies) == 0 {
			out = append(out, "gateway.trustedProxies: trusted-proxy auth needs at least one trusted proxy")
		}
	}
	return out
}

// bogusKeys rejects, anywhere in the document, object keys starting with
// "bogus": the fake's stand-in for the real schema's unknown-key check
// (`gateway: Unrecognized key: "bogusKey"`), since it does not carry the
// whole schema.
func bogusKeys(at string, v any) []string {
	var out []string
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if strings.HasPrefix(k, "bogus") {
				where := at
				if where == "" {
					where = "<root>"
				}
				out = append(out, fmt.Sprintf("%s: Unrecognized key: %q", where, k))
				continue
			}
			next := k
			if at != "" {
				next = at + "." + k
			}
			out = append(out, bogusKeys(next, t[k])...)
		}
	case []any:
		for i, e := range t {
			out = append(out, bogusKeys(fmt.Sprintf("%s.%d", at, i), e)...)
		}
	}
	return out
}

// tokenSource says where a channel token comes from: "config" for a literal,
// "env" for a ${VAR} reference, "none" when absent.
func tokenSource(v any) string {
	s, _ := v.(string)
	switch {
	case s == "":
		return "none"
	case strings.HasPrefix(s, "${") && strings.HasSuffix(s, "}"):
		return "env"
	default:
		return "config"
	}
}

// resolveEnv replaces a whole-string ${VAR} reference by its value.
func resolveEnv(s string, env func(string) string) string {
	if strings.HasPrefix(s, "${") && strings.HasSuffix(s, "}") && env != nil {
		return env(s[2 : len(s)-1])
	}
	return s
}

// kind names a JSON value's type as the gateway's messages do.
func kind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case nil:
		return "null"
	}
	return "unknown"
}
