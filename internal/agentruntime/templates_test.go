package agentruntime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRenderTemplate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"front matter and blank line", "---\nsummary: x\n---\n\n# Title\n\nBody\n", "# Title\n\nBody\n"},
		{"all whitespace after the block", "---\na: b\n---\n\n \t\n\n# T\n", "# T\n"},
		{"no blank line", "---\na: b\n---\n# T\n", "# T\n"},
		{"trailing blanks on delimiters", "--- \t\na: b\n---  \n\n# T\n", "# T\n"},
		{"CRLF", "---\r\na: b\r\n---\r\n\r\n# T\r\nx\r\n", "# T\nx\n"},
		{"byte-order mark", "\ufeff---\na: b\n---\n\n# T\n", "# T\n"},
		{"empty block", "---\n---\n# T\n", "# T\n"},
		{"closing delimiter at the end", "---\na: b\n---", ""},
		{"no front matter", "# T\r\n---\nx\n", "# T\r\n---\nx\n"},
		{"unterminated front matter", "---\na: b\n# T\n", "---\na: b\n# T\n"},
		{"opening not on the first line", "\n---\na: b\n---\n# T\n", "\n---\na: b\n---\n# T\n"},
		{"a longer dash line is not a delimiter", "---\na: b\n----\nc\n---\n# T\n", "# T\n"},
		{"non-breaking space stripped as JavaScript does", "---\n---\n\u00a0\u2003# T\n", "# T\n"},
	} {
		if got := string(renderTemplate([]byte(tc.in))); got != tc.want {
			t.Errorf("%s: renderTemplate(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestWorkspaceTemplatesErrors(t *testing.T) {
	t.Parallel()
	if _, err := WorkspaceTemplates(Runtime{}); err == nil {
		t.Error("WorkspaceTemplates of an empty Runtime succeeded")
	}
	pkg := t.TempDir()
	dir := filepath.Join(pkg, "docs", "reference", "templates")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"AGENTS.md", "SOUL.md", "USER.md"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("# "+name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := WorkspaceTemplates(Runtime{OpenClawPkg: pkg})
	if err == nil || !strings.Contains(err.Error(), "workspace template IDENTITY.md") {
		t.Fatalf("WorkspaceTemplates without IDENTITY.md: %v", err)
	}
}
