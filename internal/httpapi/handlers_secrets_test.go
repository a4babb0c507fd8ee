package httpapi

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestUnquoteJSON(t *testing.T) {
	for _, tc := range []struct {
		raw       string
		want      string
		validUTF8 bool
	}{
		{`"xoxb-example"`, "xoxb-example", true},
		{`"a\"b\\c\/d\b\f\n\r\t"`, "a\"b\\c/d\b\f\n\r\t", true},
		{`"\u00e9\u4e2d"`, "é中", true},
		{`"é中😀"`, "é中😀", true},
		{`"\ud83d\ude00"`, "😀", true},
		{`"\u0000"`, "\x00", true},
		{`"\ufffd"`, "\ufffd", true},
		{`"\udc00"`, "\xed\xb0\x80", false},
		{`"\ud800x"`, "\xed\xa0\x80x", false},
		{`"\ud800\u0041"`, "\xed\xa0\x80A", false},
		{`"\ud800\ud800"`, "\xed\xa0\x80\xed\xa0\x80", false},
		{`""`, "", true},
	} {
		got, ok := unquoteJSON([]byte(tc.raw))
		if !ok || !bytes.Equal(got, []byte(tc.want)) || utf8.Valid(got) != tc.validUTF8 {
			t.Errorf("unquoteJSON(%s) = %q, %v; want %q", tc.raw, got, ok, tc.want)
		}
		// Where encoding/json agrees (valid text), so do we.
		var std string
		if tc.validUTF8 && (json.Unmarshal([]byte(tc.raw), &std) != nil || std != tc.want) {
			t.Errorf("encoding/json decodes %s as %q", tc.raw, std)
		}
	}
	for _, bad := range []string{``, `"`, `x`, `"\"`, `"\x"`, `"\u12"`, `"\uzzzz"`, `3`, `null`} {
		if _, ok := unquoteJSON([]byte(bad)); ok {
			t.Errorf("unquoteJSON(%s) succeeded", bad)
		}
	}
}
