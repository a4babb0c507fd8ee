package httpapi

import (
	"context"

	"github.com/openclaw/occ/internal/httpapi/gen"
)

func (h *handlers) GetNativeAdminUI(ctx context.Context, r gen.GetNativeAdminUIRequestObject) (gen.GetNativeAdminUIResponseObject, error) {
	st, err := h.app.NativeAdminAvailability(ctx, callerFrom(ctx), r.NamespaceId, r.AgentId)
	if err != nil {
		return nil, err
	}
	out := gen.NativeAdminUI{Status: gen.NativeAdminUIStatus(st.Status)}
	if st.URL != "" {
		out.Url = &st.URL
	}
	return gen.GetNativeAdminUI200JSONResponse{Data: out, Meta: meta(ctx)}, nil
}
