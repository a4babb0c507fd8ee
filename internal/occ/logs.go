package occ

// Runtime log reads (GET …/deployments/{rev}/runtime/logs): the last
// tailLines lines of the revision's gateway output, 1 to
// MaxRuntimeLogLines, DefaultRuntimeLogLines when the caller names none.
const (
	DefaultRuntimeLogLines = 200
	MaxRuntimeLogLines     = 1000
)

// Redacted replaces every secret value (of the revision's bound Secrets,
// and the gateway's token or password) in runtime log lines.
const Redacted = "[REDACTED]"
