package gateway_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/gateway"
)

func TestRenderTemplate(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"front matter and blank line", "---\nsummary: \"x\"\nread_when:\n  - y\n---\n\n# T\n\nbody\n", "# T\n\nbody\n"},
		{"front matter without blank line", "---\na: b\n---\n# T\n", "# T\n"},
		{"all whitespace after the block goes", "---\na: b\n---\n\n \t\n\u00a0# T\n", "# T\n"},
		{"blanks after the delimiters", "--- \t\na: b\n---  \n\n# T\n", "# T\n"},
		{"empty block", "---\n---\n\n# T\n", "# T\n"},
		{"closing delimiter ends the text", "---\na: b\n---", ""},
		{"dashes inside the block", "---\na: ---x\n----\n---\n# T\n", "# T\n"},
		{"BOM and CRLF normalised", "\ufeff---\r\na: b\r\n---\r\n\r\n# T\r\nx\ry\n", "# T\nx\ny\n"},
		{"no front matter", "# T\n---\nx\n", "# T\n---\nx\n"},
		{"no front matter, CRLF kept", "# T\r\n", "# T\r\n"},
		{"unterminated front matter", "---\na: b\n# T\n", "---\na: b\n# T\n"},
		{"opening not alone on its line", "---x\na: b\n---\n# T\n", "---x\na: b\n---\n# T\n"},
		{"trailing whitespace kept", "---\na: b\n---\n\n# T  \n\t\n", "# T  \n\t\n"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := string(gateway.RenderTemplate([]byte(tt.in))); got != tt.want {
				t.Errorf("RenderTemplate(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestDefaultsID(t *testing.T) {
	t.Parallel()
	// Expected values computed independently with Node's JSON.stringify over
	// the [name, content] pairs, hashed with SHA-256.
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"all absent", nil, "2c7102c15da4b7677e69cd27a86c66275753e07027175c7d6fbbafceecbea63f"},
		{"simple", map[string]string{"AGENTS.md": "# A\n", "SOUL.md": "soul", "IDENTITY.md": "", "USER.md": "u\n"},
			"3be1f5dbf092c71fa0fe33bf114bec2c5ff8b9b4164698a6891716b433a6e976"},
		{"escapes as JSON.stringify", map[string]string{
			"AGENTS.md":   "quote \" backslash \\ slash / tab\t cr\r nl\n bs\b ff\f ctl\x01\x1f del\x7f",
			"SOUL.md":     "<>&'",
			"IDENTITY.md": "line sep \u2028 para \u2029 é — ✓ 😀",
			"USER.md":     "  trailing  \n\n",
		}, "e5f718026c5835e4a1d37c760fbd4bb10f45f36ebe988739afe1f5c95adeeb41"},
		{"invalid UTF-8 read as U+FFFD", map[string]string{"AGENTS.md": "a\xffb"},
			"dac8dd0ae9f5d14579715633b10e4068aa7e145bf18b275612cc216b6030d967"},
		{"other names ignored", map[string]string{"TOOLS.md": "x", "BOOTSTRAP.md": "y"},
			"2c7102c15da4b7677e69cd27a86c66275753e07027175c7d6fbbafceecbea63f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := map[string][]byte{}
			for k, v := range tt.files {
				files[k] = []byte(v)
			}
			if got := gateway.DefaultsID(files); got != tt.want {
				t.Errorf("DefaultsID = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestPinnedDefaults(t *testing.T) {
	t.Parallel()
	// reference/openclaw-runtime.md §4, verified against openclaw@2026.9.6.
	want := map[string]string{
		"AGENTS.md":   "1e17784e422c0e47e44c5214d0b37092f7b378bb2d3746976032be3075203c88",
		"SOUL.md":     "4f9042f259b076e429d0f01ce39340030f47ea5b7f5befe306296c36baf1f60f",
		"IDENTITY.md": "59b223766c8dd978162044e333a684c72e22af753d1ba3dc3bff4b2d915c54e2",
		"USER.md":     "46e0d8c937df7b104de97a23c58537292672654194879ca9f76b02075e022555",
	}
	if len(gateway.PinnedDefaultDigests) != len(want) {
		t.Fatalf("PinnedDefaultDigests has %d entries", len(gateway.PinnedDefaultDigests))
	}
	for name, d := range want {
		if gateway.PinnedDefaultDigests[name] != d {
			t.Errorf("%s: %s, want %s", name, gateway.PinnedDefaultDigests[name], d)
		}
	}
	if strings.Join(gateway.DefaultFileNames, ",") != "AGENTS.md,SOUL.md,IDENTITY.md,USER.md" {
		t.Errorf("order %v", gateway.DefaultFileNames)
	}
	if len(gateway.PinnedDefaultsID) != 64 || strings.ToLower(gateway.PinnedDefaultsID) != gateway.PinnedDefaultsID {
		t.Errorf("PinnedDefaultsID %q", gateway.PinnedDefaultsID)
	}
}

func TestReadDefaults(t *testing.T) {
	t.Parallel()
	pkg := t.TempDir()
	dir := filepath.Join(pkg, filepath.FromSlash(gateway.TemplatesDir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rendered := map[string]string{}
	for _, name := range append(gateway.DefaultFileNames, "BOOTSTRAP.md", "TOOLS.md") {
		body := "# " + name + "\n\ntext  \n"
		rendered[name] = body
		tmpl := "---\nsummary: \"Workspace template for " + name + "\"\nread_when:\n  - Bootstrapping\n---\n\n" + body
		if err := os.WriteFile(filepath.Join(dir, name), []byte(tmpl), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, err := gateway.ReadDefaults(pkg)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 {
		t.Errorf("read %d files, want the four defaults", len(files))
	}
	want := map[string][]byte{}
	for _, name := range gateway.DefaultFileNames {
		if string(files[name]) != rendered[name] {
			t.Errorf("%s = %q, want %q", name, files[name], rendered[name])
		}
		want[name] = []byte(rendered[name])
	}
	if gateway.DefaultsID(files) != gateway.DefaultsID(want) {
		t.Error("identity of read defaults differs from the identity of their rendering")
	}
	// They are not the pinned release's files.
	if err := gateway.CheckPinnedDefaults(files); err == nil || !strings.Contains(err.Error(), "AGENTS.md") {
		t.Errorf("CheckPinnedDefaults = %v", err)
	}
	delete(files, "SOUL.md")
	if err := gateway.CheckPinnedDefaults(files); err == nil {
		t.Error("CheckPinnedDefaults accepted a missing file")
	}

	// A package without templates.
	if _, err := gateway.ReadDefaults(t.TempDir()); err == nil {
		t.Error("ReadDefaults of an empty directory succeeded")
	}
}
