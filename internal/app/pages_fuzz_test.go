package app

import (
	"encoding/base64"
	"errors"
	"math/big"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// FuzzPageToken checks the page token decoder against an independent
// statement of the format: "" is the first page; otherwise unpadded
// base64url of "<decimal int64, optionally signed>|<1 to 100 of
// [A-Za-z0-9_-]>". A rejection is INVALID_REQUEST at /pageToken; an
// accepted cursor is text PostgreSQL can hold (UTF-8, no NUL). It also
// checks that every token the lists hand out (tokenOf) decodes to the
// position it encodes exactly when its ID has that shape. `go test` runs
// the seeds; scripts/test also runs it as a fuzzer (OCC_TEST_FUZZTIME).
func FuzzPageToken(f *testing.F) {
	enc := base64.RawURLEncoding.EncodeToString
	for _, seed := range []struct {
		token string
		ms    int64
		id    string
	}{
		{"", 0, "ns_00000000-0000-4000-8000-000000000000"},
		{enc([]byte("1735689600000|ns_00000000-0000-4000-8000-000000000000")), 1735689600000, "cfg_x"},
		{enc([]byte("-5|chatgpt-main")), -5, "chatgpt-main"},
		{enc([]byte("+5|A_b-9")), 5, "A_b-9"},
		{enc([]byte("1|\x00")), 1, "\x00"},
		{enc([]byte("1|ns_\x00abc")), 1, "ns_\x00abc"},
		{enc([]byte("1|\xff\xfe")), 1, "\xff\xfe"},
		{enc([]byte("1|\xed\xa0\x80")), 1, "é"},
		{enc([]byte("1|ns x")), 1, "ns x"},
		{enc([]byte("1|" + strings.Repeat("a", 100))), 1, strings.Repeat("a", 101)},
		{enc([]byte("9223372036854775807|x")), -9223372036854775808, "x"},
		{enc([]byte("9223372036854775808|x")), 0, ""},
		{enc([]byte("1|a|b")), 1, "a|b"},
		{base64.URLEncoding.EncodeToString([]byte("1|ns_xy")), 1, "ns_xy"},
		{"not a token!", 0, "x"},
	} {
		f.Add(seed.token, seed.ms, seed.id)
	}
	idShape := regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)
	shape := regexp.MustCompile(`^([+-]?[0-9]+)\|([A-Za-z0-9_-]{1,100})$`)
	minMs, maxMs := big.NewInt(-1<<63), big.NewInt(1<<63-1)
	accepted := func(token string) bool {
		if token == "" {
			return true
		}
		raw, err := base64.RawURLEncoding.DecodeString(token)
		if err != nil {
			return false
		}
		m := shape.FindSubmatch(raw)
		if m == nil {
			return false
		}
		n, _ := new(big.Int).SetString(string(m[1]), 10)
		return n.Cmp(minMs) >= 0 && n.Cmp(maxMs) <= 0
	}
	f.Fuzz(func(t *testing.T, token string, ms int64, id string) {
		c, err := cursorOf(token)
		if want := accepted(token); (err == nil) != want {
			t.Fatalf("cursorOf(%q) = %+v, %v; want accepted %v", token, c, err, want)
		}
		var oe *occ.Error
		switch {
		case err != nil && (!errors.As(err, &oe) || oe.Code != occ.CodeInvalidRequest || len(oe.Details) != 1 || oe.Details[0].Path != "/pageToken"):
			t.Fatalf("rejection is %v, want INVALID_REQUEST at /pageToken", err)
		case err == nil && (!utf8.ValidString(c.ID) || strings.ContainsRune(c.ID, 0)):
			t.Fatalf("accepted cursor ID %q is not text PostgreSQL holds", c.ID)
		}

		// A handed-out token: a real row's time (years 1970 to about 37000).
		ms &= 1<<50 - 1
		back, err := cursorOf(tokenOf(occ.FromMillis(ms), id))
		if want := idShape.MatchString(id); (err == nil) != want {
			t.Fatalf("token of (%d, %q): %v, want accepted %v", ms, id, err, want)
		}
		if err == nil && back != (store.Cursor{CreatedAt: ms, ID: id}) {
			t.Fatalf("token of (%d, %q) decodes to %+v", ms, id, back)
		}
	})
}
