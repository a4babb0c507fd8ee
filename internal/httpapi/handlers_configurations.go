package httpapi

import (
	"context"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/httpapi/gen"
	"github.com/openclaw/occ/internal/occ"
)

func fromBindings(in *gen.SecretBindings) *map[string]occ.SecretBinding {
	if in == nil {
		return nil
	}
	out := make(map[string]occ.SecretBinding, len(*in))
	for n, b := range *in {
		sb := occ.SecretBinding{Source: occ.SecretRef{Kind: string(b.Source.Kind), NamespaceID: b.Source.NamespaceId, ID: b.Source.Id}}
		if b.Delivery != nil {
			sb.Delivery = string(*b.Delivery)
		}
		out[n] = sb
	}
	return &out
}

func toConfiguration(c occ.Configuration) gen.Configuration {
	out := gen.Configuration{Id: c.ID, NamespaceId: c.NamespaceID, Name: c.Name, Kind: gen.ConfigurationKind(c.Kind),
		Generation: c.Generation, CreatedAt: occ.FormatTime(c.CreatedAt), UpdatedAt: occ.FormatTime(c.UpdatedAt), Etag: etag(c.Version)}
	if c.Values != nil {
		v := gen.ConfigurationDocument(c.Values)
		out.Values = &v
	}
	if c.SecretBindings != nil {
		bs := gen.SecretBindings{}
		for n, b := range c.SecretBindings {
			d := gen.SecretBindingDelivery(b.Delivery)
			bs[n] = gen.SecretBinding{Delivery: &d, Source: gen.SecretRef{Kind: gen.SecretRefKind(b.Source.Kind), NamespaceId: b.Source.NamespaceID, Id: b.Source.ID}}
		}
		out.SecretBindings = &bs
	}
	if c.ReadError != nil {
		out.ConfigurationReadError = &gen.ReadError{Code: gen.ReadErrorCode(c.ReadError.Code), Field: c.ReadError.Field}
	}
	return out
}

func (h *handlers) ListConfigurations(ctx context.Context, r gen.ListConfigurationsRequestObject) (gen.ListConfigurationsResponseObject, error) {
	p, err := h.app.ListConfigurations(ctx, callerFrom(ctx), r.NamespaceId, page(r.Params.PageSize, r.Params.PageToken))
	if err != nil {
		return nil, err
	}
	return gen.ListConfigurations200JSONResponse{Data: mapItems(p.Items, toConfiguration), Meta: listMeta(ctx, p.Next)}, nil
}

func (h *handlers) CreateConfiguration(ctx context.Context, r gen.CreateConfigurationRequestObject) (gen.CreateConfigurationResponseObject, error) {
	in := app.ConfigurationInput{Name: r.Body.Name, Kind: string(r.Body.Kind), Values: r.Body.Values}
	if bs := fromBindings(r.Body.SecretBindings); bs != nil {
		in.SecretBindings = *bs
	}
	c, err := h.app.CreateConfiguration(ctx, callerFrom(ctx), r.NamespaceId, in)
	if err != nil {
		return nil, err
	}
	tag := etag(c.Version)
	return gen.CreateConfiguration201JSONResponse{Body: gen.ConfigurationEnvelope{Data: toConfiguration(c), Meta: meta(ctx)},
		Headers: gen.CreateConfiguration201ResponseHeaders{ETag: &tag}}, nil
}

func (h *handlers) GetConfiguration(ctx context.Context, r gen.GetConfigurationRequestObject) (gen.GetConfigurationResponseObject, error) {
	c, err := h.app.GetConfiguration(ctx, callerFrom(ctx), r.NamespaceId, r.ConfigurationId)
	if err != nil {
		return nil, err
	}
	tag := etag(c.Version)
	return gen.GetConfiguration200JSONResponse{Body: gen.ConfigurationEnvelope{Data: toConfiguration(c), Meta: meta(ctx)},
		Headers: gen.GetConfiguration200ResponseHeaders{ETag: &tag}}, nil
}

func (h *handlers) UpdateConfiguration(ctx context.Context, r gen.UpdateConfigurationRequestObject) (gen.UpdateConfigurationResponseObject, error) {
	p := app.ConfigurationPatch{SecretBindings: fromBindings(r.Body.SecretBindings)}
	if r.Body.Name != nil {
		p.Name = r.Body.Name
	}
	if r.Body.Values != nil {
		p.Values = *r.Body.Values
	}
	c, err := h.app.UpdateConfiguration(ctx, callerFrom(ctx), r.NamespaceId, r.ConfigurationId, p, ifMatch(r.Params.IfMatch))
	if err != nil {
		return nil, err
	}
	tag := etag(c.Version)
	return gen.UpdateConfiguration200JSONResponse{Body: gen.ConfigurationEnvelope{Data: toConfiguration(c), Meta: meta(ctx)},
		Headers: gen.UpdateConfiguration200ResponseHeaders{ETag: &tag}}, nil
}

func (h *handlers) DeleteConfiguration(ctx context.Context, r gen.DeleteConfigurationRequestObject) (gen.DeleteConfigurationResponseObject, error) {
	if err := h.app.DeleteConfiguration(ctx, callerFrom(ctx), r.NamespaceId, r.ConfigurationId, ifMatch(r.Params.IfMatch)); err != nil {
		return nil, err
	}
	return gen.DeleteConfiguration204Response{}, nil
}
