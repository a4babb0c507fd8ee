package httpapi

import (
	"context"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/httpapi/gen"
	"github.com/openclaw/occ/internal/occ"
)

func toCredentialSource(s occ.CredentialSource) gen.CredentialSource {
	secrets := gen.CredentialSourceSecrets{}
	for f, ref := range s.Secrets {
		secrets[f] = gen.SecretRef{Kind: gen.SecretRefKind(ref.Kind), NamespaceId: ref.NamespaceID, Id: ref.ID}
	}
	cfg := gen.CredentialSourceConfig(s.Config)
	if cfg == nil {
		cfg = gen.CredentialSourceConfig{}
	}
	return gen.CredentialSource{Id: s.ID, NamespaceId: s.NamespaceID, Name: s.Name, Type: s.Type, Config: cfg, Secrets: secrets,
		State: gen.CredentialSourceState(s.State), CreatedAt: occ.FormatTime(s.CreatedAt), UpdatedAt: occ.FormatTime(s.UpdatedAt),
		Etag: etag(s.Version)}
}

// fromSourceSecrets maps the request's references; nil stays nil (absent).
func fromSourceSecrets(in *gen.CredentialSourceSecrets) map[string]occ.SecretRef {
	if in == nil {
		return nil
	}
	out := make(map[string]occ.SecretRef, len(*in))
	for f, ref := range *in {
		out[f] = occ.SecretRef{Kind: string(ref.Kind), NamespaceID: ref.NamespaceId, ID: ref.Id}
	}
	return out
}

func credentialSourceEnvelope(ctx context.Context, s occ.CredentialSource) (gen.CredentialSourceEnvelope, *string) {
	tag := etag(s.Version)
	return gen.CredentialSourceEnvelope{Data: toCredentialSource(s), Meta: meta(ctx)}, &tag
}

func (h *handlers) ListCredentialSources(ctx context.Context, r gen.ListCredentialSourcesRequestObject) (gen.ListCredentialSourcesResponseObject, error) {
	p, err := h.app.ListCredentialSources(ctx, callerFrom(ctx), r.NamespaceId, page(r.Params.PageSize, r.Params.PageToken))
	if err != nil {
		return nil, err
	}
	return gen.ListCredentialSources200JSONResponse{Data: mapItems(p.Items, toCredentialSource), Meta: listMeta(ctx, p.Next)}, nil
}

func (h *handlers) CreateCredentialSource(ctx context.Context, r gen.CreateCredentialSourceRequestObject) (gen.CreateCredentialSourceResponseObject, error) {
	in := app.CredentialSourceInput{Name: r.Body.Name, Type: r.Body.Type, Secrets: fromSourceSecrets(r.Body.Secrets)}
	if r.Body.Config != nil {
		in.Config = *r.Body.Config
	}
	s, err := h.app.CreateCredentialSource(ctx, callerFrom(ctx), r.NamespaceId, in)
	if err != nil {
		return nil, err
	}
	body, tag := credentialSourceEnvelope(ctx, s)
	return gen.CreateCredentialSource201JSONResponse{Body: body, Headers: gen.CreateCredentialSource201ResponseHeaders{ETag: tag}}, nil
}

func (h *handlers) GetCredentialSource(ctx context.Context, r gen.GetCredentialSourceRequestObject) (gen.GetCredentialSourceResponseObject, error) {
	s, err := h.app.GetCredentialSource(ctx, callerFrom(ctx), r.NamespaceId, r.CredentialSourceId)
	if err != nil {
		return nil, err
	}
	body, tag := credentialSourceEnvelope(ctx, s)
	return gen.GetCredentialSource200JSONResponse{Body: body, Headers: gen.GetCredentialSource200ResponseHeaders{ETag: tag}}, nil
}

func (h *handlers) UpdateCredentialSource(ctx context.Context, r gen.UpdateCredentialSourceRequestObject) (gen.UpdateCredentialSourceResponseObject, error) {
	s, err := h.app.UpdateCredentialSource(ctx, callerFrom(ctx), r.NamespaceId, r.CredentialSourceId, fromSourceSecrets(r.Body.Secrets),
		ifMatch(r.Params.IfMatch))
	if err != nil {
		return nil, err
	}
	body, tag := credentialSourceEnvelope(ctx, s)
	return gen.UpdateCredentialSource200JSONResponse{Body: body, Headers: gen.UpdateCredentialSource200ResponseHeaders{ETag: tag}}, nil
}

func (h *handlers) DeleteCredentialSource(ctx context.Context, r gen.DeleteCredentialSourceRequestObject) (gen.DeleteCredentialSourceResponseObject, error) {
	if err := h.app.DeleteCredentialSource(ctx, callerFrom(ctx), r.NamespaceId, r.CredentialSourceId, ifMatch(r.Params.IfMatch)); err != nil {
		return nil, err
	}
	return gen.DeleteCredentialSource204Response{}, nil
}
