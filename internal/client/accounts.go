package client

import (
	"context"

	"github.com/openclaw/occ/internal/client/gen"
)

// ListServiceAccounts returns one page of the Namespace's Service Accounts
// the caller may read and the next page's token ("" on the last page).
func (c *Client) ListServiceAccounts(ctx context.Context, ns string, p Page) ([]ServiceAccount, string, error) {
	r, err := c.api.ListServiceAccountsWithResponse(ctx, ns, &gen.ListServiceAccountsParams{PageSize: p.sizeParam(), PageToken: p.tokenParam()})
	if err != nil {
		return nil, "", requestError("list service accounts", err)
	}
	if r.JSON200 == nil {
		return nil, "", unexpected(r.HTTPResponse, r.Body)
	}
	return r.JSON200.Data, nextToken(r.JSON200.Meta), nil
}

// ListAllServiceAccounts returns every Service Account of the Namespace the
// caller may read.
func (c *Client) ListAllServiceAccounts(ctx context.Context, ns string) ([]ServiceAccount, error) {
	return listAll(ctx, func(ctx context.Context, p Page) ([]ServiceAccount, string, error) {
		return c.ListServiceAccounts(ctx, ns, p)
	})
}

// ListCredentialSources returns one page of the Namespace's Credential
// Sources the caller may read and the next page's token ("" on the last
// page).
func (c *Client) ListCredentialSources(ctx context.Context, ns string, p Page) ([]CredentialSource, string, error) {
	r, err := c.api.ListCredentialSourcesWithResponse(ctx, ns, &gen.ListCredentialSourcesParams{PageSize: p.sizeParam(), PageToken: p.tokenParam()})
	if err != nil {
		return nil, "", requestError("list credential sources", err)
	}
	if r.JSON200 == nil {
		return nil, "", unexpected(r.HTTPResponse, r.Body)
	}
	return r.JSON200.Data, nextToken(r.JSON200.Meta), nil
}

// ListAllCredentialSources returns every Credential Source of the Namespace
// the caller may read.
func (c *Client) ListAllCredentialSources(ctx context.Context, ns string) ([]CredentialSource, error) {
	return listAll(ctx, func(ctx context.Context, p Page) ([]CredentialSource, string, error) {
		return c.ListCredentialSources(ctx, ns, p)
	})
}
