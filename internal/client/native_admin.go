package client

import (
	"context"

	"github.com/openclaw/occ/internal/client/gen"
)

// NativeAdminUI is the availability of an Agent's native admin UI.
type NativeAdminUI = gen.NativeAdminUI

// GetNativeAdminUI asks whether the Agent's native admin UI can be opened
// and where (exact agent:administer).
func (c *Client) GetNativeAdminUI(ctx context.Context, ns, agent string) (*NativeAdminUI, error) {
	r, err := c.api.GetNativeAdminUIWithResponse(ctx, ns, agent)
	if err != nil {
		return nil, requestError("get native admin UI", err)
	}
	if r.JSON200 == nil {
		return nil, unexpected(r.HTTPResponse, r.Body)
	}
	return &r.JSON200.Data, nil
}
