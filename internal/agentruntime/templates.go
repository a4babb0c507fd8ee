package agentruntime

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// workspaceTemplates are the default workspace files whose content occ
// compares against (the gateway also seeds BOOTSTRAP.md, which is not one of
// them).
var workspaceTemplates = []string{"AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md"}

// templateDir is where the openclaw package keeps its workspace templates,
// relative to the package (the gateway's own search path starts there).
var templateDir = filepath.Join("docs", "reference", "templates")

// WorkspaceTemplates returns the four default workspace files of the runtime
// (AGENTS.md, SOUL.md, IDENTITY.md, USER.md), keyed by file name, exactly as
// the gateway writes them into a new workspace: read from
// <OpenClawPkg>/docs/reference/templates/ and rendered the way openclaw
// renders them (the YAML front-matter block and the whitespace after it
// removed, nothing else changed). For openclaw 2026.9.6 their SHA-256
// digests are the ones listed in openclaw-runtime.md §4.
func WorkspaceTemplates(rt Runtime) (map[string][]byte, error) {
	if rt.OpenClawPkg == "" {
		return nil, fmt.Errorf("workspace templates: runtime has no openclaw package")
	}
	out := make(map[string][]byte, len(workspaceTemplates))
	for _, name := range workspaceTemplates {
		path := filepath.Join(rt.OpenClawPkg, templateDir, name)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("workspace template %s: %w", name, err)
		}
		out[name] = renderTemplate(b)
	}
	return out, nil
}

// Front-matter delimiters, as openclaw 2026.9.6 matches them (its
// FRONTMATTER_OPENING_DELIMITER and FRONTMATTER_CLOSING_DELIMITER): "---"
// and trailing blanks on a line of its own, the closing one possibly at the
// very end.
var (
	frontMatterOpen  = regexp.MustCompile(`^---[\t\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]*\n`)
	frontMatterClose = regexp.MustCompile(`(?:^|\n)---[\t\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]*(?:\n|$)`)
)

// renderTemplate does what openclaw's stripFrontMatter does to a template
// before writing it into a workspace: normalise a leading byte-order mark
// and CR/CRLF line ends, cut a complete front-matter block, and drop the
// whitespace that follows it. A template without a complete front-matter
// block is returned unchanged (not normalised), as openclaw does.
func renderTemplate(b []byte) []byte {
	s := strings.TrimPrefix(string(b), "\ufeff")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	open := frontMatterOpen.FindStringIndex(s)
	if open == nil {
		return b
	}
	rest := s[open[1]:]
	close := frontMatterClose.FindStringIndex(rest)
	if close == nil {
		return b
	}
	return []byte(strings.TrimLeftFunc(rest[close[1]:], isJSSpace))
}

// isJSSpace reports whether r is whitespace in a JavaScript regular
// expression (\s): the ECMAScript WhiteSpace and LineTerminator characters.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', '\u00a0', '\u1680', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff':
		return true
	}
	return r >= '\u2000' && r <= '\u200a'
}
