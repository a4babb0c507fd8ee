package compute_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/compute"
)

func TestTailLines(t *testing.T) {
	big := strings.Repeat("x", compute.MaxLogBytes) + "\nlast\n"
	for _, c := range []struct {
		name      string
		out       string
		n         int
		cut       bool
		want      []string
		truncated bool
	}{
		{"empty", "", 10, false, nil, false},
		{"all of a short output", "a\nb\r\nc\n", 10, false, []string{"a", "b", "c"}, false},
		{"no final newline", "a\nb", 10, false, []string{"a", "b"}, false},
		{"the last n", "a\nb\nc\n", 2, false, []string{"b", "c"}, true},
		{"a cut read drops its partial first line", "rtial\nb\nc\n", 10, true, []string{"b", "c"}, true},
		{"a cut read without a newline has no whole line", "partial", 10, true, nil, true},
		{"more than MaxLogBytes keeps the last bytes' whole lines", big, 10, false, []string{"last"}, true},
		{"n beyond MaxLogLines is MaxLogLines", strings.Repeat("l\n", compute.MaxLogLines+5), compute.MaxLogLines + 5, false,
			slices.Repeat([]string{"l"}, compute.MaxLogLines), true},
		{"invalid UTF-8 is replaced", "ok \xff\n", 10, false, []string{"ok \uFFFD"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, truncated := compute.TailLines([]byte(c.out), c.n, c.cut)
			if !slices.Equal(got, c.want) || truncated != c.truncated {
				t.Fatalf("TailLines = %q, %v; want %q, %v", got, truncated, c.want, c.truncated)
			}
		})
	}
}

// TestTailBuffer: the last Max bytes of any number of writes, Cut once
// older bytes were dropped.
func TestTailBuffer(t *testing.T) {
	var b compute.TailBuffer
	b.Max = 8
	_, _ = b.Write([]byte("abc"))
	if string(b.Bytes()) != "abc" || b.Cut() {
		t.Fatalf("under the bound: %q cut %v", b.Bytes(), b.Cut())
	}
	for _, s := range []string{"defgh", "ijklmnopqrstu", "vw", "xyz"} {
		_, _ = b.Write([]byte(s))
	}
	if string(b.Bytes()) != "stuvwxyz" || !b.Cut() {
		t.Fatalf("over the bound: %q cut %v, want the last 8 bytes, cut", b.Bytes(), b.Cut())
	}
}
