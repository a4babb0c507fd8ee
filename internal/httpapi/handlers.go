package httpapi

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/httpapi/contract"
	"github.com/openclaw/occ/internal/httpapi/gen"
	"github.com/openclaw/occ/internal/occ"
)

// handlers implements the generated strict server interface.
type handlers struct {
	app      *app.App
	opts     Options
	specJSON []byte
}

var _ gen.StrictServerInterface = (*handlers)(nil)

func meta(ctx context.Context) gen.Meta { return gen.Meta{RequestId: contract.RequestID(ctx)} }

func listMeta(ctx context.Context, next string) gen.ListMeta {
	m := gen.ListMeta{RequestId: contract.RequestID(ctx)}
	if next != "" {
		m.NextPageToken = &next
	}
	return m
}

// invalidRequest wraps a parameter-binding failure of the generated code.
func invalidRequest(err error) error {
	if occ.AsError(err) != nil {
		return err
	}
	return occ.Wrap(occ.CodeInvalidRequest, "The request does not match the contract.", err)
}

// etag renders a version as a strong entity tag.
func etag(version int64) string { return fmt.Sprintf(`"%d"`, version) }

// ifMatch parses If-Match: none is no precondition, "*" matches any
// existing resource, and an entity tag names the version it renders (etag);
// a tag that cannot name any version still fails the precondition.
func ifMatch(h *string) app.IfMatch {
	if h == nil {
		return app.IfMatch{}
	}
	s := strings.TrimSpace(*h)
	if s == "*" {
		return app.MatchAny()
	}
	s = strings.TrimPrefix(s, "W/")
	v, err := strconv.ParseInt(strings.Trim(s, `"`), 10, 64)
	if err != nil || !strings.HasPrefix(s, `"`) {
		v = -1
	}
	return app.MatchVersion(v)
}

func page(size *int, token *string) app.PageRequest {
	var p app.PageRequest
	if size != nil {
		p.Size = *size
	}
	if token != nil {
		p.Token = *token
	}
	return p
}

func (h *handlers) GetHealth(ctx context.Context, _ gen.GetHealthRequestObject) (gen.GetHealthResponseObject, error) {
	return gen.GetHealth200JSONResponse{Status: "ok"}, nil
}

func (h *handlers) GetReady(ctx context.Context, _ gen.GetReadyRequestObject) (gen.GetReadyResponseObject, error) {
	if err := h.app.Ready(ctx); err != nil {
		return nil, err
	}
	return gen.GetReady200JSONResponse{Status: "ready"}, nil
}

func (h *handlers) GetVersion(ctx context.Context, _ gen.GetVersionRequestObject) (gen.GetVersionResponseObject, error) {
	return gen.GetVersion200JSONResponse{Version: h.opts.Version, OpenclawVersion: h.opts.OpenClawVersion}, nil
}

func (h *handlers) GetOpenAPI(ctx context.Context, _ gen.GetOpenAPIRequestObject) (gen.GetOpenAPIResponseObject, error) {
	return rawJSON(h.specJSON), nil
}

func (h *handlers) GetInstallation(ctx context.Context, _ gen.GetInstallationRequestObject) (gen.GetInstallationResponseObject, error) {
	in, err := h.app.Installation(ctx, callerFrom(ctx))
	if err != nil {
		return nil, err
	}
	return gen.GetInstallation200JSONResponse{Meta: meta(ctx), Data: gen.Installation{
		Id: in.ID, Name: in.Name, CreatedAt: occ.FormatTime(in.CreatedAt),
		ComputeDriver: gen.InstallationComputeDriver(h.opts.ComputeDriver), OpenclawVersion: h.opts.OpenClawVersion,
		WorkspaceDefaultsId: h.opts.WorkspaceDefaultsID,
	}}, nil
}

func toNamespace(n occ.Namespace) gen.Namespace {
	return gen.Namespace{Id: n.ID, Name: n.Name, Status: gen.NamespaceStatus(n.Status),
		CreatedAt: occ.FormatTime(n.CreatedAt), UpdatedAt: occ.FormatTime(n.UpdatedAt), Etag: etag(n.Version)}
}

func (h *handlers) ListNamespaces(ctx context.Context, r gen.ListNamespacesRequestObject) (gen.ListNamespacesResponseObject, error) {
	p, err := h.app.ListNamespaces(ctx, callerFrom(ctx), page(r.Params.PageSize, r.Params.PageToken))
	if err != nil {
		return nil, err
	}
	out := gen.ListNamespaces200JSONResponse{Data: make([]gen.Namespace, 0, len(p.Items)), Meta: listMeta(ctx, p.Next)}
	for _, n := range p.Items {
		out.Data = append(out.Data, toNamespace(n))
	}
	return out, nil
}

func (h *handlers) CreateNamespace(ctx context.Context, r gen.CreateNamespaceRequestObject) (gen.CreateNamespaceResponseObject, error) {
	n, err := h.app.CreateNamespace(ctx, callerFrom(ctx), r.Body.Name)
	if err != nil {
		return nil, err
	}
	tag := etag(n.Version)
	return gen.CreateNamespace201JSONResponse{Body: gen.NamespaceEnvelope{Data: toNamespace(n), Meta: meta(ctx)},
		Headers: gen.CreateNamespace201ResponseHeaders{ETag: &tag}}, nil
}

