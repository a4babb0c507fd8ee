package httpapi

import (
	"context"

	"github.com/openclaw/occ/internal/httpapi/gen"
	"github.com/openclaw/occ/internal/occ"
)

func (h *handlers) DiagnoseDeployment(ctx context.Context, r gen.DiagnoseDeploymentRequestObject) (gen.DiagnoseDeploymentResponseObject, error) {
	d, err := h.app.DiagnoseDeployment(ctx, callerFrom(ctx), r.NamespaceId, r.AgentId, r.RevisionId)
	if err != nil {
		return nil, err
	}
	checks := make([]gen.DiagnosticCheck, 0, len(d.Checks))
	for _, c := range d.Checks {
		checks = append(checks, gen.DiagnosticCheck{Component: c.Component, Check: c.Check, Status: gen.DiagnosticCheckStatus(c.Status),
			Code: c.Code, Message: c.Message})
	}
	return gen.DiagnoseDeployment200JSONResponse{Data: gen.DeploymentDiagnostics{RevisionId: d.RevisionID,
		ObservedAt: occ.FormatTime(d.ObservedAt), Checks: checks}, Meta: meta(ctx)}, nil
}

func (h *handlers) GetRuntimeLogs(ctx context.Context, r gen.GetRuntimeLogsRequestObject) (gen.GetRuntimeLogsResponseObject, error) {
	tail := 0
	if r.Params.TailLines != nil {
		tail = *r.Params.TailLines
	}
	l, err := h.app.ReadRuntimeLogs(ctx, callerFrom(ctx), r.NamespaceId, r.AgentId, r.RevisionId, tail)
	if err != nil {
		return nil, err
	}
	lines := l.Lines
	if lines == nil {
		lines = []string{}
	}
	return gen.GetRuntimeLogs200JSONResponse{Data: gen.RuntimeLogs{RevisionId: l.RevisionID, Found: l.Found, Lines: lines,
		Truncated: l.Truncated}, Meta: meta(ctx)}, nil
}
