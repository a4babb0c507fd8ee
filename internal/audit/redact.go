package audit

import (
	"regexp"
	"strings"
)

// Redacted replaces any value that looks like a credential.
const Redacted = "[REDACTED]"

// secretKey matches detail keys whose values may carry credentials or user
// content.
var secretKey = regexp.MustCompile(`(?i)(token|secret|password|passwd|cookie|body|content|message|prompt|credential|authorization|apikey|api_key|private|key$|value)`)

// safeKey matches keys that name or count things and are never secret.
var safeKey = regexp.MustCompile(`(?i)(id|ids|ref|name|kind|count|code|keyid)$`)

// secretValue matches values shaped like known credential formats.
var secretValue = regexp.MustCompile(`(?i)(bearer\s+\S+|\bsk-[a-z0-9_-]{8,}|\bgh[pousr]_[a-z0-9]{16,}|\bxox[abposr]-[a-z0-9-]{8,}|\bocc_[a-z0-9_]{16,}|\bAKIA[0-9A-Z]{16}\b|-----BEGIN [A-Z ]*PRIVATE KEY-----|\beyJ[a-z0-9_-]{10,}\.[a-z0-9_-]{10,})`)

// Redact returns a copy of details with credential-looking keys and values
// replaced. Nested maps and lists are walked.
func Redact(details map[string]any) map[string]any {
	out := make(map[string]any, len(details))
	for k, v := range details {
		if secretKey.MatchString(k) && !safeKey.MatchString(k) {
			out[k] = Redacted
			continue
		}
		out[k] = redactValue(v)
	}
	return out
}

func redactValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return Redact(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactValue(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactValue(e)
		}
		return out
	case string:
		if secretValue.MatchString(x) || strings.Contains(x, "\x00") {
			return Redacted
		}
		return x
	default:
		return v
	}
}
