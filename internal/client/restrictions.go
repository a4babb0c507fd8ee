package client

import (
	"context"
	"net/http"

	"github.com/openclaw/occ/internal/client/gen"
)

// Restriction denies one permission to a principal at a scope or on one
// resource, whatever its bindings grant.
type Restriction = gen.Restriction

// RestrictionCreate is the body of a restriction create.
type RestrictionCreate = gen.RestrictionCreate

// Like the roles and bindings methods, these act in the Namespace ns, or
// at installation scope when ns is "".

// ListRestrictions returns one page of the scope's restrictions.
func (c *Client) ListRestrictions(ctx context.Context, ns string, p Page) ([]Restriction, string, error) {
	if ns == "" {
		res, err := c.api.ClientInterface.ListRestrictions(ctx, &gen.ListRestrictionsParams{PageSize: p.sizeParam(), PageToken: p.tokenParam()})
		return pageOf[Restriction]("list restrictions", res, err)
	}
	res, err := c.api.ClientInterface.ListNamespaceRestrictions(ctx, ns, &gen.ListNamespaceRestrictionsParams{PageSize: p.sizeParam(), PageToken: p.tokenParam()})
	return pageOf[Restriction]("list restrictions", res, err)
}

// ListAllRestrictions returns every restriction of the scope.
func (c *Client) ListAllRestrictions(ctx context.Context, ns string) ([]Restriction, error) {
	return listAll(ctx, func(ctx context.Context, p Page) ([]Restriction, string, error) {
		return c.ListRestrictions(ctx, ns, p)
	})
}

// CreateRestriction creates a restriction at the scope.
func (c *Client) CreateRestriction(ctx context.Context, ns string, body RestrictionCreate) (*Restriction, error) {
	var (
		res *http.Response
		err error
	)
	if ns == "" {
		res, err = c.api.ClientInterface.CreateRestriction(ctx, &gen.CreateRestrictionParams{}, body)
	} else {
		res, err = c.api.ClientInterface.CreateNamespaceRestriction(ctx, ns, &gen.CreateNamespaceRestrictionParams{}, body)
	}
	return dataOf[Restriction]("create restriction", http.StatusCreated, res, err)
}

// GetRestriction returns a restriction of the scope.
func (c *Client) GetRestriction(ctx context.Context, ns, id string) (*Restriction, error) {
	var (
		res *http.Response
		err error
	)
	if ns == "" {
		res, err = c.api.ClientInterface.GetRestriction(ctx, id)
	} else {
		res, err = c.api.ClientInterface.GetNamespaceRestriction(ctx, ns, id)
	}
	return dataOf[Restriction]("get restriction", http.StatusOK, res, err)
}

// DeleteRestriction deletes a restriction of the scope.
func (c *Client) DeleteRestriction(ctx context.Context, ns, id string) error {
	var (
		res *http.Response
		err error
	)
	if ns == "" {
		res, err = c.api.ClientInterface.DeleteRestriction(ctx, id)
	} else {
		res, err = c.api.ClientInterface.DeleteNamespaceRestriction(ctx, ns, id)
	}
	return noContentOf("delete restriction", res, err)
}
