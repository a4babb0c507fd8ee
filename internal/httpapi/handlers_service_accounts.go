package httpapi

import (
	"context"

	"github.com/oapi-codegen/nullable"

	"github.com/openclaw/occ/internal/httpapi/gen"
	"github.com/openclaw/occ/internal/occ"
)

// toServiceAccount maps the public fields: the credential's kind and issue
// time, never the credential or private Backend metadata.
func toServiceAccount(s occ.ServiceAccount) gen.ServiceAccount {
	out := gen.ServiceAccount{Id: s.ID, NamespaceId: s.NamespaceID, Name: s.Name, BackendId: s.BackendID,
		Credential: nullable.NewNullNullable[gen.ServiceAccountCredential](),
		CreatedAt:  occ.FormatTime(s.CreatedAt), UpdatedAt: occ.FormatTime(s.UpdatedAt), Etag: etag(s.Version)}
	if s.Credential != nil {
		out.Credential = nullable.NewNullableWithValue(gen.ServiceAccountCredential{
			Kind: gen.ServiceAccountCredentialKind(s.Credential.Kind), IssuedAt: occ.FormatTime(s.Credential.IssuedAt)})
	}
	return out
}

func serviceAccountEnvelope(ctx context.Context, s occ.ServiceAccount) (gen.ServiceAccountEnvelope, *string) {
	tag := etag(s.Version)
	return gen.ServiceAccountEnvelope{Data: toServiceAccount(s), Meta: meta(ctx)}, &tag
}

func (h *handlers) ListServiceAccounts(ctx context.Context, r gen.ListServiceAccountsRequestObject) (gen.ListServiceAccountsResponseObject, error) {
	p, err := h.app.ListServiceAccounts(ctx, callerFrom(ctx), r.NamespaceId, page(r.Params.PageSize, r.Params.PageToken))
	if err != nil {
		return nil, err
	}
	return gen.ListServiceAccounts200JSONResponse{Data: mapItems(p.Items, toServiceAccount), Meta: listMeta(ctx, p.Next)}, nil
}

func (h *handlers) CreateServiceAccount(ctx context.Context, r gen.CreateServiceAccountRequestObject) (gen.CreateServiceAccountResponseObject, error) {
	s, err := h.app.CreateServiceAccount(ctx, callerFrom(ctx), r.NamespaceId, r.Body.Name, r.Body.BackendId)
	if err != nil {
		return nil, err
	}
	body, tag := serviceAccountEnvelope(ctx, s)
	return gen.CreateServiceAccount201JSONResponse{Body: body, Headers: gen.CreateServiceAccount201ResponseHeaders{ETag: tag}}, nil
}

func (h *handlers) GetServiceAccount(ctx context.Context, r gen.GetServiceAccountRequestObject) (gen.GetServiceAccountResponseObject, error) {
	s, err := h.app.GetServiceAccount(ctx, callerFrom(ctx), r.NamespaceId, r.ServiceAccountId)
	if err != nil {
		return nil, err
	}
	body, tag := serviceAccountEnvelope(ctx, s)
	return gen.GetServiceAccount200JSONResponse{Body: body, Headers: gen.GetServiceAccount200ResponseHeaders{ETag: tag}}, nil
}

func (h *handlers) DeleteServiceAccount(ctx context.Context, r gen.DeleteServiceAccountRequestObject) (gen.DeleteServiceAccountResponseObject, error) {
	if err := h.app.DeleteServiceAccount(ctx, callerFrom(ctx), r.NamespaceId, r.ServiceAccountId, ifMatch(r.Params.IfMatch)); err != nil {
		return nil, err
	}
	return gen.DeleteServiceAccount204Response{}, nil
}

func (h *handlers) IssueServiceAccountCredential(ctx context.Context, r gen.IssueServiceAccountCredentialRequestObject) (gen.IssueServiceAccountCredentialResponseObject, error) {
	s, err := h.app.IssueServiceAccountCredential(ctx, callerFrom(ctx), r.NamespaceId, r.ServiceAccountId)
	if err != nil {
		return nil, err
	}
	body, tag := serviceAccountEnvelope(ctx, s)
	return gen.IssueServiceAccountCredential201JSONResponse{Body: body, Headers: gen.IssueServiceAccountCredential201ResponseHeaders{ETag: tag}}, nil
}
