package docker

import (
	"context"
	"encoding/binary"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
)

// Logs reads the last lines the revision's gateway container wrote
// (stdout and stderr, as the engine keeps them); none when the Agent's
// container runs another revision or does not exist.
func (d *Driver) Logs(ctx context.Context, rev compute.RevisionRef, opts compute.LogOptions) (compute.Logs, error) {
	if err := rev.Validate(); err != nil {
		return compute.Logs{}, err
	}
	c, found, err := d.gateway(ctx, rev.AgentRef)
	if err != nil || !found || c.Config.Labels[LabelRevision] != rev.RevisionID {
		return compute.Logs{}, err
	}
	n := opts.TailLines
	if n <= 0 || n > compute.MaxLogLines {
		n = compute.MaxLogLines
	}
	// One line more than asked: whether older output exists.
	out := tailDemux{max: compute.MaxLogBytes}
	if err := d.e.containerLogs(ctx, c.ID, n+1, &out); err != nil {
		return compute.Logs{}, classify(err)
	}
	lines, truncated := compute.TailLines(out.bytes(), n, out.cut)
	logs := compute.Logs{Found: true, Lines: lines, Truncated: truncated}
	if token := gatewayToken(c); token != "" {
		logs.Credentials = append(logs.Credentials, token, gateway.NativeAdminIdentity(token))
	}
	return logs, nil
}

// tailDemux takes the engine's multiplexed log stream (frames of an
// 8-byte header, the stream in byte 0 and the payload's length in bytes
// 4-7, big endian) and keeps the last max bytes of the payloads, in
// order; cut says older output was dropped.
type tailDemux struct {
	max  int
	hdr  [8]byte
	hn   int // header bytes read of the current frame
	left int // payload bytes left of the current frame
	keep []byte
	cut  bool
}

func (t *tailDemux) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if t.left == 0 {
			c := copy(t.hdr[t.hn:], p)
			t.hn, p = t.hn+c, p[c:]
			if t.hn == len(t.hdr) {
				t.hn, t.left = 0, int(binary.BigEndian.Uint32(t.hdr[4:]))
			}
			continue
		}
		k := min(t.left, len(p))
		t.keep = append(t.keep, p[:k]...)
		t.left, p = t.left-k, p[k:]
		if len(t.keep) > 2*t.max {
			t.keep, t.cut = append([]byte(nil), t.keep[len(t.keep)-t.max:]...), true
		}
	}
	return n, nil
}

// bytes returns the last max bytes kept.
func (t *tailDemux) bytes() []byte {
	if len(t.keep) > t.max {
		t.keep, t.cut = t.keep[len(t.keep)-t.max:], true
	}
	return t.keep
}
