package app

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/openclaw/occ/internal/occ"
)

// MaxNameLength is the longest resource name, in code points.
const MaxNameLength = 200

// validName checks a display name: 1-200 code points, valid UTF-8, no
// leading or trailing whitespace, no control or line-separator characters.
func validName(field, name string) error {
	bad := func(code string) error {
		return occ.Invalid("The name is not valid: use 1-200 printable characters without surrounding spaces.",
			occ.Detail{Path: "/" + field, Code: code})
	}
	n := utf8.RuneCountInString(name)
	switch {
	case n == 0:
		return bad(occ.DetailInvalidValue)
	case n > MaxNameLength:
		return bad(occ.DetailTooLong)
	case !utf8.ValidString(name), strings.TrimSpace(name) != name:
		return bad(occ.DetailInvalidValue)
	}
	for _, r := range name {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return bad(occ.DetailInvalidValue)
		}
	}
	return nil
}
