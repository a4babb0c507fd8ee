package httpapi

import (
	"context"
	"time"

	"github.com/oapi-codegen/nullable"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/httpapi/gen"
	"github.com/openclaw/occ/internal/occ"
)

func nullStr(s string) nullable.Nullable[string] {
	if s == "" {
		return nullable.NewNullNullable[string]()
	}
	return nullable.NewNullableWithValue(s)
}

func nullTarget(t *occ.Target) nullable.Nullable[gen.Target] {
	if t == nil {
		return nullable.NewNullNullable[gen.Target]()
	}
	return nullable.NewNullableWithValue(gen.Target{Kind: gen.TargetKind(t.Kind), Id: t.ID})
}

func fromTarget(t *gen.Target) *occ.Target {
	if t == nil {
		return nil
	}
	return &occ.Target{Kind: occ.Kind(t.Kind), ID: t.Id}
}

func toRole(r occ.Role) gen.Role {
	perms := make([]gen.PermissionName, len(r.Permissions))
	for i, p := range r.Permissions {
		perms[i] = p.String()
	}
	return gen.Role{Id: r.ID, Name: r.Name, NamespaceId: nullStr(r.NamespaceID), Builtin: r.Builtin, Permissions: perms,
		CreatedAt: occ.FormatTime(r.CreatedAt)}
}

func toBinding(b occ.Binding) gen.Binding {
	return gen.Binding{Id: b.ID, PrincipalId: b.PrincipalID, RoleId: b.RoleID, NamespaceId: nullStr(b.NamespaceID),
		Target: nullTarget(b.Target), CreatedBy: b.CreatedBy, CreatedAt: occ.FormatTime(b.CreatedAt)}
}

func toRestriction(x occ.Restriction) gen.Restriction {
	return gen.Restriction{Id: x.ID, PrincipalId: x.PrincipalID, Permission: x.Permission.String(), NamespaceId: nullStr(x.NamespaceID),
		Target: nullTarget(x.Target), CreatedBy: x.CreatedBy, CreatedAt: occ.FormatTime(x.CreatedAt)}
}

func toPrincipal(p occ.Principal) gen.Principal {
	out := gen.Principal{Id: p.ID, Kind: gen.PrincipalKind(p.Kind), Name: p.Name, NamespaceId: nullStr(p.NamespaceID),
		AgentId: nullStr(p.AgentID), Disabled: p.Disabled, CreatedAt: occ.FormatTime(p.CreatedAt)}
	if p.Email != "" {
		out.Email = &p.Email
	}
	return out
}

func toKey(k occ.ServiceKey) gen.ServiceKey {
	return gen.ServiceKey{Id: k.ID, ServicePrincipalId: k.PrincipalID, NamespaceId: nullStr(k.NamespaceID), Name: k.Name,
		CreatedAt: occ.FormatTime(k.CreatedAt), ExpiresAt: occ.FormatTime(k.ExpiresAt), Revoked: k.RevokedAt != nil}
}