func (h *handlers) GetNamespace(ctx context.Context, r gen.GetNamespaceRequestObject) (gen.GetNamespaceResponseObject, error) {
	n, err := h.app.GetNamespace(ctx, callerFrom(ctx), r.NamespaceId)
	if err != nil {
		return nil, err
	}
	tag := etag(n.Version)
	return gen.GetNamespace200JSONResponse{Body: gen.NamespaceEnvelope{Data: toNamespace(n), Meta: meta(ctx)},
		Headers: gen.GetNamespace200ResponseHeaders{ETag: &tag}}, nil
}

func (h *handlers) UpdateNamespace(ctx context.Context, r gen.UpdateNamespaceRequestObject) (gen.UpdateNamespaceResponseObject, error) {
	n, err := h.app.RenameNamespace(ctx, callerFrom(ctx), r.NamespaceId, r.Body.Name, ifMatch(r.Params.IfMatch))
	if err != nil {
		return nil, err
	}
	tag := etag(n.Version)
	return gen.UpdateNamespace200JSONResponse{Body: gen.NamespaceEnvelope{Data: toNamespace(n), Meta: meta(ctx)},
		Headers: gen.UpdateNamespace200ResponseHeaders{ETag: &tag}}, nil
}

func (h *handlers) DeleteNamespace(ctx context.Context, r gen.DeleteNamespaceRequestObject) (gen.DeleteNamespaceResponseObject, error) {
	n, err := h.app.DeleteNamespace(ctx, callerFrom(ctx), r.NamespaceId, ifMatch(r.Params.IfMatch))
	if err != nil {
		return nil, err
	}
	return gen.DeleteNamespace202JSONResponse{Data: toNamespace(n), Meta: meta(ctx)}, nil
}

func toAuditEvents(ctx context.Context, p app.Page[occ.AuditEvent]) gen.AuditEventList {
	out := gen.AuditEventList{Data: make([]gen.AuditEvent, 0, len(p.Items)), Meta: listMeta(ctx, p.Next)}
	for _, e := range p.Items {
		ev := gen.AuditEvent{Id: e.ID, OccurredAt: occ.FormatTime(e.OccurredAt), Kind: gen.AuditEventKind(e.Kind),
			Action: e.Action, Outcome: gen.AuditEventOutcome(e.Outcome), ActorId: e.ActorID, Details: e.Details}
		ev.Resource.Kind, ev.Resource.Id = string(e.Resource.Kind), e.Resource.ID
		if e.NamespaceID != "" {
			ev.NamespaceId, ev.Resource.NamespaceId = &e.NamespaceID, &e.NamespaceID
		}
		if e.RequestID != "" {
			ev.RequestId = &e.RequestID
		}
		if e.ReasonCode != "" {
			ev.ReasonCode = &e.ReasonCode
		}
		out.Data = append(out.Data, ev)
	}
	return out
}

// auditQuery turns query parameters into a filter.
func auditQuery(action, kind, outcome, actor, resource *string, since, until *string) (app.AuditQuery, error) {
	q := app.AuditQuery{Action: deref(action), Kind: deref(kind), Outcome: deref(outcome), ActorID: deref(actor), ResourceID: deref(resource)}
	var err error
	if q.Since, err = parseTime("since", since); err != nil {
		return q, err
	}
	q.Until, err = parseTime("until", until)
	return q, err
}

func parseTime(field string, s *string) (time.Time, error) {
	if s == nil {
		return time.Time{}, nil
	}
	t, err := time.Parse(occ.TimeLayout, *s)
	if err != nil {
		return t, occ.Invalid("The time filter is not a valid timestamp.", occ.Detail{Path: "/" + field, Code: occ.DetailInvalidFmt})
	}
	return t, nil
}

func deref[T ~string](p *T) string {
	if p == nil {
		return ""
	}
	return string(*p)
}

func (h *handlers) ListAuditEvents(ctx context.Context, r gen.ListAuditEventsRequestObject) (gen.ListAuditEventsResponseObject, error) {
	pr := r.Params
	q, err := auditQuery(pr.Action, (*string)(pr.Kind), (*string)(pr.Outcome), pr.ActorId, pr.ResourceId, pr.Since, pr.Until)
	if err != nil {
		return nil, err
	}
	q.NamespaceID = deref(pr.NamespaceId)
	p, err := h.app.ListAuditEvents(ctx, callerFrom(ctx), "", q, page(pr.PageSize, pr.PageToken))
	if err != nil {
		return nil, err
	}
	return gen.ListAuditEvents200JSONResponse(toAuditEvents(ctx, p)), nil
}

func (h *handlers) ListNamespaceAuditEvents(ctx context.Context, r gen.ListNamespaceAuditEventsRequestObject) (gen.ListNamespaceAuditEventsResponseObject, error) {
	pr := r.Params
	q, err := auditQuery(pr.Action, (*string)(pr.Kind), (*string)(pr.Outcome), pr.ActorId, pr.ResourceId, pr.Since, pr.Until)
	if err != nil {
		return nil, err
	}
	p, err := h.app.ListAuditEvents(ctx, callerFrom(ctx), r.NamespaceId, q, page(pr.PageSize, pr.PageToken))
	if err != nil {
		return nil, err
	}
	return gen.ListNamespaceAuditEvents200JSONResponse(toAuditEvents(ctx, p)), nil
}
