package servertest

import (
	"strings"
	"testing"
)

// outputField returns the value of "name:  value" in a command's table output.
func OutputField(t *testing.T, out, name string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %q in:\n%s", name, out)
	return ""
}
