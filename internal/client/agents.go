package client

import (
	"context"
	"fmt"

	"github.com/openclaw/occ/internal/client/gen"
)

// ListAgents returns one page of the Namespace's Agents the caller may read
// and the next page's token ("" on the last page).
func (c *Client) ListAgents(ctx context.Context, ns string, p Page) ([]Agent, string, error) {
	r, err := c.api.ListAgentsWithResponse(ctx, ns, &gen.ListAgentsParams{PageSize: p.sizeParam(), PageToken: p.tokenParam()})
	if err != nil {
		return nil, "", requestError("list agents", err)
	}
	if r.JSON200 == nil {
		return nil, "", unexpected(r.HTTPResponse, r.Body)
	}
	return r.JSON200.Data, nextToken(r.JSON200.Meta), nil
}

// ListAllAgents returns every Agent of the Namespace the caller may read.
func (c *Client) ListAllAgents(ctx context.Context, ns string) ([]Agent, error) {
	return listAll(ctx, func(ctx context.Context, p Page) ([]Agent, string, error) { return c.ListAgents(ctx, ns, p) })
}

// CreateAgent creates an Agent (active, desired stopped, no revision) with
// its own service principal.
func (c *Client) CreateAgent(ctx context.Context, ns string, body AgentCreate) (*Agent, error) {
	r, err := c.api.CreateAgentWithResponse(ctx, ns, &gen.CreateAgentParams{}, body)
	if err != nil {
		return nil, requestError("create agent", err)
	}
	if r.JSON201 == nil {
		return nil, unexpected(r.HTTPResponse, r.Body)
	}
	return &r.JSON201.Data, nil
}

// GetAgent returns an Agent.
func (c *Client) GetAgent(ctx context.Context, ns, id string) (*Agent, error) {
	r, err := c.api.GetAgentWithResponse(ctx, ns, id)
	if err != nil {
		return nil, requestError("get agent", err)
	}
	if r.JSON200 == nil {
		return nil, unexpected(r.HTTPResponse, r.Body)
	}
	return &r.JSON200.Data, nil
}

// PatchAgent changes an Agent's draft (queuing no work). etag, when not "",
// is sent as If-Match.
func (c *Client) PatchAgent(ctx context.Context, ns, id string, body AgentPatch, etag string) (*Agent, error) {
	r, err := c.api.UpdateAgentWithResponse(ctx, ns, id, &gen.UpdateAgentParams{IfMatch: ifMatch(etag)}, body)
	if err != nil {
		return nil, requestError("update agent", err)
	}
	if r.JSON200 == nil {
		return nil, unexpected(r.HTTPResponse, r.Body)
	}
	return &r.JSON200.Data, nil
}

// DeployAgent admits an immutable revision of the saved draft and returns
// it; its ID is the deployment ID (see WaitDeployment).
func (c *Client) DeployAgent(ctx context.Context, ns, id string) (*AgentRevision, error) {
	r, err := c.api.DeployAgentWithResponse(ctx, ns, id, &gen.DeployAgentParams{})
	if err != nil {
		return nil, requestError("deploy agent", err)
	}
	if r.JSON202 == nil {
		return nil, unexpected(r.HTTPResponse, r.Body)
	}
	return &r.JSON202.Data, nil
}

// StopAgent sets the Agent's desired state to stopped; the worker removes
// its execution.
func (c *Client) StopAgent(ctx context.Context, ns, id string) (*Agent, error) {
	r, err := c.api.StopAgentWithResponse(ctx, ns, id, &gen.StopAgentParams{})
	if err != nil {
		return nil, requestError("stop agent", err)
	}
	if r.JSON202 == nil {
		return nil, unexpected(r.HTTPResponse, r.Body)
	}
	return &r.JSON202.Data, nil
}

// DeleteAgent starts an Agent's teardown and returns it, deleting (see
// WaitAgentGone). Repeating it retries a failed teardown.
func (c *Client) DeleteAgent(ctx context.Context, ns, id string) (*Agent, error) {
	r, err := c.api.DeleteAgentWithResponse(ctx, ns, id)
	if err != nil {
		return nil, requestError("delete agent", err)
	}
	if r.JSON202 == nil {
		return nil, unexpected(r.HTTPResponse, r.Body)
	}
	return &r.JSON202.Data, nil
}

// WaitAgentGone polls a deleted Agent until its GET answers 404, or ctx
// ends.
func (c *Client) WaitAgentGone(ctx context.Context, ns, id string) error {
	for {
		_, err := c.GetAgent(ctx, ns, id)
		if IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("wait for agent %s to be deleted: %w", id, err)
		}
		if err := sleep(ctx, c.poll); err != nil {
			return fmt.Errorf("wait for agent %s to be deleted: %w", id, err)
		}
	}
}

// GetAgentRevision returns one immutable revision of an Agent.
func (c *Client) GetAgentRevision(ctx context.Context, ns, agent, rev string) (*AgentRevision, error) {
	r, err := c.api.GetAgentRevisionWithResponse(ctx, ns, agent, rev)
	if err != nil {
		return nil, requestError("get agent revision", err)
	}
	if r.JSON200 == nil {
		return nil, unexpected(r.HTTPResponse, r.Body)
	}
	return &r.JSON200.Data, nil
}

// APIKeyAuth is the harness binding that gives an Agent its model API key
// from a Secret of its Namespace (method api_key), for AgentCreate and
// AgentPatch: body.HarnessAuth.Set(client.APIKeyAuth(secretID)).
func APIKeyAuth(secretID string) HarnessAuth {
	h := HarnessAuth{Method: gen.HarnessAuthMethodApiKey}
	h.Source = &struct {
		Id          string                    `json:"id"`
		Kind        gen.HarnessAuthSourceKind `json:"kind"`
		NamespaceId *gen.NamespaceId          `json:"namespaceId,omitempty"`
	}{Id: secretID, Kind: gen.HarnessAuthSourceKindSecret}
	return h
}
