package gateway

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// KeyClass says why a Configuration may not set a native key.
type KeyClass string

// Key classes of the owned-keys table.
const (
	// KeyOwned: occ sets the key when it renders openclaw.json.
	KeyOwned KeyClass = "owned"
	// KeyForbidden: nobody sets the key; the gateway keeps its default.
	KeyForbidden KeyClass = "forbidden"
)

// KeyRule is one row of the table of native openclaw.json keys a
// Configuration may not set.
type KeyRule struct {
	// Pattern is a dotted key path: "*" is any one object key or array
	// index, and a leading "**" any number of keys, none included (so
	// "**.cwd" is a cwd key at any depth). The last segment is a literal
	// key name.
	Pattern string
	Class   KeyClass
	// Reason says what occ keeps for itself; it ends the refusal message.
	Reason string
	// Example is a key the rule refuses (tests refuse each one): a key of
	// the pinned gateway's schema, or for agents.list and plugins.installs
	// the form older gateways wrote.
	Example string
}

// Reasons shared by several rows.
const (
	reasonHostFile  = "it names a file or directory outside the Agent's own directory"
	reasonHostCode  = "it loads code or data from outside the Agent's own directory"
	reasonProcEnv   = "occ alone sets the environment of the gateway and of the processes it starts"
	reasonHostTrust = "it trusts keys and hosts outside the Agent's own directory"
)

