package gateway_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports keeps package gateway to the standard library, internal/occ
// and its WebSocket library (ARCHITECTURE.md).
func TestImports(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "github.com/openclaw/occ/internal/gateway").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := strings.Fields(string(out))
	if len(imports) == 0 {
		t.Fatal("go list reported no imports")
	}
	for _, imp := range imports {
		first, _, _ := strings.Cut(imp, "/")
		switch {
		case !strings.Contains(first, "."): // standard library
		case imp == "github.com/openclaw/occ/internal/occ", imp == "github.com/coder/websocket":
		default:
			t.Errorf("package gateway imports %s", imp)
		}
	}
}
