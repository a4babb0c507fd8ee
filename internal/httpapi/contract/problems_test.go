package contract

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openclaw/occ/internal/occ"
)

func TestPointer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		base   string
		tokens []string
		want   string
	}{
		{"", nil, ""},
		{"", []string{""}, "/"},
		{"", []string{"a/b", "~c", "0"}, "/a~1b/~0c/0"},
		{"/x", []string{"~1"}, "/x/~01"},
	}
	for _, tc := range tests {
		if got := pointer(tc.base, tc.tokens...); got != tc.want {
			t.Errorf("pointer(%q, %q) = %q, want %q", tc.base, tc.tokens, got, tc.want)
		}
	}
}

func TestCapPointer(t *testing.T) {
	t.Parallel()
	seg := "/" + strings.Repeat("k", 99) // 100 characters
	p := strings.Repeat(seg, 6)
	if got := capPointer(p); got != strings.Repeat(seg, 5) {
		t.Errorf("capPointer: %d characters", len(got))
	}
	if got := capPointer("/" + strings.Repeat("x", 600)); got != "" {
		t.Errorf("one long token: %q", got)
	}
	// Astral characters count twice, so a pointer fits both code point and
	// UTF-16 limits.
	astral := "/" + strings.Repeat("😀", 300)
	if got := capPointer(astral); got != "" {
		t.Errorf("astral: %d code points", utf8.RuneCountInString(got))
	}
}

func TestSanitize(t *testing.T) {
	t.Parallel()
	in := "ok é 😀 \x00\x1f\x7f\u0085\u200b\u200e\u2028\u2029\ufeff \xff end"
	want := "ok é 😀 ????????? ? end"
	if got := sanitize(in); got != want {
		t.Errorf("sanitize = %q, want %q", got, want)
	}
}

func TestContractMessage(t *testing.T) {
	t.Parallel()
	p := func(path string) problem { return problem{path, occ.DetailUnknownField, "is not an accepted field"} }
	tests := []struct {
		name string
		ps   []problem
		want string
	}{
		{"one", []problem{p("/a")}, ContractPrefix + "/a is not an accepted field."},
		{"three", []problem{p("/a"), p("/b"), p("/c")}, ContractPrefix + "/a is not an accepted field; /b is not an accepted field; /c is not an accepted field."},
		{"four", []problem{p("/a"), p("/b"), p("/c"), p("/d")}, ContractPrefix + "/a is not an accepted field; /b is not an accepted field; /c is not an accepted field; and 1 more."},
		{"long paths keep the count", []problem{p("/" + strings.Repeat("a", 100)), p("/" + strings.Repeat("b", 100)), p("/c")},
			ContractPrefix + "/" + strings.Repeat("a", 100) + " is not an accepted field; and 2 more."},
		{"one very long path", []problem{p("/" + strings.Repeat("a", 400)), p("/b")}, ""},
	}
	for _, tc := range tests {
		got := contractMessage(tc.ps)
		if tc.want != "" && got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
		if n := utf8.RuneCountInString(got); n > 256 {
			t.Errorf("%s: %d code points", tc.name, n)
		}
		if tc.want == "" && !strings.HasSuffix(got, "…; and 1 more.") {
			t.Errorf("%s: lost the count: %q", tc.name, got)
		}
	}
}

func TestInvalidDedupesAndSorts(t *testing.T) {
	t.Parallel()
	e := invalid([]problem{
		{"/b", occ.DetailInvalidValue, "x"},
		{"/a", occ.DetailUnknownField, "x"},
		{"/a", occ.DetailInvalidType, "y"},
		{"/b", occ.DetailInvalidValue, "z"},
	})
	want := []occ.Detail{{Path: "/a", Code: occ.DetailInvalidType}, {Path: "/a", Code: occ.DetailUnknownField}, {Path: "/b", Code: occ.DetailInvalidValue}}
	if len(e.Details) != len(want) {
		t.Fatalf("details = %v", e.Details)
	}
	for i := range want {
		if e.Details[i] != want[i] {
			t.Fatalf("details = %v, want %v", e.Details, want)
		}
	}
	if e.Code != occ.CodeInvalidRequest || !strings.HasPrefix(e.Message, ContractPrefix) {
		t.Errorf("error = %v", e)
	}
}
