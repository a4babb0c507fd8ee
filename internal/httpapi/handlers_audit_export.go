package httpapi

import (
	"bufio"
	"context"
	"net/http"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/audit"
	"github.com/openclaw/occ/internal/httpapi/gen"
	"github.com/openclaw/occ/internal/occ"
)

// auditExport streams an export as JSON Lines. The first page is read
// before the status is written, so a failure to start is a plain error
// answer; a failure later aborts the response, which then lacks its final
// chunk, so a client never takes a partial export for a whole one.
type auditExport struct {
	ctx   context.Context
	first []occ.AuditEvent
	rest  *app.AuditExport
}

// VisitExportAuditEventsResponse implements gen.ExportAuditEventsResponseObject.
func (x auditExport) VisitExportAuditEventsResponse(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/jsonl")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	for page := x.first; len(page) > 0; {
		for _, e := range page {
			line, err := audit.Line(e)
			if err != nil {
				panic(http.ErrAbortHandler)
			}
			if _, err := bw.Write(line); err != nil {
				return nil // the client went away
			}
		}
		var err error
		if page, err = x.rest.Next(x.ctx); err != nil {
			panic(http.ErrAbortHandler)
		}
	}
	_ = bw.Flush() // an error here is the client gone away
	return nil
}

func (h *handlers) ExportAuditEvents(ctx context.Context, r gen.ExportAuditEventsRequestObject) (gen.ExportAuditEventsResponseObject, error) {
	since, err := parseTime("since", r.Params.Since)
	if err != nil {
		return nil, err
	}
	until, err := parseTime("until", r.Params.Until)
	if err != nil {
		return nil, err
	}
	x, err := h.app.ExportAuditEvents(ctx, callerFrom(ctx), since, until)
	if err != nil {
		return nil, err
	}
	first, err := x.Next(ctx)
	if err != nil {
		return nil, err
	}
	return auditExport{ctx: ctx, first: first, rest: x}, nil
}
