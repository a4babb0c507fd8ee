package gen

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedIsCurrent regenerates the client from api/openapi.yaml with
// config.yaml and fails when gen.go differs: run
// `go generate ./internal/client/gen` after changing the document.
func TestGeneratedIsCurrent(t *testing.T) {
	cfg, err := os.ReadFile("config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "gen.go")
	tmp := filepath.Join(t.TempDir(), "config.yaml")
	cfg = []byte(strings.Replace(string(cfg), "output: gen.go", "output: "+out, 1))
	if err := os.WriteFile(tmp, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	spec, err := filepath.Abs("../../../api/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "tool", "oapi-codegen", "-config", tmp, spec)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("oapi-codegen: %v\n%s", err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("internal/client/gen/gen.go is stale: run `go generate ./internal/client/gen`")
	}
}
