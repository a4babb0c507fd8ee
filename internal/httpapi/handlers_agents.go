package httpapi

import (
	"context"

	"github.com/oapi-codegen/nullable"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/httpapi/gen"
	"github.com/openclaw/occ/internal/occ"
)

func toAgent(g occ.Agent) gen.Agent {
	out := gen.Agent{Id: g.ID, NamespaceId: g.NamespaceID, Name: g.Name, ConfigurationId: g.ConfigurationID,
		ServicePrincipalId: g.ServicePrincipalID, Status: gen.AgentStatus(g.Status), DesiredRuntimeState: gen.AgentDesiredRuntimeState(g.DesiredState),
		ActiveRevisionId: nullStr(g.ActiveRevisionID), CreatedAt: occ.FormatTime(g.CreatedAt), UpdatedAt: occ.FormatTime(g.UpdatedAt),
		Etag: etag(g.Version), BackendId: nullStr(g.Settings.BackendID)}
	if !g.Unreadable["executionMode"] {
		m := gen.ExecutionMode(g.Settings.ExecutionMode)
		out.ExecutionMode = &m
	}
	if !g.Unreadable["harnessAuth"] {
		out.HarnessAuth = toHarness(g.Settings.HarnessAuth)
	}
	if !g.Unreadable["plugins"] {
		out.Plugins = toPlugins(g.Settings.Plugins)
	}
	if g.ReadError != nil {
		out.ConfigurationReadError = &gen.ReadError{Code: gen.ReadErrorCode(g.ReadError.Code), Field: g.ReadError.Field}
	}
	return out
}

func workspaceFiles(w *gen.WorkspaceFiles) map[string]string {
	if w == nil {
		return nil
	}
	out := map[string]string{}
	for name, v := range map[string]*string{"AGENTS.md": w.AGENTSMd, "SOUL.md": w.SOULMd, "IDENTITY.md": w.IDENTITYMd, "USER.md": w.USERMd} {
		if v != nil {
			out[name] = *v
		}
	}
	return out
}

func backendOpt(n nullable.Nullable[gen.BackendId]) app.Optional[string] {
	return optional(n, func(b gen.BackendId) string { return b })
}

func harnessOpt(n nullable.Nullable[gen.HarnessAuth]) app.Optional[*occ.HarnessAuth] {
	return optional(n, func(h gen.HarnessAuth) *occ.HarnessAuth { return fromHarness(&h) })
}

func (h *handlers) ListAgents(ctx context.Context, r gen.ListAgentsRequestObject) (gen.ListAgentsResponseObject, error) {
	p, err := h.app.ListAgents(ctx, callerFrom(ctx), r.NamespaceId, page(r.Params.PageSize, r.Params.PageToken))
	if err != nil {
		return nil, err
	}
	return gen.ListAgents200JSONResponse{Data: mapItems(p.Items, toAgent), Meta: listMeta(ctx, p.Next)}, nil
}

func (h *handlers) CreateAgent(ctx context.Context, r gen.CreateAgentRequestObject) (gen.CreateAgentResponseObject, error) {
	b := r.Body
	in := app.AgentInput{Name: b.Name, ConfigurationID: b.ConfigurationId, BackendID: backendOpt(b.BackendId), HarnessAuth: harnessOpt(b.HarnessAuth),
		Plugins: fromPlugins(b.Plugins), PresetID: deref(b.PresetId), InitialWorkspaceFiles: workspaceFiles(b.InitialWorkspaceFiles),
		WorkspaceDefaultsID: deref(b.WorkspaceDefaultsId)}
	if b.ExecutionMode != nil {
		in.ExecutionMode = string(*b.ExecutionMode)
	}
	g, err := h.app.CreateAgent(ctx, callerFrom(ctx), r.NamespaceId, in)
	if err != nil {
		return nil, err
	}
	tag := etag(g.Version)
	return gen.CreateAgent201JSONResponse{Body: gen.AgentEnvelope{Data: toAgent(g), Meta: meta(ctx)},
		Headers: gen.CreateAgent201ResponseHeaders{ETag: &tag}}, nil
}

