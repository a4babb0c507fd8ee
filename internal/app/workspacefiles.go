package app

import (
	"encoding/json"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/openclaw/occ/internal/occ"
)

var defaultsIDPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ValidWorkspaceFileName reports whether name is one of the four files.
func ValidWorkspaceFileName(name string) bool {
	for _, n := range occ.WorkspaceFileNames {
		if name == n {
			return true
		}
	}
	return false
}

// ValidateWorkspaceContent checks one file's content: well-formed UTF-8, no
// NUL, at most 16 KiB encoded. Whitespace and newlines are kept as given.
func ValidateWorkspaceContent(content, at string) error {
	switch {
	case !utf8.ValidString(content), strings.ContainsRune(content, 0):
		return invalidAt(at, "Workspace file content must be well-formed Unicode without NUL characters.")
	case len(content) > occ.MaxWorkspaceFileBytes:
		return occ.Invalid("Workspace file content is limited to 16 KiB of UTF-8.", occ.Detail{Path: at, Code: occ.DetailTooLong})
	}
	return nil
}

// stageFiles validates initialWorkspaceFiles and the defaults identity and
// returns the encoded files to stage ("" when there are none).
func (a *App) stageFiles(files map[string]string, defaultsID string) (string, error) {
	if defaultsID != "" {
		if !defaultsIDPattern.MatchString(defaultsID) {
			return "", invalidAt("/workspaceDefaultsId", "The workspace defaults identity is a SHA-256 in lower-case hex.")
		}
		if a.opts.WorkspaceDefaultsID != "" && defaultsID != a.opts.WorkspaceDefaultsID {
			return "", occ.E(occ.CodeResourceConflict, "The workspace defaults identity is stale; fetch GET /installation for the current one.")
		}
	}
	if len(files) == 0 {
		return "", nil
	}
	for name, content := range files {
		at := "/initialWorkspaceFiles/" + pointerEscape(name)
		if !ValidWorkspaceFileName(name) {
			return "", invalidAt(at, "Only AGENTS.md, SOUL.md, IDENTITY.md and USER.md can be given.")
		}
		if err := ValidateWorkspaceContent(content, at); err != nil {
			return "", err
		}
	}
	b, err := json.Marshal(files)
	return string(b), err
}
