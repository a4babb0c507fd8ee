package client

import (
	"context"
	"net/http"

	"github.com/openclaw/occ/internal/client/gen"
)

// The IAM methods act at one scope: the Namespace ns, or the installation
// when ns is "" (its routes under /iam need installation:administer).

// ListRoles returns one page of the scope's roles (at installation scope,
// the built-in ones too) and the next page's token ("" on the last page).
func (c *Client) ListRoles(ctx context.Context, ns string, p Page) ([]Role, string, error) {
	var (
		list *gen.RoleList
		res  *http.Response
		raw  []byte
		err  error
	)
	if ns == "" {
		var r *gen.ListRolesResponse
		if r, err = c.api.ListRolesWithResponse(ctx, &gen.ListRolesParams{PageSize: p.sizeParam(), PageToken: p.tokenParam()}); err == nil {
			list, res, raw = r.JSON200, r.HTTPResponse, r.Body
		}
	} else {
		var r *gen.ListNamespaceRolesResponse
		if r, err = c.api.ListNamespaceRolesWithResponse(ctx, ns, &gen.ListNamespaceRolesParams{PageSize: p.sizeParam(), PageToken: p.tokenParam()}); err == nil {
			list, res, raw = r.JSON200, r.HTTPResponse, r.Body
		}
	}
	if err != nil {
		return nil, "", requestError("list roles", err)
	}
	if list == nil {
		return nil, "", unexpected(res, raw)
	}
	return list.Data, nextToken(list.Meta), nil
}

// ListAllRoles returns every role of the scope.
func (c *Client) ListAllRoles(ctx context.Context, ns string) ([]Role, error) {
	return listAll(ctx, func(ctx context.Context, p Page) ([]Role, string, error) { return c.ListRoles(ctx, ns, p) })
}

// CreateRole creates a custom role at the scope; the caller must hold
// every permission it names there.
func (c *Client) CreateRole(ctx context.Context, ns string, body RoleCreate) (*Role, error) {
	var (
		env *gen.RoleEnvelope
		res *http.Response
		raw []byte
		err error
	)
	if ns == "" {
		var r *gen.CreateRoleResponse
		if r, err = c.api.CreateRoleWithResponse(ctx, &gen.CreateRoleParams{}, body); err == nil {
			env, res, raw = r.JSON201, r.HTTPResponse, r.Body
		}
	} else {
		var r *gen.CreateNamespaceRoleResponse
		if r, err = c.api.CreateNamespaceRoleWithResponse(ctx, ns, &gen.CreateNamespaceRoleParams{}, body); err == nil {
			env, res, raw = r.JSON201, r.HTTPResponse, r.Body
		}
	}
	if err != nil {
		return nil, requestError("create role", err)
	}
	if env == nil {
		return nil, unexpected(res, raw)
	}
	return &env.Data, nil
}

// GetRole returns one role of the scope (a role of another scope is
// NOT_FOUND).
func (c *Client) GetRole(ctx context.Context, ns, id string) (*Role, error) {
	var (
		env *gen.RoleEnvelope
		res *http.Response
		raw []byte
		err error
	)
	if ns == "" {
		var r *gen.GetRoleResponse
		if r, err = c.api.GetRoleWithResponse(ctx, id); err == nil {
			env, res, raw = r.JSON200, r.HTTPResponse, r.Body
		}
	} else {
		var r *gen.GetNamespaceRoleResponse
		if r, err = c.api.GetNamespaceRoleWithResponse(ctx, ns, id); err == nil {
			env, res, raw = r.JSON200, r.HTTPResponse, r.Body
		}
	}
	if err != nil {
		return nil, requestError("get role", err)
	}
	if env == nil {
		return nil, unexpected(res, raw)
	}
	return &env.Data, nil
}

// DeleteRole deletes a custom role of the scope that no binding uses.
func (c *Client) DeleteRole(ctx context.Context, ns, id string) error {
	var (
		res *http.Response
		raw []byte
		err error
	)
	if ns == "" {
		var r *gen.DeleteRoleResponse
		if r, err = c.api.DeleteRoleWithResponse(ctx, id); err == nil {
			res, raw = r.HTTPResponse, r.Body
		}
	} else {
		var r *gen.DeleteNamespaceRoleResponse
		if r, err = c.api.DeleteNamespaceRoleWithResponse(ctx, ns, id); err == nil {
			res, raw = r.HTTPResponse, r.Body
		}
	}
	if err != nil {
		return requestError("delete role", err)
	}
	if res == nil || res.StatusCode != http.StatusNoContent {
		return unexpected(res, raw)
	}
	return nil
}