func (h *handlers) GetAgent(ctx context.Context, r gen.GetAgentRequestObject) (gen.GetAgentResponseObject, error) {
	g, err := h.app.GetAgent(ctx, callerFrom(ctx), r.NamespaceId, r.AgentId)
	if err != nil {
		return nil, err
	}
	tag := etag(g.Version)
	return gen.GetAgent200JSONResponse{Body: gen.AgentEnvelope{Data: toAgent(g), Meta: meta(ctx)},
		Headers: gen.GetAgent200ResponseHeaders{ETag: &tag}}, nil
}

func (h *handlers) UpdateAgent(ctx context.Context, r gen.UpdateAgentRequestObject) (gen.UpdateAgentResponseObject, error) {
	b := r.Body
	p := app.AgentPatch{ConfigurationID: b.ConfigurationId, BackendID: backendOpt(b.BackendId), HarnessAuth: harnessOpt(b.HarnessAuth),
		Plugins: fromPlugins(b.Plugins), PluginsSet: b.Plugins != nil}
	if b.ExecutionMode != nil {
		p.ExecutionMode = string(*b.ExecutionMode)
	}
	g, err := h.app.UpdateAgent(ctx, callerFrom(ctx), r.NamespaceId, r.AgentId, p, ifMatch(r.Params.IfMatch))
	if err != nil {
		return nil, err
	}
	tag := etag(g.Version)
	return gen.UpdateAgent200JSONResponse{Body: gen.AgentEnvelope{Data: toAgent(g), Meta: meta(ctx)},
		Headers: gen.UpdateAgent200ResponseHeaders{ETag: &tag}}, nil
}

func toRevision(v occ.Revision) gen.AgentRevision {
	out := gen.AgentRevision{Id: v.ID, AgentId: v.AgentID, NamespaceId: v.NamespaceID, Number: v.Number,
		CreatedAt: occ.FormatTime(v.CreatedAt), CreatedBy: v.CreatedBy}
	if v.ReadError != nil {
		out.ConfigurationReadError = &gen.ReadError{Code: gen.ReadErrorCode(v.ReadError.Code), Field: v.ReadError.Field}
	}
	s := v.Snapshot
	if s == nil {
		return out
	}
	// Every readable sibling of an unreadable field is shown; the
	// unreadable ones are left out.
	if !v.Unreadable["configuration"] {
		out.Configuration = &struct {
			Document   gen.ConfigurationDocument `json:"document"`
			Generation int64                     `json:"generation"`
			Id         string                    `json:"id"`
			Kind       string                    `json:"kind"`
		}{Document: s.Configuration.Document, Generation: s.Configuration.Generation, Id: s.Configuration.ID, Kind: s.Configuration.Kind}
	}
	if !v.Unreadable["executionMode"] {
		mode := gen.ExecutionMode(s.ExecutionMode)
		out.ExecutionMode = &mode
	}
	if !v.Unreadable["backendId"] {
		out.BackendId = nullStr(s.BackendID)
	}
	if !v.Unreadable["harnessAuth"] {
		out.HarnessAuth = toHarness(s.HarnessAuth)
	}
	if !v.Unreadable["plugins"] {
		out.Plugins = toPlugins(s.Plugins)
	}
	if !v.Unreadable["computeDriver"] {
		out.ComputeDriver = &s.ComputeDriver
	}
	if !v.Unreadable["servicePrincipalId"] {
		out.ServicePrincipalId = &s.ServicePrincipalID
	}
	return out
}

func (h *handlers) ListAgentRevisions(ctx context.Context, r gen.ListAgentRevisionsRequestObject) (gen.ListAgentRevisionsResponseObject, error) {
	p, err := h.app.ListRevisions(ctx, callerFrom(ctx), r.NamespaceId, r.AgentId, page(r.Params.PageSize, r.Params.PageToken))
	if err != nil {
		return nil, err
	}
	return gen.ListAgentRevisions200JSONResponse{Data: mapItems(p.Items, toRevision), Meta: listMeta(ctx, p.Next)}, nil
}

func (h *handlers) GetAgentRevision(ctx context.Context, r gen.GetAgentRevisionRequestObject) (gen.GetAgentRevisionResponseObject, error) {
	v, err := h.app.GetRevision(ctx, callerFrom(ctx), r.NamespaceId, r.AgentId, r.RevisionId)
	if err != nil {
		return nil, err
	}
	return gen.GetAgentRevision200JSONResponse{Data: toRevision(v), Meta: meta(ctx)}, nil
}