// keyRules is the one statement of the native keys occ owns or forbids, by
// what they would take from occ: the gateway's network exposure and
// authentication, files outside the Agent's directory, the process
// environment, and plugin installs. Configuration create and update refuse
// a document that sets one (400 naming the key), deploy admission and the
// worker's dispatch refuse a revision whose snapshot does (a document
// stored before a rule existed), and RenderConfig removes them all before it
// sets the owned ones. The rows were drawn from the pinned gateway's
// configuration schema (`openclaw config schema`, 2026.9.6) and
// reference/openclaw-runtime.md §1.2. A Configuration may still name
// programs the Agent runs (an MCP server's command, as the exec tool runs
// one), but not where they run (cwd) nor their environment (env: at any
// depth, so also a sandbox container's and secrets.defaults.env).
var keyRules = []KeyRule{
	// Network exposure and authentication: the gateway listens on a loopback
	// port occ chooses, with occ's credential, behind occ's proxy only.
	{"gateway.mode", KeyOwned, "occ runs every gateway in local mode", "gateway.mode"},
	{"gateway.bind", KeyOwned, "occ binds every gateway to loopback", "gateway.bind"},
	{"gateway.port", KeyOwned, "occ allocates the gateway's port", "gateway.port"},
	{"gateway.auth", KeyOwned, "occ chooses how the gateway authenticates and holds its credentials", "gateway.auth.mode"},
	{"gateway.trustedProxies", KeyOwned, "only occ's own proxy may assert who is connecting", "gateway.trustedProxies"},
	{"gateway.controlUi", KeyOwned, "occ serves the Control UI through its native admin proxy, for the origin it derives", "gateway.controlUi.allowedOrigins"},
	{"gateway.customBindHost", KeyForbidden, "occ binds every gateway to loopback", "gateway.customBindHost"},
	{"gateway.publicOrigin", KeyForbidden, "occ owns the addresses at which an Agent is reached", "gateway.publicOrigin"},
	{"gateway.portals", KeyForbidden, "it publishes the gateway beyond occ's routing", "gateway.portals"},
	{"gateway.tailscale", KeyForbidden, "it publishes the gateway on a tailnet or the internet", "gateway.tailscale.mode"},
	{"gateway.allowRealIpFallback", KeyForbidden, "only occ's own proxy may assert who is connecting", "gateway.allowRealIpFallback"},
	{"gateway.tls", KeyForbidden, "occ terminates TLS; the gateway's listener is loopback only", "gateway.tls.certPath"},
	{"gateway.remote", KeyForbidden, "occ runs every gateway in local mode", "gateway.remote.url"},
	{"gateway.nodes.pairing", KeyForbidden, "it approves devices by network address without occ", "gateway.nodes.pairing.autoApproveCidrs"},
	{"discovery", KeyForbidden, "it advertises the gateway on the network", "discovery.mdns"},
	{"desktop.host", KeyForbidden, "it serves a desktop from the host", "desktop.host.enabled"},
	{"proxy", KeyForbidden, "the egress proxy is the installation's, like HTTP_PROXY", "proxy.proxyUrl"},

	// Files: the gateway reads and writes only its state directory, its
	// workspace and its log, all in the Agent's directory.
	{"agents.defaults.workspace", KeyOwned, "the Agent's workspace is in the Agent's own directory", "agents.defaults.workspace"},
	{"logging.file", KeyOwned, "the gateway's log is in the Agent's own directory", "logging.file"},
	{"agents.entries.*.workspace", KeyForbidden, reasonHostFile, "agents.entries.main.workspace"},
	{"agents.entries.*.agentDir", KeyForbidden, reasonHostFile, "agents.entries.main.agentDir"},
	{"agents.list.*.workspace", KeyForbidden, reasonHostFile, "agents.list.0.workspace"},
	{"agents.list.*.agentDir", KeyForbidden, reasonHostFile, "agents.list.0.agentDir"},
	{"agents.defaults.repoRoot", KeyForbidden, reasonHostFile, "agents.defaults.repoRoot"},
	{"worktreeRoot", KeyForbidden, reasonHostFile, "worktreeRoot"},
	{"session.store", KeyForbidden, reasonHostFile, "session.store"},
	{"**.$include", KeyForbidden, reasonHostFile, "agents.$include"},
	{"**.cwd", KeyForbidden, reasonHostFile, "mcp.servers.docs.cwd"},
	{"**.workspaceRoot", KeyForbidden, reasonHostFile, "agents.defaults.sandbox.workspaceRoot"},
	{"**.binds", KeyForbidden, reasonHostFile, "agents.entries.main.sandbox.browser.binds"},
	{"**.seccompProfile", KeyForbidden, reasonHostFile, "agents.defaults.sandbox.docker.seccompProfile"},
	{"**.apparmorProfile", KeyForbidden, reasonHostFile, "agents.defaults.sandbox.docker.apparmorProfile"},
	{"**.identityFile", KeyForbidden, reasonHostTrust, "agents.defaults.sandbox.ssh.identityFile"},
	{"**.certificateFile", KeyForbidden, reasonHostTrust, "agents.defaults.sandbox.ssh.certificateFile"},
	{"**.knownHostsFile", KeyForbidden, reasonHostTrust, "agents.defaults.sandbox.ssh.knownHostsFile"},
	{"**.tokenFile", KeyForbidden, reasonHostFile, "channels.telegram.accounts.ops.tokenFile"},
	{"**.secretFile", KeyForbidden, reasonHostFile, "channels.line.secretFile"},
	{"**.botSecretFile", KeyForbidden, reasonHostFile, "channels.nextcloud-talk.botSecretFile"},
	{"**.passwordFile", KeyForbidden, reasonHostFile, "channels.irc.nickserv.passwordFile"},
	{"**.apiPasswordFile", KeyForbidden, reasonHostFile, "channels.bluebubbles.apiPasswordFile"},
	{"**.serviceAccountFile", KeyForbidden, reasonHostFile, "channels.googlechat.serviceAccountFile"},
	{"**.webhookCertPath", KeyForbidden, reasonHostFile, "channels.telegram.webhookCertPath"},
	{"**.certificatePath", KeyForbidden, reasonHostFile, "channels.msteams.certificatePath"},
	{"**.dbPath", KeyForbidden, reasonHostFile, "channels.imessage.dbPath"},
	{"**.stateDir", KeyForbidden, reasonHostFile, "channels.reef.stateDir"},
	{"**.authDir", KeyForbidden, reasonHostFile, "channels.whatsapp.accounts.main.authDir"},
	{"**.configPath", KeyForbidden, reasonHostFile, "channels.signal.transport.configPath"},
	{"**.socketPath", KeyForbidden, reasonHostFile, "channels.signal.transport.socketPath"},
	{"**.prefsPath", KeyForbidden, reasonHostFile, "agents.entries.main.tts.prefsPath"},
	{"**.transcriptDir", KeyForbidden, reasonHostFile, "plugins.entries.active-memory.config.transcriptDir"},
	{"**.userDataDir", KeyForbidden, reasonHostFile, "browser.profiles.work.userDataDir"},
	{"**.extraPaths", KeyForbidden, reasonHostFile, "memory.search.extraPaths"},
	{"plugins.entries.memory-wiki.config.vault.path", KeyForbidden, reasonHostFile, "plugins.entries.memory-wiki.config.vault.path"},
	{"plugins.entries.memory-wiki.config.unsafeLocal", KeyForbidden, reasonHostFile, "plugins.entries.memory-wiki.config.unsafeLocal.paths"},
	{"**.modelPath", KeyForbidden, reasonHostCode, "memory.search.local.modelPath"},
	{"**.extensionPath", KeyForbidden, reasonHostCode, "memory.search.store.vector.extensionPath"},
	{"**.extraDirs", KeyForbidden, reasonHostCode, "skills.load.extraDirs"},
	{"**.transformsDir", KeyForbidden, reasonHostCode, "hooks.transformsDir"},

	// Process environment.
	{"**.env", KeyForbidden, reasonProcEnv, "env.vars.LD_PRELOAD"},
	{"**.pathPrepend", KeyForbidden, reasonProcEnv, "tools.exec.pathPrepend"},
	{"**.safeBinTrustedDirs", KeyForbidden, reasonHostCode, "tools.exec.safeBinTrustedDirs"},
	{"gateway.terminal", KeyForbidden, "it opens a host shell with the gateway's environment", "gateway.terminal.shell"},
	{"secrets.providers", KeyForbidden, "occ delivers Secrets through secretBindings; file and exec providers read the host", "secrets.providers.vault.command"},
	{"models.providers.*.localService", KeyForbidden, "it starts a model server on the host with its own environment", "models.providers.local.localService.command"},

	// Plugin installs: occ installs the runtime and the selected plugins.
	{"plugins.installs", KeyForbidden, "occ installs the Agent's plugins from its catalogs", "plugins.installs"},
	{"plugins.load", KeyForbidden, "occ installs the Agent's plugins from its catalogs", "plugins.load.paths"},
	{"security.installPolicy", KeyForbidden, "the installation decides how plugins and skills are installed", "security.installPolicy.exec.command"},
	{"update", KeyOwned, "occ pins the runtime version; the gateway never updates itself", "update.channel"},
	{"models.catalogRefresh.enabled", KeyOwned, "occ starts gateways without catalog refreshes", "models.catalogRefresh.enabled"},
}

