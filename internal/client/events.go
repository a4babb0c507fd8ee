package client

import (
	"context"

	"github.com/openclaw/occ/internal/client/gen"
)

// AuditEvent is one event of the audit log.
type AuditEvent = gen.AuditEvent

// AuditFilter selects audit events (GET /audit-events's query); "" leaves
// a field open. Times are as the API writes them.
type AuditFilter struct {
	Action, Kind, Outcome, ActorID, ResourceID, Since, Until string
	// NamespaceID filters the installation's events; with ListAuditEvents's
	// ns set, that Namespace's events are listed instead (namespace:administer).
	NamespaceID string
}

// opt returns nil for "", else &s.
func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ListAuditEvents returns one page of audit events, newest first: the
// installation's (ns "", installation:administer) or the Namespace's.
func (c *Client) ListAuditEvents(ctx context.Context, ns string, f AuditFilter, p Page) ([]AuditEvent, string, error) {
	if ns == "" {
		params := &gen.ListAuditEventsParams{PageSize: p.sizeParam(), PageToken: p.tokenParam(), Action: opt(f.Action),
			ActorId: opt(f.ActorID), ResourceId: opt(f.ResourceID), NamespaceId: opt(f.NamespaceID), Since: opt(f.Since), Until: opt(f.Until)}
		if f.Kind != "" {
			k := gen.ListAuditEventsParamsKind(f.Kind)
			params.Kind = &k
		}
		if f.Outcome != "" {
			o := gen.ListAuditEventsParamsOutcome(f.Outcome)
			params.Outcome = &o
		}
		res, err := c.api.ClientInterface.ListAuditEvents(ctx, params)
		return pageOf[AuditEvent]("list audit events", res, err)
	}
	params := &gen.ListNamespaceAuditEventsParams{PageSize: p.sizeParam(), PageToken: p.tokenParam(), Action: opt(f.Action),
		ActorId: opt(f.ActorID), ResourceId: opt(f.ResourceID), Since: opt(f.Since), Until: opt(f.Until)}
	if f.Kind != "" {
		k := gen.ListNamespaceAuditEventsParamsKind(f.Kind)
		params.Kind = &k
	}
	if f.Outcome != "" {
		o := gen.ListNamespaceAuditEventsParamsOutcome(f.Outcome)
		params.Outcome = &o
	}
	res, err := c.api.ClientInterface.ListNamespaceAuditEvents(ctx, ns, params)
	return pageOf[AuditEvent]("list audit events", res, err)
}

// ListAgentRevisions returns one page of an Agent's revisions, oldest
// first; a revision's ID is its deployment's.
func (c *Client) ListAgentRevisions(ctx context.Context, ns, agent string, p Page) ([]AgentRevision, string, error) {
	res, err := c.api.ClientInterface.ListAgentRevisions(ctx, ns, agent, &gen.ListAgentRevisionsParams{PageSize: p.sizeParam(), PageToken: p.tokenParam()})
	return pageOf[AgentRevision]("list revisions", res, err)
}

// ListAllAgentRevisions returns every revision of an Agent the caller may
// read.
func (c *Client) ListAllAgentRevisions(ctx context.Context, ns, agent string) ([]AgentRevision, error) {
	return listAll(ctx, func(ctx context.Context, p Page) ([]AgentRevision, string, error) {
		return c.ListAgentRevisions(ctx, ns, agent, p)
	})
}
