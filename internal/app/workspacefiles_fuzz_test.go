package app_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
)

// FuzzWorkspaceFileValidators checks the workspace-file name and content
// validators against an independent statement of the rules: exactly the
// four names (byte for byte), content well-formed UTF-8 without NUL of at
// most 16 KiB encoded. A rejection is always INVALID_REQUEST pointing at the
// path it was given. `go test` runs the seeds; scripts/test also runs it as a
// fuzzer for a bounded time (OCC_TEST_FUZZTIME).
func FuzzWorkspaceFileValidators(f *testing.F) {
	for _, seed := range []struct{ name, content string }{
		{"AGENTS.md", "# Agents\n\n  trailing spaces  \n"},
		{"SOUL.md", ""},
		{"IDENTITY.md", "héllo 👋\r\n"},
		{"USER.md", strings.Repeat("a", occ.MaxWorkspaceFileBytes)},
		{"USER.md", strings.Repeat("a", occ.MaxWorkspaceFileBytes+1)},
		{"USER.md", strings.Repeat("é", occ.MaxWorkspaceFileBytes/2) + "a"},
		{"../AGENTS.md", "x"},
		{"%2e%2e%2fAGENTS.md", "x"},
		{"agents.md", "x"},
		{"TOOLS.md", "x"},
		{"AGENTS.md\x00", "a\x00b"},
		{"AGENTS.md/", "\xff\xfe"},
		{" AGENTS.md", "\xed\xa0\x80"}, // an encoded surrogate is not UTF-8
		{"AGENTS.ＭＤ", "\U0010FFFF"},
	} {
		f.Add(seed.name, seed.content)
	}
	four := map[string]bool{"AGENTS.md": true, "SOUL.md": true, "IDENTITY.md": true, "USER.md": true}
	f.Fuzz(func(t *testing.T, name, content string) {
		if got := app.ValidWorkspaceFileName(name); got != four[name] {
			t.Fatalf("ValidWorkspaceFileName(%q) = %v, want %v", name, got, four[name])
		}
		want := wellFormed(content) && len(content) <= occ.MaxWorkspaceFileBytes
		err := app.ValidateWorkspaceContent(content, "/content")
		if (err == nil) != want {
			t.Fatalf("ValidateWorkspaceContent(%d bytes) = %v, want accepted %v", len(content), err, want)
		}
		if err == nil {
			return
		}
		var oe *occ.Error
		if !errors.As(err, &oe) || oe.Code != occ.CodeInvalidRequest {
			t.Fatalf("rejection is %v, want an occ.Error with code %s", err, occ.CodeInvalidRequest)
		}
		if len(oe.Details) != 1 || oe.Details[0].Path != "/content" {
			t.Fatalf("rejection details = %+v, want one at /content", oe.Details)
		}
		if strings.Contains(oe.Message, content) && content != "" {
			t.Fatalf("rejection message repeats the content: %q", oe.Message)
		}
	})
}

// wellFormed decodes by hand (not with unicode/utf8, which the validator
// uses): shortest-form sequences of scalar values, no NUL.
func wellFormed(s string) bool {
	b := []byte(s)
	for i := 0; i < len(b); {
		c := b[i]
		var n int
		var r, min rune
		switch {
		case c == 0:
			return false
		case c < 0x80:
			i++
			continue
		case c&0xE0 == 0xC0:
			n, r, min = 2, rune(c&0x1F), 0x80
		case c&0xF0 == 0xE0:
			n, r, min = 3, rune(c&0x0F), 0x800
		case c&0xF8 == 0xF0:
			n, r, min = 4, rune(c&0x07), 0x10000
		default:
			return false
		}
		if i+n > len(b) {
			return false
		}
		for _, cc := range b[i+1 : i+n] {
			if cc&0xC0 != 0x80 {
				return false
			}
			r = r<<6 | rune(cc&0x3F)
		}
		if r < min || r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF) {
			return false
		}
		i += n
	}
	return true
}
