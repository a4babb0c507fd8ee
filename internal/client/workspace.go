package client

import (
	"context"
	"net/http"

	"github.com/openclaw/occ/internal/client/gen"
)

// WorkspaceFile is a file of an Agent's live workspace.
type WorkspaceFile = gen.WorkspaceFileContent

// WorkspaceFileWritten is what a workspace write reports.
type WorkspaceFileWritten = gen.WorkspaceFileWritten

// GetWorkspaceFile reads a file (AGENTS.md, SOUL.md, IDENTITY.md or
// USER.md) of the Agent's live workspace through its gateway.
func (c *Client) GetWorkspaceFile(ctx context.Context, ns, agent, name string) (*WorkspaceFile, error) {
	res, err := c.api.ClientInterface.GetWorkspaceFile(ctx, ns, agent, gen.WorkspaceFileName(name))
	return dataOf[WorkspaceFile]("get workspace file", http.StatusOK, res, err)
}

// PutWorkspaceFile creates or replaces a file of the Agent's live
// workspace.
func (c *Client) PutWorkspaceFile(ctx context.Context, ns, agent, name, content string) (*WorkspaceFileWritten, error) {
	res, err := c.api.ClientInterface.PutWorkspaceFile(ctx, ns, agent, gen.WorkspaceFileName(name), gen.WorkspaceFileWrite{Content: content})
	return dataOf[WorkspaceFileWritten]("put workspace file", http.StatusOK, res, err)
}
