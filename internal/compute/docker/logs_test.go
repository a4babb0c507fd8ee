package docker

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/compute"
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
		d := tailDemux{}
		_, _ = d.Write(stream[:split])
		_, _ = d.Write(stream[split:])
		if got := string(d.payload.Bytes()); got != "one\ntwo\nthree\n" || d.payload.Cut() {
			t.Fatalf("split at %d: %q (cut %v)", split, got, d.payload.Cut())
		}
	}
	d := tailDemux{payload: compute.TailBuffer{Max: 10}}
	for range 100 {
		_, _ = d.Write(frame(1, strings.Repeat("x", 7)+"\n"))
	}
	_, _ = d.Write(frame(1, "last\n"))
	if got := string(d.payload.Bytes()); got != "xxxx\nlast\n" || !d.payload.Cut() {
		t.Fatalf("bounded: %q (cut %v), want the last 10 bytes, cut", got, d.payload.Cut())
	}
}
