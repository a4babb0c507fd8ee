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
	out := tailDemux{}
	if err := d.e.containerLogs(ctx, c.ID, n+1, &out); err != nil {
		return compute.Logs{}, classify(err)
	}
	lines, truncated := compute.TailLines(out.payload.Bytes(), n, out.payload.Cut())
	logs := compute.Logs{Found: true, Lines: lines, Truncated: truncated}
	if token := gatewayToken(c); token != "" {
		logs.Credentials = append(logs.Credentials, token, gateway.NativeAdminIdentity(token))
	}
	if token := envValue(c, gateway.CodexTokenEnv); token != "" {
		logs.Credentials = append(logs.Credentials, token)
	}
	return logs, nil
}

// tailDemux takes the engine's multiplexed log stream (frames of an
// 8-byte header, the stream in byte 0 and the payload's length in bytes
// 4-7, big endian) and keeps the last bytes of the payloads, in order.
type tailDemux struct {
	payload compute.TailBuffer
	hdr     [8]byte
	hn      int // header bytes read of the current frame
	left    int // payload bytes left of the current frame
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
		_, _ = t.payload.Write(p[:k])
		t.left, p = t.left-k, p[k:]
	}
	return n, nil
}
