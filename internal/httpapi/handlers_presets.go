package httpapi

import (
	"context"

	"github.com/oapi-codegen/nullable"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/httpapi/gen"
	"github.com/openclaw/occ/internal/occ"
)

func fromHarness(h *gen.HarnessAuth) *occ.HarnessAuth {
	if h == nil {
		return nil
	}
	out := &occ.HarnessAuth{Method: string(h.Method), ServiceAccountID: deref(h.ServiceAccountId), SourceID: deref(h.SourceId)}
	if h.Source != nil {
		out.Source = &occ.SecretRef{Kind: string(h.Source.Kind), NamespaceID: deref(h.Source.NamespaceId), ID: h.Source.Id}
	}
	return out
}

func toHarness(h *occ.HarnessAuth) nullable.Nullable[gen.HarnessAuth] {
	if h == nil {
		return nullable.NewNullNullable[gen.HarnessAuth]()
	}
	out := gen.HarnessAuth{Method: gen.HarnessAuthMethod(h.Method)}
	if h.ServiceAccountID != "" {
		out.ServiceAccountId = &h.ServiceAccountID
	}
	if h.SourceID != "" {
		out.SourceId = &h.SourceID
	}
	if h.Source != nil {
		ns := h.Source.NamespaceID
		out.Source = &struct {
			Id          string                    `json:"id"`
			Kind        gen.HarnessAuthSourceKind `json:"kind"`
			NamespaceId *gen.NamespaceId          `json:"namespaceId,omitempty"`
		}{Id: h.Source.ID, Kind: gen.HarnessAuthSourceKind(h.Source.Kind), NamespaceId: &ns}
	}
	return nullable.NewNullableWithValue(out)
}

func fromPlugins(p *gen.PluginSelections) map[string]occ.PluginSelection {
	if p == nil {
		return nil
	}
	out := make(map[string]occ.PluginSelection, len(*p))
	for id, sel := range *p {
		out[id] = occ.PluginSelection{ApprovalPolicy: deref(sel.ApprovalPolicy)}
	}
	return out
}

func toPlugins(ps map[string]occ.PluginSelection) *gen.PluginSelections {
	out := gen.PluginSelections{}
	for id, sel := range ps {
		v := struct {
			ApprovalPolicy *gen.PluginSelectionsApprovalPolicy `json:"approvalPolicy,omitempty"`
		}{}
		if sel.ApprovalPolicy != "" {
			p := gen.PluginSelectionsApprovalPolicy(sel.ApprovalPolicy)
			v.ApprovalPolicy = &p
		}
		out[id] = v
	}
	return &out
}

func toPreset(p occ.Preset) gen.Preset {
	out := gen.Preset{Id: p.ID, NamespaceId: p.NamespaceID, Name: p.Name, Source: gen.PresetSource(p.Source),
		CreatedAt: occ.FormatTime(p.CreatedAt), UpdatedAt: occ.FormatTime(p.UpdatedAt), Etag: etag(p.Version)}
	if p.ReadError != nil {
		out.ConfigurationReadError = &gen.ReadError{Code: gen.ReadErrorCode(p.ReadError.Code), Field: p.ReadError.Field}
		return out
	}
	s := p.Settings
	mode := nullable.NewNullNullable[gen.ExecutionMode]()
	if s.ExecutionMode != "" {
		mode = nullable.NewNullableWithValue(gen.ExecutionMode(s.ExecutionMode))
	}
	out.ExecutionMode, out.BackendId, out.ConfigurationId = mode, nullStr(s.BackendID), nullStr(s.ConfigurationID)
	out.HarnessAuth, out.Plugins = toHarness(s.HarnessAuth), toPlugins(s.Plugins)
	return out
}

