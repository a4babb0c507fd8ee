package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// DefaultFileNames are the four workspace files occ manages, in the order
// of the defaults identity.
var DefaultFileNames = []string{"AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md"}

// TemplatesDir is where an installed openclaw package keeps its workspace
// templates, relative to the package directory (<pkg>).
const TemplatesDir = "docs/reference/templates"

// PinnedDefaultDigests are the SHA-256 digests of the rendered default files
// of the pinned version (reference/openclaw-runtime.md §4, VERIFIED).
var PinnedDefaultDigests = map[string]string{
	"AGENTS.md":   "1e17784e422c0e47e44c5214d0b37092f7b378bb2d3746976032be3075203c88",
	"SOUL.md":     "4f9042f259b076e429d0f01ce39340030f47ea5b7f5befe306296c36baf1f60f",
	"IDENTITY.md": "59b223766c8dd978162044e333a684c72e22af753d1ba3dc3bff4b2d915c54e2",
	"USER.md":     "46e0d8c937df7b104de97a23c58537292672654194879ca9f76b02075e022555",
}

// PinnedDefaultsID is DefaultsID of the four rendered defaults of the pinned
// version, computed from the templates of the npm package openclaw@2026.9.6
// (whose rendered files have exactly PinnedDefaultDigests).
const PinnedDefaultsID = "c017a28c6f49a9f34629782addcf4d4fe704ee7cb8e068efc6447016ebe22699"

// RenderTemplate renders a workspace template the way the pinned gateway
// does before writing it into a workspace (checked against the package's
// own code): when the text starts with a complete front-matter block, the
// text is normalised (a leading byte-order mark removed, CRLF and CR turned
// into LF), the block is cut — an opening line "---" and a closing line
// "---" (each possibly followed by blanks; the closing one may end the text)
// — and all whitespace after it is dropped. Nothing else changes; a template
// without a complete block is returned exactly as given.
func RenderTemplate(tmpl []byte) []byte {
	s := strings.TrimPrefix(string(tmpl), "\ufeff")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	first, rest, ok := strings.Cut(s, "\n")
	if !ok || !isDelimiterLine(first) {
		return tmpl
	}
	for {
		line, after, more := strings.Cut(rest, "\n")
		if isDelimiterLine(line) {
			return []byte(strings.TrimLeftFunc(after, isJSSpace))
		}
		if !more {
			return tmpl // unterminated block
		}
		rest = after
	}
}

// isDelimiterLine reports whether a line is "---" followed only by blanks.
func isDelimiterLine(line string) bool {
	rest, ok := strings.CutPrefix(line, "---")
	return ok && strings.TrimLeftFunc(rest, isJSSpace) == ""
}

// isJSSpace reports whether r is whitespace for a JavaScript regular
// expression (\s).
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', '\u00a0', '\u1680', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff':
		return true
	}
	return r >= '\u2000' && r <= '\u200a'
}

// ReadDefaults reads the four default templates from an installed openclaw
// package directory (<pkg>/docs/reference/templates) and renders them.
func ReadDefaults(pkgDir string) (map[string][]byte, error) {
	out := make(map[string][]byte, len(DefaultFileNames))
	for _, name := range DefaultFileNames {
		b, err := os.ReadFile(filepath.Join(pkgDir, TemplatesDir, name))
		if err != nil {
			return nil, fmt.Errorf("workspace defaults: %w", err)
		}
		out[name] = RenderTemplate(b)
	}
	return out, nil
}

// CheckPinnedDefaults reports whether files (rendered defaults, e.g. from
// ReadDefaults) are exactly those of the pinned version, naming the first
// file that differs.
func CheckPinnedDefaults(files map[string][]byte) error {
	for _, name := range DefaultFileNames {
		b, ok := files[name]
		if !ok {
			return fmt.Errorf("workspace defaults: %s is missing", name)
		}
		if got := HashContent(b); got != PinnedDefaultDigests[name] {
			return fmt.Errorf("workspace defaults: %s has SHA-256 %s, the pinned OpenClaw %s has %s", name, got, Version, PinnedDefaultDigests[name])
		}
	}
	return nil
}

// DefaultsID is the workspace defaults identity (workspaceDefaultsId): the
// lowercase hex SHA-256 of the UTF-8 JSON text of the array of [name,
// content] pairs of AGENTS.md, SOUL.md, IDENTITY.md and USER.md, in that
// order, encoded exactly as JavaScript's JSON.stringify does (no spaces; only
// '"', '\\' and control characters escaped), so the reference implementation
// computes the same value. A file absent from files counts as empty;
// invalid UTF-8 counts as U+FFFD, as a UTF-8 decoder would read it.
func DefaultsID(files map[string][]byte) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, name := range DefaultFileNames {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('[')
		writeJSString(&b, []byte(name))
		b.WriteByte(',')
		writeJSString(&b, files[name])
		b.WriteByte(']')
	}
	b.WriteByte(']')
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// writeJSString writes s as JSON.stringify would write the string a UTF-8
// decoder makes of s.
func writeJSString(b *strings.Builder, s []byte) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		s = s[size:]
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[r>>4])
			b.WriteByte(hexDigits[r&0xf])
		default:
			b.WriteRune(r) // utf8.RuneError for invalid bytes: U+FFFD
		}
	}
	b.WriteByte('"')
}
