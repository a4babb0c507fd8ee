package client

import (
	"context"
	"net/http"

	"github.com/openclaw/occ/internal/client/gen"
)

// ListBindings returns one page of the scope's bindings (the Namespace ns,
// or the installation for "") and the next page's token ("" on the last
// page).
func (c *Client) ListBindings(ctx context.Context, ns string, p Page) ([]Binding, string, error) {
	var (
		list *gen.BindingList
		res  *http.Response
		raw  []byte
		err  error
	)
	if ns == "" {
		var r *gen.ListBindingsResponse
		if r, err = c.api.ListBindingsWithResponse(ctx, &gen.ListBindingsParams{PageSize: p.sizeParam(), PageToken: p.tokenParam()}); err == nil {
			list, res, raw = r.JSON200, r.HTTPResponse, r.Body
		}
	} else {
		var r *gen.ListNamespaceBindingsResponse
		if r, err = c.api.ListNamespaceBindingsWithResponse(ctx, ns, &gen.ListNamespaceBindingsParams{PageSize: p.sizeParam(), PageToken: p.tokenParam()}); err == nil {
			list, res, raw = r.JSON200, r.HTTPResponse, r.Body
		}
	}
	if err != nil {
		return nil, "", requestError("list bindings", err)
	}
	if list == nil {
		return nil, "", unexpected(res, raw)
	}
	return list.Data, nextToken(list.Meta), nil
}

// ListAllBindings returns every binding of the scope.
func (c *Client) ListAllBindings(ctx context.Context, ns string) ([]Binding, error) {
	return listAll(ctx, func(ctx context.Context, p Page) ([]Binding, string, error) { return c.ListBindings(ctx, ns, p) })
}

// CreateBinding grants a role to a principal at the scope, or on the one
// resource of body.Target (Namespace scope only); the caller must hold
// every permission the role names there. The server does not refuse a
// binding that repeats an existing one.
func (c *Client) CreateBinding(ctx context.Context, ns string, body BindingCreate) (*Binding, error) {
	var (
		env *gen.BindingEnvelope
		res *http.Response
		raw []byte
		err error
	)
	if ns == "" {
		var r *gen.CreateBindingResponse
		if r, err = c.api.CreateBindingWithResponse(ctx, &gen.CreateBindingParams{}, body); err == nil {
			env, res, raw = r.JSON201, r.HTTPResponse, r.Body
		}
	} else {
		var r *gen.CreateNamespaceBindingResponse
		if r, err = c.api.CreateNamespaceBindingWithResponse(ctx, ns, &gen.CreateNamespaceBindingParams{}, body); err == nil {
			env, res, raw = r.JSON201, r.HTTPResponse, r.Body
		}
	}
	if err != nil {
		return nil, requestError("create binding", err)
	}
	if env == nil {
		return nil, unexpected(res, raw)
	}
	return &env.Data, nil
}

// GetBinding returns one binding of the scope (a binding of another scope
// is NOT_FOUND).
func (c *Client) GetBinding(ctx context.Context, ns, id string) (*Binding, error) {
	var (
		env *gen.BindingEnvelope
		res *http.Response
		raw []byte
		err error
	)
	if ns == "" {
		var r *gen.GetBindingResponse
		if r, err = c.api.GetBindingWithResponse(ctx, id); err == nil {
			env, res, raw = r.JSON200, r.HTTPResponse, r.Body
		}
	} else {
		var r *gen.GetNamespaceBindingResponse
		if r, err = c.api.GetNamespaceBindingWithResponse(ctx, ns, id); err == nil {
			env, res, raw = r.JSON200, r.HTTPResponse, r.Body
		}
	}
	if err != nil {
		return nil, requestError("get binding", err)
	}
	if env == nil {
		return nil, unexpected(res, raw)
	}
	return &env.Data, nil
}

// DeleteBinding removes one binding of the scope.
func (c *Client) DeleteBinding(ctx context.Context, ns, id string) error {
	var (
		res *http.Response
		raw []byte
		err error
	)
	if ns == "" {
		var r *gen.DeleteBindingResponse
		if r, err = c.api.DeleteBindingWithResponse(ctx, id); err == nil {
			res, raw = r.HTTPResponse, r.Body
		}
	} else {
		var r *gen.DeleteNamespaceBindingResponse
		if r, err = c.api.DeleteNamespaceBindingWithResponse(ctx, ns, id); err == nil {
			res, raw = r.HTTPResponse, r.Body
		}
	}
	if err != nil {
		return requestError("delete binding", err)
	}
	if res == nil || res.StatusCode != http.StatusNoContent {
		return unexpected(res, raw)
	}
	return nil
}
