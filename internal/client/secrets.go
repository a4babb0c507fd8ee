package client

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/openclaw/occ/internal/client/gen"
)

// ListSecrets returns one page of the Namespace's Secrets the caller may
// read (metadata only) and the next page's token ("" on the last page).
func (c *Client) ListSecrets(ctx context.Context, ns string, p Page) ([]Secret, string, error) {
	r, err := c.api.ListSecretsWithResponse(ctx, ns, &gen.ListSecretsParams{PageSize: p.sizeParam(), PageToken: p.tokenParam()})
	if err != nil {
		return nil, "", requestError("list secrets", err)
	}
	if r.JSON200 == nil {
		return nil, "", unexpected(r.HTTPResponse, r.Body)
	}
	return r.JSON200.Data, nextToken(r.JSON200.Meta), nil
}

// ListAllSecrets returns every Secret of the Namespace the caller may read.
func (c *Client) ListAllSecrets(ctx context.Context, ns string) ([]Secret, error) {
	return listAll(ctx, func(ctx context.Context, p Page) ([]Secret, string, error) { return c.ListSecrets(ctx, ns, p) })
}

// CreateSecret creates a Secret in a ready Namespace. The value is sent
// once, encrypted at rest by the server and never returned; the client
// keeps no copy and never logs it.
func (c *Client) CreateSecret(ctx context.Context, ns, name, value string) (*Secret, error) {
	raw, err := json.Marshal(value)
	if err != nil {
		return nil, requestError("create secret", err)
	}
	r, err := c.api.CreateSecretWithResponse(ctx, ns, &gen.CreateSecretParams{}, gen.SecretCreate{Name: name, Value: raw})
	if err != nil {
		return nil, requestError("create secret", err)
	}
	if r.JSON201 == nil {
		return nil, unexpected(r.HTTPResponse, r.Body)
	}
	return &r.JSON201.Data, nil
}

// GetSecret returns a Secret's metadata.
func (c *Client) GetSecret(ctx context.Context, ns, id string) (*Secret, error) {
	r, err := c.api.GetSecretWithResponse(ctx, ns, id)
	if err != nil {
		return nil, requestError("get secret", err)
	}
	if r.JSON200 == nil {
		return nil, unexpected(r.HTTPResponse, r.Body)
	}
	return &r.JSON200.Data, nil
}

// DeleteSecret deletes a Secret nothing binds. etag, when not "", is sent
// as If-Match.
func (c *Client) DeleteSecret(ctx context.Context, ns, id, etag string) error {
	r, err := c.api.DeleteSecretWithResponse(ctx, ns, id, &gen.DeleteSecretParams{IfMatch: ifMatch(etag)})
	if err != nil {
		return requestError("delete secret", err)
	}
	if r.StatusCode() != http.StatusNoContent {
		return unexpected(r.HTTPResponse, r.Body)
	}
	return nil
}
