package client

import (
	"context"
	"net/http"

	"github.com/openclaw/occ/internal/client/gen"
)

// ListConfigurations returns one page of the Namespace's Configurations the
// caller may read and the next page's token ("" on the last page).
func (c *Client) ListConfigurations(ctx context.Context, ns string, p Page) ([]Configuration, string, error) {
	r, err := c.api.ListConfigurationsWithResponse(ctx, ns, &gen.ListConfigurationsParams{PageSize: p.sizeParam(), PageToken: p.tokenParam()})
	if err != nil {
		return nil, "", requestError("list configurations", err)
	}
	if r.JSON200 == nil {
		return nil, "", unexpected(r.HTTPResponse, r.Body)
	}
	return r.JSON200.Data, nextToken(r.JSON200.Meta), nil
}

// ListAllConfigurations returns every Configuration of the Namespace the
// caller may read.
func (c *Client) ListAllConfigurations(ctx context.Context, ns string) ([]Configuration, error) {
	return listAll(ctx, func(ctx context.Context, p Page) ([]Configuration, string, error) {
		return c.ListConfigurations(ctx, ns, p)
	})
}

// CreateConfiguration creates a Configuration (generation 1). An empty Kind
// is sent as "agent".
func (c *Client) CreateConfiguration(ctx context.Context, ns string, body ConfigurationCreate) (*Configuration, error) {
	if body.Kind == "" {
		body.Kind = gen.ConfigurationCreateKindAgent
	}
	if body.Values == nil {
		body.Values = ConfigurationDocument{}
	}
	r, err := c.api.CreateConfigurationWithResponse(ctx, ns, &gen.CreateConfigurationParams{}, body)
	if err != nil {
		return nil, requestError("create configuration", err)
	}
	if r.JSON201 == nil {
		return nil, unexpected(r.HTTPResponse, r.Body)
	}
	return &r.JSON201.Data, nil
}

// GetConfiguration returns a Configuration.
func (c *Client) GetConfiguration(ctx context.Context, ns, id string) (*Configuration, error) {
	r, err := c.api.GetConfigurationWithResponse(ctx, ns, id)
	if err != nil {
		return nil, requestError("get configuration", err)
	}
	if r.JSON200 == nil {
		return nil, unexpected(r.HTTPResponse, r.Body)
	}
	return &r.JSON200.Data, nil
}

// DeleteConfiguration deletes a Configuration no Agent references. etag,
// when not "", is sent as If-Match.
func (c *Client) DeleteConfiguration(ctx context.Context, ns, id, etag string) error {
	r, err := c.api.DeleteConfigurationWithResponse(ctx, ns, id, &gen.DeleteConfigurationParams{IfMatch: ifMatch(etag)})
	if err != nil {
		return requestError("delete configuration", err)
	}
	if r.StatusCode() != http.StatusNoContent {
		return unexpected(r.HTTPResponse, r.Body)
	}
	return nil
}

// SecretBindings maps environment variable names to the Secrets delivered
// there (a Configuration's secretBindings).
type SecretBindings = gen.SecretBindings

// EnvBinding delivers the Namespace's Secret as an environment variable of
// the gateway, where the document refers to it as ${NAME}.
func EnvBinding(nsID, secretID string) gen.SecretBinding {
	return gen.SecretBinding{Source: gen.SecretRef{Kind: gen.SecretRefKindSecret, NamespaceId: nsID, Id: secretID}}
}
