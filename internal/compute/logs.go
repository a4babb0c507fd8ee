package compute

import (
	"bytes"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/openclaw/occ/internal/occ"
)

// Bounds of one Logs read: a caller asks for at most MaxLogLines lines
// (DefaultLogLines when it names none), and a driver reads at most
// MaxLogBytes bytes of output to answer.
const (
	DefaultLogLines = occ.DefaultRuntimeLogLines
	MaxLogLines     = occ.MaxRuntimeLogLines
	MaxLogBytes     = 256 << 10
)

// LogOptions bounds a Logs read: the last TailLines lines (1 to
// MaxLogLines) of at most the last MaxLogBytes bytes of output.
type LogOptions struct {
	TailLines int
}

// Logs is the recent output of a revision's gateway, raw: whole lines,
// oldest first, as the gateway wrote them (the caller redacts secrets
// before anyone sees them).
type Logs struct {
	// Found is false when the driver keeps no output of the revision's
	// gateway (it never ran here, or another revision's gateway replaced
	// it); Lines is then empty.
	Found bool
	Lines []string
	// Truncated says older output was left out (the line or byte bound).
	Truncated bool
	// Credentials are the gateway's own secrets (its token or password,
	// what derives from them), which the caller redacts from Lines along
	// with the revision's bound Secrets.
	Credentials []string
}

// ErrLogsUnsupported is the error of a driver that cannot read its
// gateways' output.
var ErrLogsUnsupported = errors.New("the compute driver cannot read gateway output")

// TailLines bounds output a driver read (its last bytes, at most
// MaxLogBytes of them): whole lines only (a first line the read began in
// the middle of is dropped), at most n of the last, with invalid UTF-8
// replaced and trailing carriage returns removed. cut says the read began
// after the start of the output.
func TailLines(out []byte, n int, cut bool) (lines []string, truncated bool) {
	if n <= 0 || n > MaxLogLines {
		n = MaxLogLines
	}
	if len(out) > MaxLogBytes {
		out, cut = out[len(out)-MaxLogBytes:], true
	}
	if cut {
		i := bytes.IndexByte(out, '\n')
		if i < 0 {
			return nil, true
		}
		out, truncated = out[i+1:], true
	}
	out = bytes.TrimSuffix(out, []byte("\n"))
	if len(out) == 0 {
		return nil, truncated
	}
	all := strings.Split(strings.ToValidUTF8(string(out), string(utf8.RuneError)), "\n")
	if len(all) > n {
		all, truncated = all[len(all)-n:], true
	}
	for i, l := range all {
		all[i] = strings.TrimSuffix(l, "\r")
	}
	return all, truncated
}

// TailBuffer is an io.Writer that keeps the last Max bytes written to it
// (MaxLogBytes when Max is 0): a driver copies a stream of output of any
// length into it and hands Bytes and Cut to TailLines.
type TailBuffer struct {
	Max  int
	keep []byte
	cut  bool
}

func (t *TailBuffer) max() int {
	if t.Max <= 0 {
		return MaxLogBytes
	}
	return t.Max
}

// Write keeps p's bytes, dropping the oldest beyond twice the bound (and
// the rest of the excess in Bytes); it never fails.
func (t *TailBuffer) Write(p []byte) (int, error) {
	t.keep = append(t.keep, p...)
	if m := t.max(); len(t.keep) > 2*m {
		t.keep, t.cut = append([]byte(nil), t.keep[len(t.keep)-m:]...), true
	}
	return len(p), nil
}

// Bytes returns the last bytes kept, at most the bound.
func (t *TailBuffer) Bytes() []byte {
	if m := t.max(); len(t.keep) > m {
		t.keep, t.cut = t.keep[len(t.keep)-m:], true
	}
	return t.keep
}

// Cut says older bytes were dropped.
func (t *TailBuffer) Cut() bool {
	t.Bytes()
	return t.cut
}
