package app

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/openclaw/occ/internal/occ"
)

// MaxNameLength is the longest resource name, in code points.
const MaxNameLength = 200

// validName checks a display name: 1-200 code points of valid UTF-8 in
// Unicode normal form C, no leading or trailing whitespace, no control,
// line-separator, invisible or formatting characters (zero-width, bidi
// overrides, variation selectors, spaces other than U+0020), and letters
// of one script, or of the Han-based combinations of UTS #39's highly
// restrictive profile (with Latin). So two names that look the same
// ("default" with a Cyrillic е, a zero-width space, an NFD "é") cannot
// name two resources: the look-alike is refused, each with its own
// message.
func validName(field, name string) error {
	bad := func(code, msg string) error {
		return occ.Invalid(msg, occ.Detail{Path: "/" + field, Code: code})
	}
	const printable = "The name is not valid: use 1-200 printable characters without surrounding spaces."
	n := utf8.RuneCountInString(name)
	switch {
	case n == 0:
		return bad(occ.DetailInvalidValue, printable)
	case n > MaxNameLength:
		return bad(occ.DetailTooLong, printable)
	case !utf8.ValidString(name), strings.TrimSpace(name) != name:
		return bad(occ.DetailInvalidValue, printable)
	}
	for _, r := range name {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return bad(occ.DetailInvalidValue, printable)
		}
		if invisible(r) {
			return bad(occ.DetailInvalidValue, "The name is not valid: it holds an invisible or formatting character (zero-width, bidirectional control, variation selector or a space other than U+0020).")
		}
	}
	if !norm.NFC.IsNormalString(name) {
		return bad(occ.DetailInvalidValue, "The name is not valid: send it in Unicode normal form C (composed characters).")
	}
	if !singleScript(name) {
		return bad(occ.DetailInvalidValue, "The name is not valid: it mixes letters of different scripts (such as Latin and Cyrillic), which can look like another name.")
	}
	return nil
}

// invisible reports characters that change how a name is displayed or
// compared without being seen: format characters (Cf: zero-width
// joiners, bidi overrides, …), default-ignorable code points (variation
// selectors, Hangul fillers, the combining grapheme joiner) and spaces
// other than U+0020.
func invisible(r rune) bool {
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		unicode.Is(unicode.Variation_Selector, r) || r == '\u034f' || (unicode.IsSpace(r) && r != ' ')
}

// scriptSets are the script combinations a name may use (UTS #39,
// highly restrictive): one script alone, or Latin with Han and the
// Japanese, Chinese or Korean scripts that go with it.
var scriptSets = [][]*unicode.RangeTable{
	{unicode.Latin, unicode.Han, unicode.Hiragana, unicode.Katakana},
	{unicode.Latin, unicode.Han, unicode.Bopomofo},
	{unicode.Latin, unicode.Han, unicode.Hangul},
}

// singleScript reports whether every letter of name belongs to one script
// or to one of scriptSets (characters of the Common and Inherited scripts
// — digits, punctuation, combining marks — belong to every script).
func singleScript(name string) bool {
	var scripts []*unicode.RangeTable
	for _, r := range name {
		if unicode.Is(unicode.Common, r) || unicode.Is(unicode.Inherited, r) {
			continue
		}
		s := scriptOf(r)
		if s == nil {
			return false
		}
		if !slices.Contains(scripts, s) {
			scripts = append(scripts, s)
		}
	}
	if len(scripts) <= 1 {
		return true
	}
	for _, set := range scriptSets {
		if subset(scripts, set) {
			return true
		}
	}
	return false
}

// scriptOf returns the script of r, nil when it has none.
func scriptOf(r rune) *unicode.RangeTable {
	for _, t := range unicode.Scripts {
		if unicode.Is(t, r) {
			return t
		}
	}
	return nil
}

func subset(ts, of []*unicode.RangeTable) bool {
	for _, t := range ts {
		if !slices.Contains(of, t) {
			return false
		}
	}
	return true
}