func mapItems[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// Roles.

func (h *handlers) listRoles(ctx context.Context, ns string, size *int, token *string) (gen.RoleList, error) {
	p, err := h.app.ListRoles(ctx, callerFrom(ctx), ns, page(size, token))
	return gen.RoleList{Data: mapItems(p.Items, toRole), Meta: listMeta(ctx, p.Next)}, err
}

func (h *handlers) createRole(ctx context.Context, ns string, body *gen.RoleCreate) (gen.RoleEnvelope, error) {
	r, err := h.app.CreateRole(ctx, callerFrom(ctx), ns, body.Name, body.Permissions)
	return gen.RoleEnvelope{Data: toRole(r), Meta: meta(ctx)}, err
}

func (h *handlers) getRole(ctx context.Context, ns, id string) (gen.RoleEnvelope, error) {
	r, err := h.app.GetRole(ctx, callerFrom(ctx), ns, id)
	return gen.RoleEnvelope{Data: toRole(r), Meta: meta(ctx)}, err
}

func (h *handlers) ListRoles(ctx context.Context, r gen.ListRolesRequestObject) (gen.ListRolesResponseObject, error) {
	out, err := h.listRoles(ctx, "", r.Params.PageSize, r.Params.PageToken)
	return gen.ListRoles200JSONResponse(out), err
}

func (h *handlers) ListNamespaceRoles(ctx context.Context, r gen.ListNamespaceRolesRequestObject) (gen.ListNamespaceRolesResponseObject, error) {
	out, err := h.listRoles(ctx, r.NamespaceId, r.Params.PageSize, r.Params.PageToken)
	return gen.ListNamespaceRoles200JSONResponse(out), err
}

func (h *handlers) CreateRole(ctx context.Context, r gen.CreateRoleRequestObject) (gen.CreateRoleResponseObject, error) {
	out, err := h.createRole(ctx, "", r.Body)
	return gen.CreateRole201JSONResponse(out), err
}

func (h *handlers) CreateNamespaceRole(ctx context.Context, r gen.CreateNamespaceRoleRequestObject) (gen.CreateNamespaceRoleResponseObject, error) {
	out, err := h.createRole(ctx, r.NamespaceId, r.Body)
	return gen.CreateNamespaceRole201JSONResponse(out), err
}

func (h *handlers) GetRole(ctx context.Context, r gen.GetRoleRequestObject) (gen.GetRoleResponseObject, error) {
	out, err := h.getRole(ctx, "", r.RoleId)
	return gen.GetRole200JSONResponse(out), err
}

func (h *handlers) GetNamespaceRole(ctx context.Context, r gen.GetNamespaceRoleRequestObject) (gen.GetNamespaceRoleResponseObject, error) {
	out, err := h.getRole(ctx, r.NamespaceId, r.RoleId)
	return gen.GetNamespaceRole200JSONResponse(out), err
}

func (h *handlers) DeleteRole(ctx context.Context, r gen.DeleteRoleRequestObject) (gen.DeleteRoleResponseObject, error) {
	return gen.DeleteRole204Response{}, h.app.DeleteRole(ctx, callerFrom(ctx), "", r.RoleId)
}

func (h *handlers) DeleteNamespaceRole(ctx context.Context, r gen.DeleteNamespaceRoleRequestObject) (gen.DeleteNamespaceRoleResponseObject, error) {
	return gen.DeleteNamespaceRole204Response{}, h.app.DeleteRole(ctx, callerFrom(ctx), r.NamespaceId, r.RoleId)
}

// Bindings.

func (h *handlers) listBindings(ctx context.Context, ns string, size *int, token *string) (gen.BindingList, error) {
	p, err := h.app.ListBindings(ctx, callerFrom(ctx), ns, page(size, token))
	return gen.BindingList{Data: mapItems(p.Items, toBinding), Meta: listMeta(ctx, p.Next)}, err
}

func (h *handlers) createBinding(ctx context.Context, ns string, body *gen.BindingCreate) (gen.BindingEnvelope, error) {
	b, err := h.app.CreateBinding(ctx, callerFrom(ctx), ns, app.GrantRequest{PrincipalID: body.PrincipalId, RoleID: body.RoleId,
		Target: fromTarget(body.Target)})
	return gen.BindingEnvelope{Data: toBinding(b), Meta: meta(ctx)}, err
}

func (h *handlers) getBinding(ctx context.Context, ns, id string) (gen.BindingEnvelope, error) {
	b, err := h.app.GetBinding(ctx, callerFrom(ctx), ns, id)
	return gen.BindingEnvelope{Data: toBinding(b), Meta: meta(ctx)}, err
}

func (h *handlers) ListBindings(ctx context.Context, r gen.ListBindingsRequestObject) (gen.ListBindingsResponseObject, error) {
	out, err := h.listBindings(ctx, "", r.Params.PageSize, r.Params.PageToken)
	return gen.ListBindings200JSONResponse(out), err
}

func (h *handlers) ListNamespaceBindings(ctx context.Context, r gen.ListNamespaceBindingsRequestObject) (gen.ListNamespaceBindingsResponseObject, error) {
	out, err := h.listBindings(ctx, r.NamespaceId, r.Params.PageSize, r.Params.PageToken)
	return gen.ListNamespaceBindings200JSONResponse(out), err
}

func (h *handlers) CreateBinding(ctx context.Context, r gen.CreateBindingRequestObject) (gen.CreateBindingResponseObject, error) {
	out, err := h.createBinding(ctx, "", r.Body)
	return gen.CreateBinding201JSONResponse(out), err
}

func (h *handlers) CreateNamespaceBinding(ctx context.Context, r gen.CreateNamespaceBindingRequestObject) (gen.CreateNamespaceBindingResponseObject, error) {
	out, err := h.createBinding(ctx, r.NamespaceId, r.Body)
	return gen.CreateNamespaceBinding201JSONResponse(out), err
}

func (h *handlers) GetBinding(ctx context.Context, r gen.GetBindingRequestObject) (gen.GetBindingResponseObject, error) {
	out, err := h.getBinding(ctx, "", r.BindingId)
	return gen.GetBinding200JSONResponse(out), err
}

func (h *handlers) GetNamespaceBinding(ctx context.Context, r gen.GetNamespaceBindingRequestObject) (gen.GetNamespaceBindingResponseObject, error) {
	out, err := h.getBinding(ctx, r.NamespaceId, r.BindingId)
	return gen.GetNamespaceBinding200JSONResponse(out), err
}

func (h *handlers) DeleteBinding(ctx context.Context, r gen.DeleteBindingRequestObject) (gen.DeleteBindingResponseObject, error) {
	return gen.DeleteBinding204Response{}, h.app.DeleteBinding(ctx, callerFrom(ctx), "", r.BindingId)
}

func (h *handlers) DeleteNamespaceBinding(ctx context.Context, r gen.DeleteNamespaceBindingRequestObject) (gen.DeleteNamespaceBindingResponseObject, error) {
	return gen.DeleteNamespaceBinding204Response{}, h.app.DeleteBinding(ctx, callerFrom(ctx), r.NamespaceId, r.BindingId)
}

// Restrictions.

func (h *handlers) listRestrictions(ctx context.Context, ns string, size *int, token *string) (gen.RestrictionList, error) {
	p, err := h.app.ListRestrictions(ctx, callerFrom(ctx), ns, page(size, token))
	return gen.RestrictionList{Data: mapItems(p.Items, toRestriction), Meta: listMeta(ctx, p.Next)}, err
}

func (h *handlers) createRestriction(ctx context.Context, ns string, body *gen.RestrictionCreate) (gen.RestrictionEnvelope, error) {
	x, err := h.app.CreateRestriction(ctx, callerFrom(ctx), ns, app.GrantRequest{PrincipalID: body.PrincipalId,
		Permission: body.Permission, Target: fromTarget(body.Target)})
	return gen.RestrictionEnvelope{Data: toRestriction(x), Meta: meta(ctx)}, err
}

func (h *handlers) getRestriction(ctx context.Context, ns, id string) (gen.RestrictionEnvelope, error) {
	x, err := h.app.GetRestriction(ctx, callerFrom(ctx), ns, id)
	return gen.RestrictionEnvelope{Data: toRestriction(x), Meta: meta(ctx)}, err
}

func (h *handlers) ListRestrictions(ctx context.Context, r gen.ListRestrictionsRequestObject) (gen.ListRestrictionsResponseObject, error) {
	out, err := h.listRestrictions(ctx, "", r.Params.PageSize, r.Params.PageToken)
	return gen.ListRestrictions200JSONResponse(out), err
}

func (h *handlers) ListNamespaceRestrictions(ctx context.Context, r gen.ListNamespaceRestrictionsRequestObject) (gen.ListNamespaceRestrictionsResponseObject, error) {
	out, err := h.listRestrictions(ctx, r.NamespaceId, r.Params.PageSize, r.Params.PageToken)
	return gen.ListNamespaceRestrictions200JSONResponse(out), err
}

func (h *handlers) CreateRestriction(ctx context.Context, r gen.CreateRestrictionRequestObject) (gen.CreateRestrictionResponseObject, error) {
	out, err := h.createRestriction(ctx, "", r.Body)
	return gen.CreateRestriction201JSONResponse(out), err
}

func (h *handlers) CreateNamespaceRestriction(ctx context.Context, r gen.CreateNamespaceRestrictionRequestObject) (gen.CreateNamespaceRestrictionResponseObject, error) {
	out, err := h.createRestriction(ctx, r.NamespaceId, r.Body)
	return gen.CreateNamespaceRestriction201JSONResponse(out), err
}

func (h *handlers) GetRestriction(ctx context.Context, r gen.GetRestrictionRequestObject) (gen.GetRestrictionResponseObject, error) {
	out, err := h.getRestriction(ctx, "", r.RestrictionId)
	return gen.GetRestriction200JSONResponse(out), err
}

func (h *handlers) GetNamespaceRestriction(ctx context.Context, r gen.GetNamespaceRestrictionRequestObject) (gen.GetNamespaceRestrictionResponseObject, error) {
	out, err := h.getRestriction(ctx, r.NamespaceId, r.RestrictionId)
	return gen.GetNamespaceRestriction200JSONResponse(out), err
}

func (h *handlers) DeleteRestriction(ctx context.Context, r gen.DeleteRestrictionRequestObject) (gen.DeleteRestrictionResponseObject, error) {
	return gen.DeleteRestriction204Response{}, h.app.DeleteRestriction(ctx, callerFrom(ctx), "", r.RestrictionId)
}

func (h *handlers) DeleteNamespaceRestriction(ctx context.Context, r gen.DeleteNamespaceRestrictionRequestObject) (gen.DeleteNamespaceRestrictionResponseObject, error) {
	return gen.DeleteNamespaceRestriction204Response{}, h.app.DeleteRestriction(ctx, callerFrom(ctx), r.NamespaceId, r.RestrictionId)
}

// Principals.

func principalList(ctx context.Context, p app.Page[occ.Principal]) gen.PrincipalList {
	return gen.PrincipalList{Data: mapItems(p.Items, toPrincipal), Meta: listMeta(ctx, p.Next)}
}

func principalEnvelope(ctx context.Context, p occ.Principal) gen.PrincipalEnvelope {
	return gen.PrincipalEnvelope{Data: toPrincipal(p), Meta: meta(ctx)}
}

func (h *handlers) ListPrincipals(ctx context.Context, r gen.ListPrincipalsRequestObject) (gen.ListPrincipalsResponseObject, error) {
	p, err := h.app.ListPrincipals(ctx, callerFrom(ctx), occ.PrincipalHuman, page(r.Params.PageSize, r.Params.PageToken))
	return gen.ListPrincipals200JSONResponse(principalList(ctx, p)), err
}

func (h *handlers) CreatePrincipal(ctx context.Context, r gen.CreatePrincipalRequestObject) (gen.CreatePrincipalResponseObject, error) {
	p, err := h.app.CreateHuman(ctx, callerFrom(ctx), r.Body.Email, r.Body.Name, r.Body.Password)
	return gen.CreatePrincipal201JSONResponse(principalEnvelope(ctx, p)), err
}

func (h *handlers) GetPrincipal(ctx context.Context, r gen.GetPrincipalRequestObject) (gen.GetPrincipalResponseObject, error) {
	p, err := h.app.GetPrincipal(ctx, callerFrom(ctx), occ.PrincipalHuman, r.PrincipalId)
	return gen.GetPrincipal200JSONResponse(principalEnvelope(ctx, p)), err
}

func (h *handlers) DisablePrincipal(ctx context.Context, r gen.DisablePrincipalRequestObject) (gen.DisablePrincipalResponseObject, error) {
	p, err := h.app.SetHumanDisabled(ctx, callerFrom(ctx), r.PrincipalId, true)
	return gen.DisablePrincipal200JSONResponse(principalEnvelope(ctx, p)), err
}

func (h *handlers) EnablePrincipal(ctx context.Context, r gen.EnablePrincipalRequestObject) (gen.EnablePrincipalResponseObject, error) {
	p, err := h.app.SetHumanDisabled(ctx, callerFrom(ctx), r.PrincipalId, false)
	return gen.EnablePrincipal200JSONResponse(principalEnvelope(ctx, p)), err
}

func (h *handlers) ListServicePrincipals(ctx context.Context, r gen.ListServicePrincipalsRequestObject) (gen.ListServicePrincipalsResponseObject, error) {
	p, err := h.app.ListPrincipals(ctx, callerFrom(ctx), occ.PrincipalService, page(r.Params.PageSize, r.Params.PageToken))
	return gen.ListServicePrincipals200JSONResponse(principalList(ctx, p)), err
}

func (h *handlers) CreateServicePrincipal(ctx context.Context, r gen.CreateServicePrincipalRequestObject) (gen.CreateServicePrincipalResponseObject, error) {
	p, err := h.app.CreateServicePrincipal(ctx, callerFrom(ctx), r.Body.Name, deref(r.Body.NamespaceId))
	return gen.CreateServicePrincipal201JSONResponse(principalEnvelope(ctx, p)), err
}

func (h *handlers) GetServicePrincipal(ctx context.Context, r gen.GetServicePrincipalRequestObject) (gen.GetServicePrincipalResponseObject, error) {
	p, err := h.app.GetPrincipal(ctx, callerFrom(ctx), occ.PrincipalService, r.ServicePrincipalId)
	return gen.GetServicePrincipal200JSONResponse(principalEnvelope(ctx, p)), err
}

func (h *handlers) DeleteServicePrincipal(ctx context.Context, r gen.DeleteServicePrincipalRequestObject) (gen.DeleteServicePrincipalResponseObject, error) {
	return gen.DeleteServicePrincipal204Response{}, h.app.DeleteServicePrincipal(ctx, callerFrom(ctx), r.ServicePrincipalId)
}

// Service keys.

func (h *handlers) ListServiceKeys(ctx context.Context, r gen.ListServiceKeysRequestObject) (gen.ListServiceKeysResponseObject, error) {
	p, err := h.app.ListServiceKeys(ctx, callerFrom(ctx), page(r.Params.PageSize, r.Params.PageToken))
	return gen.ListServiceKeys200JSONResponse(gen.ServiceKeyList{Data: mapItems(p.Items, toKey), Meta: listMeta(ctx, p.Next)}), err
}

func (h *handlers) CreateServiceKey(ctx context.Context, r gen.CreateServiceKeyRequestObject) (gen.CreateServiceKeyResponseObject, error) {
	in := app.KeyRequest{ServicePrincipalID: r.Body.ServicePrincipalId, NamespaceID: deref(r.Body.NamespaceId), Name: r.Body.Name}
	if r.Body.ExpiresIn != nil {
		in.ExpiresIn = time.Duration(*r.Body.ExpiresIn) * time.Second
	}
	k, plain, err := h.app.IssueServiceKey(ctx, callerFrom(ctx), in)
	if err != nil {
		return nil, err
	}
	out := toKey(k)
	out.Key = &plain
	return gen.CreateServiceKey201JSONResponse(gen.ServiceKeyEnvelope{Data: out, Meta: meta(ctx)}), nil
}

func (h *handlers) GetServiceKey(ctx context.Context, r gen.GetServiceKeyRequestObject) (gen.GetServiceKeyResponseObject, error) {
	k, err := h.app.GetServiceKey(ctx, callerFrom(ctx), r.KeyId)
	return gen.GetServiceKey200JSONResponse(gen.ServiceKeyEnvelope{Data: toKey(k), Meta: meta(ctx)}), err
}

func (h *handlers) RevokeServiceKey(ctx context.Context, r gen.RevokeServiceKeyRequestObject) (gen.RevokeServiceKeyResponseObject, error) {
	return gen.RevokeServiceKey204Response{}, h.app.RevokeServiceKey(ctx, callerFrom(ctx), r.KeyId)
}
