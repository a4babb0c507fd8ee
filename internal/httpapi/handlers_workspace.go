package httpapi

import (
	"context"

	"github.com/openclaw/occ/internal/httpapi/gen"
)

func (h *handlers) GetWorkspaceFile(ctx context.Context, r gen.GetWorkspaceFileRequestObject) (gen.GetWorkspaceFileResponseObject, error) {
	f, err := h.app.ReadWorkspaceFile(ctx, callerFrom(ctx), r.NamespaceId, r.AgentId, string(r.Name))
	if err != nil {
		return nil, err
	}
	return gen.GetWorkspaceFile200JSONResponse{Data: gen.WorkspaceFileContent{Name: f.Name, Content: f.Content}, Meta: meta(ctx)}, nil
}

func (h *handlers) PutWorkspaceFile(ctx context.Context, r gen.PutWorkspaceFileRequestObject) (gen.PutWorkspaceFileResponseObject, error) {
	f, err := h.app.WriteWorkspaceFile(ctx, callerFrom(ctx), r.NamespaceId, r.AgentId, string(r.Name), r.Body.Content)
	if err != nil {
		return nil, err
	}
	return gen.PutWorkspaceFile200JSONResponse{Data: gen.WorkspaceFileWritten{Name: f.Name, Size: f.Size}, Meta: meta(ctx)}, nil
}
