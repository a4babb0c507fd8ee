package httpapi

import (
	"context"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/httpapi/gen"
)

// toBackend maps only the public fields: a Backend's URL and other settings
// never leave the server.
func toBackend(b app.Backend) gen.Backend {
	return gen.Backend{Id: b.ID, Type: gen.BackendType(b.Type)}
}

func (h *handlers) ListBackends(ctx context.Context, r gen.ListBackendsRequestObject) (gen.ListBackendsResponseObject, error) {
	p, err := h.app.ListBackends(ctx, callerFrom(ctx), page(r.Params.PageSize, r.Params.PageToken))
	if err != nil {
		return nil, err
	}
	return gen.ListBackends200JSONResponse{Data: mapItems(p.Items, toBackend), Meta: listMeta(ctx, p.Next)}, nil
}
