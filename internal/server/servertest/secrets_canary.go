package servertest

import (
	"bytes"
	"log/slog"
	"slices"
	"sync"

	"github.com/openclaw/occ/internal/server"
)

// lockedBuffer is a log sink safe for concurrent writers.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.b.Bytes())
}

// recordLogs makes the server log everything, down to debug, into buf.
func RecordLogs(buf *LockedBuffer) func(*server.Main) {
	return func(m *server.Main) {
		m.Logger = slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
}
