package client

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/openclaw/occ/internal/client/gen"
)

// ExportAuditEvents copies the audit events with since <= occurredAt <
// until ("" = open bound; timestamps as the API writes them) to w as JSON
// Lines, oldest first, and returns how many it copied. An export the
// server could not finish is an error: its body ends short of the final
// chunk.
func (c *Client) ExportAuditEvents(ctx context.Context, since, until string, w io.Writer) (int, error) {
	params := &gen.ExportAuditEventsParams{}
	if since != "" {
		params.Since = &since
	}
	if until != "" {
		params.Until = &until
	}
	res, err := c.api.ExportAuditEvents(ctx, params)
	if err != nil {
		return 0, requestError("export audit events", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		return 0, unexpected(res, body)
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "application/jsonl" {
		return 0, fmt.Errorf("export audit events: content type %q, not application/jsonl", res.Header.Get("Content-Type"))
	}
	n := 0
	br := bufio.NewReaderSize(res.Body, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if line[len(line)-1] != '\n' {
				return n, fmt.Errorf("export audit events: the export ended inside a line")
			}
			if _, werr := w.Write(line); werr != nil {
				return n, werr
			}
			if len(bytes.TrimSpace(line)) > 0 {
				n++
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("export audit events: the export was cut short after %d events: %w", n, err)
		}
	}
}
