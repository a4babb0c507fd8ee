package client

import (
	"context"
	"net/http"

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

// CreateServiceAccount creates a service account at a configured Backend
// (no credential yet).
func (c *Client) CreateServiceAccount(ctx context.Context, ns, name, backend string) (*ServiceAccount, error) {
	res, err := c.api.ClientInterface.CreateServiceAccount(ctx, ns, &gen.CreateServiceAccountParams{}, gen.ServiceAccountCreate{Name: name, BackendId: backend})
	return dataOf[ServiceAccount]("create service account", http.StatusCreated, res, err)
}

// GetServiceAccount returns a service account (never its credential).
func (c *Client) GetServiceAccount(ctx context.Context, ns, id string) (*ServiceAccount, error) {
	res, err := c.api.ClientInterface.GetServiceAccount(ctx, ns, id)
	return dataOf[ServiceAccount]("get service account", http.StatusOK, res, err)
}

// IssueServiceAccountCredential has the account's Backend issue its
// credential, kept encrypted by the server.
func (c *Client) IssueServiceAccountCredential(ctx context.Context, ns, id string) (*ServiceAccount, error) {
	res, err := c.api.ClientInterface.IssueServiceAccountCredential(ctx, ns, id, &gen.IssueServiceAccountCredentialParams{})
	return dataOf[ServiceAccount]("issue service account credential", http.StatusCreated, res, err)
}

// DeleteServiceAccount deletes a service account nothing references.
func (c *Client) DeleteServiceAccount(ctx context.Context, ns, id, etag string) error {
	res, err := c.api.ClientInterface.DeleteServiceAccount(ctx, ns, id, &gen.DeleteServiceAccountParams{IfMatch: ifMatch(etag)})
	return noContentOf("delete service account", res, err)
}

// CreateCredentialSource creates and registers a credential source: body
// is a gen.CredentialSourceCreate or its JSON.
func (c *Client) CreateCredentialSource(ctx context.Context, ns string, body any) (*CredentialSource, error) {
	r, err := jsonBody("create credential source", body)
	if err != nil {
		return nil, err
	}
	res, err := c.api.ClientInterface.CreateCredentialSourceWithBody(ctx, ns, &gen.CreateCredentialSourceParams{}, contentJSON, r)
	return dataOf[CredentialSource]("create credential source", http.StatusCreated, res, err)
}

// GetCredentialSource returns a credential source.
func (c *Client) GetCredentialSource(ctx context.Context, ns, id string) (*CredentialSource, error) {
	res, err := c.api.ClientInterface.GetCredentialSource(ctx, ns, id)
	return dataOf[CredentialSource]("get credential source", http.StatusOK, res, err)
}

// UpdateCredentialSource replaces a ready source's Secrets: patch is a
// gen.CredentialSourcePatch or its JSON.
func (c *Client) UpdateCredentialSource(ctx context.Context, ns, id string, patch any, etag string) (*CredentialSource, error) {
	r, err := jsonBody("update credential source", patch)
	if err != nil {
		return nil, err
	}
	res, err := c.api.ClientInterface.UpdateCredentialSourceWithBody(ctx, ns, id, &gen.UpdateCredentialSourceParams{IfMatch: ifMatch(etag)}, contentJSON, r)
	return dataOf[CredentialSource]("update credential source", http.StatusOK, res, err)
}

// DeleteCredentialSource removes a credential source from its gateway and
// deletes it.
func (c *Client) DeleteCredentialSource(ctx context.Context, ns, id, etag string) error {
	res, err := c.api.ClientInterface.DeleteCredentialSource(ctx, ns, id, &gen.DeleteCredentialSourceParams{IfMatch: ifMatch(etag)})
	return noContentOf("delete credential source", res, err)
}
