package client

import (
	"context"
	"net/http"

	"github.com/openclaw/occ/internal/client/gen"
)

// ServiceKey is a service key's metadata; Key is set only in the answer
// that issued it.
type ServiceKey = gen.ServiceKey

// ServiceKeyCreate is the body of a service key issue.
type ServiceKeyCreate = gen.ServiceKeyCreate

// ListServiceKeys returns one page of the installation's service keys
// (never the keys themselves).
func (c *Client) ListServiceKeys(ctx context.Context, p Page) ([]ServiceKey, string, error) {
	res, err := c.api.ClientInterface.ListServiceKeys(ctx, &gen.ListServiceKeysParams{PageSize: p.sizeParam(), PageToken: p.tokenParam()})
	return pageOf[ServiceKey]("list service keys", res, err)
}

// ListAllServiceKeys returns every service key's metadata.
func (c *Client) ListAllServiceKeys(ctx context.Context) ([]ServiceKey, error) {
	return listAll(ctx, func(ctx context.Context, p Page) ([]ServiceKey, string, error) { return c.ListServiceKeys(ctx, p) })
}

// CreateServiceKey issues a service key; the answer holds the key, once.
func (c *Client) CreateServiceKey(ctx context.Context, body ServiceKeyCreate) (*ServiceKey, error) {
	res, err := c.api.ClientInterface.CreateServiceKey(ctx, body)
	return dataOf[ServiceKey]("create service key", http.StatusCreated, res, err)
}

// GetServiceKey returns a service key's metadata.
func (c *Client) GetServiceKey(ctx context.Context, id string) (*ServiceKey, error) {
	res, err := c.api.ClientInterface.GetServiceKey(ctx, id)
	return dataOf[ServiceKey]("get service key", http.StatusOK, res, err)
}

// RevokeServiceKey revokes a service key.
func (c *Client) RevokeServiceKey(ctx context.Context, id string) error {
	res, err := c.api.ClientInterface.RevokeServiceKey(ctx, id)
	return noContentOf("revoke service key", res, err)
}
