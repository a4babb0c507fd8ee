package client

import (
	"context"
	"fmt"

	"github.com/openclaw/occ/internal/client/gen"
)

// ListNamespaces returns one page of the Namespaces the caller may read and
// the next page's token ("" on the last page).
func (c *Client) ListNamespaces(ctx context.Context, p Page) ([]Namespace, string, error) {
	r, err := c.api.ListNamespacesWithResponse(ctx, &gen.ListNamespacesParams{PageSize: p.sizeParam(), PageToken: p.tokenParam()})
	if err != nil {
		return nil, "", requestError("list namespaces", err)
	}
	if r.JSON200 == nil {
		return nil, "", unexpected(r.HTTPResponse, r.Body)
	}
	return r.JSON200.Data, nextToken(r.JSON200.Meta), nil
}

// ListAllNamespaces returns every Namespace the caller may read, following
// the pages.
func (c *Client) ListAllNamespaces(ctx context.Context) ([]Namespace, error) {
	return listAll(ctx, c.ListNamespaces)
}

// NamespaceByName returns the readable Namespace with the name, or an
// *APIError NOT_FOUND.
func (c *Client) NamespaceByName(ctx context.Context, name string) (*Namespace, error) {
	all, err := c.ListAllNamespaces(ctx)
	if err != nil {
		return nil, err
	}
	for i := range all {
		if all[i].Name == name {
			return &all[i], nil
		}
	}
	return nil, &APIError{Status: 404, Code: CodeNotFound, Message: fmt.Sprintf("No Namespace named %q.", name)}
}

// CreateNamespace creates a Namespace; it starts provisioning (see
// WaitNamespace).
func (c *Client) CreateNamespace(ctx context.Context, name string) (*Namespace, error) {
	r, err := c.api.CreateNamespaceWithResponse(ctx, &gen.CreateNamespaceParams{}, gen.NamespaceCreate{Name: name})
	if err != nil {
		return nil, requestError("create namespace", err)
	}
	if r.JSON201 == nil {
		return nil, unexpected(r.HTTPResponse, r.Body)
	}
	return &r.JSON201.Data, nil
}

// GetNamespace returns a Namespace by ID.
func (c *Client) GetNamespace(ctx context.Context, id string) (*Namespace, error) {
	r, err := c.api.GetNamespaceWithResponse(ctx, id)
	if err != nil {
		return nil, requestError("get namespace", err)
	}
	if r.JSON200 == nil {
		return nil, unexpected(r.HTTPResponse, r.Body)
	}
	return &r.JSON200.Data, nil
}

// DeleteNamespace starts a Namespace's teardown (it must own nothing) and
// returns it, deleting. etag, when not "", is sent as If-Match.
func (c *Client) DeleteNamespace(ctx context.Context, id, etag string) (*Namespace, error) {
	r, err := c.api.DeleteNamespaceWithResponse(ctx, id, &gen.DeleteNamespaceParams{IfMatch: ifMatch(etag)})
	if err != nil {
		return nil, requestError("delete namespace", err)
	}
	if r.JSON202 == nil {
		return nil, unexpected(r.HTTPResponse, r.Body)
	}
	return &r.JSON202.Data, nil
}

// WaitNamespace polls a Namespace until it has the status (NamespaceGone:
// until its GET answers 404) and returns it (nil when gone). It gives up
// when the Namespace fails or disappears while another status is awaited,
// and when ctx ends.
func (c *Client) WaitNamespace(ctx context.Context, id, status string) (*Namespace, error) {
	for {
		ns, err := c.GetNamespace(ctx, id)
		switch {
		case err != nil && status == NamespaceGone && IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("wait for namespace %s to be %s: %w", id, status, err)
		case string(ns.Status) == status:
			return ns, nil
		case ns.Status == NamespaceFailed:
			return ns, fmt.Errorf("wait for namespace %s to be %s: it failed", id, status)
		}
		if err := sleep(ctx, c.poll); err != nil {
			return ns, fmt.Errorf("wait for namespace %s to be %s (still %s): %w", id, status, ns.Status, err)
		}
	}
}