// optional turns a tri-state PATCH field into the use case's form.
func optional[G, T any](n nullable.Nullable[G], conv func(G) T) app.Optional[T] {
	switch {
	case !n.IsSpecified():
		return app.Optional[T]{}
	case n.IsNull():
		return app.Optional[T]{Set: true, Null: true}
	}
	v, _ := n.Get()
	return app.Optional[T]{Set: true, Value: conv(v)}
}

func (h *handlers) ListPresets(ctx context.Context, r gen.ListPresetsRequestObject) (gen.ListPresetsResponseObject, error) {
	p, err := h.app.ListPresets(ctx, callerFrom(ctx), r.NamespaceId, page(r.Params.PageSize, r.Params.PageToken))
	if err != nil {
		return nil, err
	}
	return gen.ListPresets200JSONResponse{Data: mapItems(p.Items, toPreset), Meta: listMeta(ctx, p.Next)}, nil
}

func (h *handlers) CreatePreset(ctx context.Context, r gen.CreatePresetRequestObject) (gen.CreatePresetResponseObject, error) {
	b := r.Body
	s := occ.PresetSettings{BackendID: deref(b.BackendId), ConfigurationID: deref(b.ConfigurationId),
		HarnessAuth: fromHarness(b.HarnessAuth), Plugins: fromPlugins(b.Plugins)}
	if b.ExecutionMode != nil {
		s.ExecutionMode = string(*b.ExecutionMode)
	}
	p, err := h.app.CreatePreset(ctx, callerFrom(ctx), r.NamespaceId, b.Name, s)
	if err != nil {
		return nil, err
	}
	tag := etag(p.Version)
	return gen.CreatePreset201JSONResponse{Body: gen.PresetEnvelope{Data: toPreset(p), Meta: meta(ctx)},
		Headers: gen.CreatePreset201ResponseHeaders{ETag: &tag}}, nil
}

func (h *handlers) GetPreset(ctx context.Context, r gen.GetPresetRequestObject) (gen.GetPresetResponseObject, error) {
	p, err := h.app.GetPreset(ctx, callerFrom(ctx), r.NamespaceId, r.PresetId)
	if err != nil {
		return nil, err
	}
	tag := etag(p.Version)
	return gen.GetPreset200JSONResponse{Body: gen.PresetEnvelope{Data: toPreset(p), Meta: meta(ctx)},
		Headers: gen.GetPreset200ResponseHeaders{ETag: &tag}}, nil
}

func (h *handlers) UpdatePreset(ctx context.Context, r gen.UpdatePresetRequestObject) (gen.UpdatePresetResponseObject, error) {
	b := r.Body
	str := func(s string) string { return s }
	patch := app.PresetPatch{Name: b.Name,
		ExecutionMode:   optional(b.ExecutionMode, func(m gen.ExecutionMode) string { return string(m) }),
		BackendID:       optional(b.BackendId, str),
		ConfigurationID: optional(b.ConfigurationId, str),
		HarnessAuth:     optional(b.HarnessAuth, func(h gen.HarnessAuth) *occ.HarnessAuth { return fromHarness(&h) }),
		Plugins:         fromPlugins(b.Plugins), PluginsSet: b.Plugins != nil}
	p, err := h.app.UpdatePreset(ctx, callerFrom(ctx), r.NamespaceId, r.PresetId, patch, ifMatch(r.Params.IfMatch))
	if err != nil {
		return nil, err
	}
	tag := etag(p.Version)
	return gen.UpdatePreset200JSONResponse{Body: gen.PresetEnvelope{Data: toPreset(p), Meta: meta(ctx)},
		Headers: gen.UpdatePreset200ResponseHeaders{ETag: &tag}}, nil
}

func (h *handlers) DeletePreset(ctx context.Context, r gen.DeletePresetRequestObject) (gen.DeletePresetResponseObject, error) {
	if err := h.app.DeletePreset(ctx, callerFrom(ctx), r.NamespaceId, r.PresetId, ifMatch(r.Params.IfMatch)); err != nil {
		return nil, err
	}
	return gen.DeletePreset204Response{}, nil
}
