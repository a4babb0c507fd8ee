package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
)

// Logs reads the last output of the Agent's gateway from console.log (its
// stdout and stderr since its last start), when the gateway that wrote it
// runs, or last ran, the revision. Only the last compute.MaxLogBytes bytes
// are read.
func (d *Driver) Logs(ctx context.Context, rev compute.RevisionRef, opts compute.LogOptions) (compute.Logs, error) {
	if err := rev.Validate(); err != nil {
		return compute.Logs{}, err
	}
	var out compute.Logs
	err := d.withAgent(rev.AgentRef, false, func(a *agent, st *runState) error {
		if st == nil || st.RevisionID != rev.RevisionID {
			return nil
		}
		b, cut, err := readTail(filepath.Join(a.dir, consoleFile), compute.MaxLogBytes)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read the gateway's console: %w", err)
		}
		out.Found = true
		out.Lines, out.Truncated = compute.TailLines(b, opts.TailLines, cut)
		if token := readToken(a.dir); token != "" {
			out.Credentials = append(out.Credentials, token, gateway.NativeAdminIdentity(token))
		}
		if a.appToken != "" {
			out.Credentials = append(out.Credentials, a.appToken)
		}
		return nil
	})
	return out, err
}

// readTail reads the last limit bytes of the file at path; cut says it holds
// more.
func readTail(path string, limit int64) ([]byte, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	off := max(fi.Size()-limit, 0)
	b, err := io.ReadAll(io.NewSectionReader(f, off, fi.Size()-off))
	return b, off > 0, err
}
