package app

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/openclaw/occ/internal/occ"
)

// FuzzNames checks the display-name validator. A rejection is
// INVALID_REQUEST with one detail at the field (TOO_LONG exactly when the
// name has more than 200 code points) and a message of at most 256
// characters. An accepted name is 1-200 code points of UTF-8 in normal
// form C without surrounding white space or control and format characters,
// survives a JSON round trip unchanged, and its look-alikes are refused:
// the same name decomposed (NFD), with a zero-width space or a bidi
// override inside, or with a surrounding space.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"default", "ticket-triage 2", "Café crème", "Cafe\u0301", "dеfault", "a\u200bb", "東京 tokyo",
		"한국 서울", "𝒜", " x", "x ", "\x00", "\xff", "a\u202eb", "ｆｕｌｌ", strings.Repeat("é", 200), strings.Repeat("é", 201),
		"x\uFE0F", "\u3000x", "Ελληνικά", "mixed Ελ", "a\u0301\u0301", "\u0000", "", "\U0010FFFF", "a\u2028b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := validName("name", name)
		if err != nil {
			checkNameRefusal(t, name, err)
			return
		}
		n := utf8.RuneCountInString(name)
		if !utf8.ValidString(name) || n < 1 || n > MaxNameLength || !norm.NFC.IsNormalString(name) ||
			strings.TrimFunc(name, unicode.IsSpace) != name {
			t.Fatalf("validName accepted %q", name)
		}
		for _, r := range name {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r) && r != ' ' {
				t.Fatalf("validName accepted %q with %U", name, r)
			}
		}
		var back string
		if raw, err := json.Marshal(name); err != nil || json.Unmarshal(raw, &back) != nil || back != name {
			t.Fatalf("accepted name %q does not survive JSON: %q", name, back)
		}
		_, size := utf8.DecodeRuneInString(name)
		for _, alike := range []string{norm.NFD.String(name), name[:size] + "\u200b" + name[size:],
			name[:size] + "\u202e" + name[size:], " " + name, name + "\u00a0"} {
			if alike != name && validName("name", alike) == nil {
				t.Fatalf("validName accepted %q, a look-alike of %q", alike, name)
			}
		}
	})
}

// checkNameRefusal checks the shape of a refusal of name.
func checkNameRefusal(t *testing.T, name string, err error) {
	t.Helper()
	var oe *occ.Error
	if !errors.As(err, &oe) || oe.Code != occ.CodeInvalidRequest || len(oe.Details) != 1 || oe.Details[0].Path != "/name" {
		t.Fatalf("validName(%q) = %v, want INVALID_REQUEST with one detail at /name", name, err)
	}
	if tooLong := utf8.RuneCountInString(name) > MaxNameLength; (oe.Details[0].Code == occ.DetailTooLong) != tooLong {
		t.Fatalf("validName(%q): detail %s, want TOO_LONG exactly when over %d code points", name, oe.Details[0].Code, MaxNameLength)
	}
	if oe.Details[0].Code != occ.DetailTooLong && oe.Details[0].Code != occ.DetailInvalidValue {
		t.Fatalf("validName(%q): detail %s", name, oe.Details[0].Code)
	}
	if utf8.RuneCountInString(oe.Message) > 256 {
		t.Fatalf("validName(%q): message of %d characters", name, utf8.RuneCountInString(oe.Message))
	}
}
