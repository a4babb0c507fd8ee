package app

import (
	"testing"

	"github.com/openclaw/occ/internal/occ"
)

// TestValidNameRefusesLookAlikes: names that would display like another
// name are refused with INVALID_VALUE at the field; ordinary names of one
// script (and the Han combinations) are accepted.
func TestValidNameRefusesLookAlikes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"default", true},
		{"ticket-triage 2", true},
		{"Café crème", true},         // NFC, Latin
		{"ordenador-portátil", true}, // NFC
		{"поддержка", true},          // Cyrillic alone
		{"αβγ-1", true},              // Greek alone
		{"東京チーム", true},              // Han + Katakana
		{"team 東京", true},            // Latin + Han
		{"서울 team", true},            // Hangul + Latin
		{"support 🤖", true},          // emoji are Common
		{"d\u0435fault", false},      // Cyrillic е inside Latin
		{"p\u0430ypal", false},       // Cyrillic а
		{"def\u200bault", false},     // zero-width space
		{"default\u200d", false},     // zero-width joiner
		{"\u202edefault", false},     // right-to-left override
		{"a\u2066b", false},          // bidi isolate
		{"Cafe\u0301", false},        // NFD é
		{"de\ufe0ffault", false},     // variation selector
		{"team\u00a0a", false},       // no-break space
		{"team\u3000a", false},       // ideographic space
		{"a\u034fb", false},          // combining grapheme joiner
		{"\u3164", false},            // Hangul filler
		{"αβγ and abc", false},       // Greek + Latin
		{"東京 команда", false},        // Han + Cyrillic
		{"soft\u00adhyphen", false},  // soft hyphen (Cf)
		{"word\u2060joiner", false},  // word joiner
	} {
		err := validName("name", tt.name)
		if tt.ok {
			if err != nil {
				t.Errorf("validName(%q) = %v; want accepted", tt.name, err)
			}
			continue
		}
		oe := occ.AsError(err)
		if oe == nil || oe.Code != occ.CodeInvalidRequest || len(oe.Details) != 1 || oe.Details[0] != (occ.Detail{Path: "/name", Code: occ.DetailInvalidValue}) {
			t.Errorf("validName(%q) = %v; want 400 INVALID_VALUE at /name", tt.name, err)
		}
	}
}
