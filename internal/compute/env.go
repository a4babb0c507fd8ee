package compute

import (
	"sort"
	"strings"
)

// SecretEnvNames returns the names of a revision's secret environment that
// reach a gateway container, sorted: valid variable names, without those
// occ sets itself (HOME, PATH, OPENCLAW_*).
func SecretEnvNames(env map[string]string) []string {
	var out []string
	for k := range env {
		if validEnvName(k) && k != "HOME" && k != "PATH" && !strings.HasPrefix(k, "OPENCLAW_") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// validEnvName accepts [A-Za-z_][A-Za-z0-9_]* up to 253 characters.
func validEnvName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// WantsChannels reports whether a Configuration document configures any
// channel; when none, the gateway is told to skip channels (faster start).
func WantsChannels(doc map[string]any) bool {
	ch, _ := doc["channels"].(map[string]any)
	return len(ch) > 0
}