// KeyRules returns the table of native keys occ owns or forbids.
func KeyRules() []KeyRule { return slices.Clone(keyRules) }

// KeyRefusal is a key of a document that a Configuration may not set.
type KeyRefusal struct {
	// Pointer is the key's RFC 6901 JSON Pointer in the document.
	Pointer string
	Rule    KeyRule
}

// Message is the fixed message of the refusal: it names the key (the
// rule's pattern) and why occ keeps it, never the key's value.
func (r KeyRefusal) Message() string {
	key, anyDepth := strings.CutPrefix(r.Rule.Pattern, "**.")
	if anyDepth {
		key += " (at any depth)"
	}
	if r.Rule.Class == KeyOwned {
		return fmt.Sprintf("The configuration key %s is set by occ: %s.", key, r.Rule.Reason)
	}
	return fmt.Sprintf("The configuration key %s is not allowed: %s.", key, r.Rule.Reason)
}

// RefusedKey returns the first key of doc (keys in sorted order, depth
// first) that the table refuses, or nil when there is none. The key's
// value, whatever it is (null included), does not matter.
func RefusedKey(doc map[string]any) *KeyRefusal {
	var out *KeyRefusal
	walkKeys(doc, nil, func(path []string, _ map[string]any, rule KeyRule) bool {
		out = &KeyRefusal{Pointer: pointer(path), Rule: rule}
		return false
	})
	return out
}

// removeRefused deletes from doc, in place, every key the table refuses.
func removeRefused(doc map[string]any) {
	walkKeys(doc, nil, func(path []string, obj map[string]any, _ KeyRule) bool {
		delete(obj, path[len(path)-1])
		return true
	})
}

// walkKeys calls fn for each object key under v whose path matches a rule,
// without descending into it, until fn returns false; it reports whether
// the walk went to the end.
func walkKeys(v any, path []string, fn func(path []string, obj map[string]any, rule KeyRule) bool) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			p := append(slices.Clip(path), k)
			if rule, ok := ruleFor(p); ok {
				if !fn(p, x, rule) {
					return false
				}
				continue
			}
			if !walkKeys(x[k], p, fn) {
				return false
			}
		}
	case []any:
		for i, e := range x {
			if !walkKeys(e, append(slices.Clip(path), strconv.Itoa(i)), fn) {
				return false
			}
		}
	}
	return true
}

// ruleFor returns the first rule matching a key path.
func ruleFor(path []string) (KeyRule, bool) {
	for _, r := range keyRules {
		if matches(strings.Split(r.Pattern, "."), path) {
			return r, true
		}
	}
	return KeyRule{}, false
}

func matches(pattern, path []string) bool {
	if pattern[0] == "**" {
		pattern = pattern[1:]
		if len(path) < len(pattern) {
			return false
		}
		path = path[len(path)-len(pattern):]
	}
	if len(pattern) != len(path) {
		return false
	}
	for i, seg := range pattern {
		if seg != "*" && seg != path[i] {
			return false
		}
	}
	return true
}

// pointer is the RFC 6901 JSON Pointer of a key path.
func pointer(path []string) string {
	var b strings.Builder
	for _, k := range path {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"))
	}
	return b.String()
}
