package docker

import (
	"encoding/binary"
	"strings"
	"testing"
)

// frame is one frame of the engine's multiplexed log stream.
func frame(stream byte, payload string) []byte {
	b := make([]byte, 8, 8+len(payload))
	b[0] = stream
	binary.BigEndian.PutUint32(b[4:], uint32(len(payload)))
	return append(b, payload...)
}

// TestTailDemux: payloads joined in order across writes split anywhere,
// and only the last max bytes kept, cut said.
func TestTailDemux(t *testing.T) {
	stream := append(append(frame(1, "one\ntw"), frame(2, "o\n")...), frame(1, "three\n")...)
	for split := range len(stream) {
		d := tailDemux{max: 1 << 10}
		_, _ = d.Write(stream[:split])
		_, _ = d.Write(stream[split:])
		if got := string(d.bytes()); got != "one\ntwo\nthree\n" || d.cut {
			t.Fatalf("split at %d: %q (cut %v)", split, got, d.cut)
		}
	}
	d := tailDemux{max: 10}
	for range 100 {
		_, _ = d.Write(frame(1, strings.Repeat("x", 7)+"\n"))
	}
	_, _ = d.Write(frame(1, "last\n"))
	if got := string(d.bytes()); got != "xxxx\nlast\n" || !d.cut {
		t.Fatalf("bounded: %q (cut %v), want the last 10 bytes, cut", got, d.cut)
	}
}
