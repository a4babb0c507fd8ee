package servertest

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// realUID is the real user ID of a process.
func RealUID(t *testing.T, pid string) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%s/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if ids, ok := strings.CutPrefix(l, "Uid:"); ok {
			return strings.Fields(ids)[0]
		}
	}
	t.Fatalf("no Uid in /proc/%s/status", pid)
	return ""
}
