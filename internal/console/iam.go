package console

import (
	"context"
	"net/http"
	"strings"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
)

// An Access page grants at one scope: a Namespace, or the installation
// (ns nil, for installation administrators). Both call the same IAM use
// cases as the API's /iam and /namespaces/{ns}/iam routes.

type iamData struct {
	Roles        []occ.Role
	Bindings     []occ.Binding
	Restrictions []occ.Restriction
	RoleNames    map[string]string // role ID → name, for the bindings table
	Administer   action
	Path         string // the page's path; forms post under it
	Installation bool
	Scope        string // scopeOf the page: a role of this scope can be deleted here
	// The refused form's input.
	RoleName, Permissions, PrincipalID, RoleID, TargetKind, TargetID, Permission string
	Kinds                                                                        []occ.Kind
}

// scopeOf is the use cases' scope argument: the Namespace ID, or "" for
// the installation.
func scopeOf(ns *occ.Namespace) string {
	if ns == nil {
		return ""
	}
	return ns.ID
}

func iamPath(ns *occ.Namespace) string {
	if ns == nil {
		return Prefix + "iam"
	}
	return nsPath(ns.ID) + "/iam"
}

// atInstallation runs an Access handler at installation scope.
func atInstallation(next nsPage) func(http.ResponseWriter, *http.Request, *session) {
	return func(w http.ResponseWriter, r *http.Request, s *session) { next(w, r, s, nil) }
}

// iamPage lists a scope's roles, bindings and restrictions, with forms to
// add them (namespace:administer, or installation:administer at
// installation scope, as the API's IAM routes).
func (c *Console) iamPage(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	c.renderIAM(w, r, s, ns, http.StatusOK, &view{}, iamData{})
}

func (c *Console) renderIAM(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace, status int, v *view, d iamData) {
	ctx, all, scope := r.Context(), app.PageRequest{Size: app.MaxPageSize}, scopeOf(ns)
	roles, err := c.app.ListRoles(ctx, s.caller, scope, all)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	bindings, err := c.app.ListBindings(ctx, s.caller, scope, all)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	restrictions, err := c.app.ListRestrictions(ctx, s.caller, scope, all)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	d.Roles, d.Bindings, d.Restrictions, d.RoleNames, d.Kinds = roles.Items, bindings.Items, restrictions.Items, map[string]string{}, occ.Kinds
	for _, role := range roles.Items {
		d.RoleNames[role.ID] = role.Name
	}
	d.Path, d.Installation, d.Scope = iamPath(ns), ns == nil, scope
	v.Title, v.Session, v.NS = "Installation access", s, ns
	if ns == nil {
		d.Administer = c.can(r, s, occ.KindInstallation, occ.ActionAdminister, c.installation(), "change the installation's roles, bindings and restrictions")
	} else {
		d.Administer = c.can(r, s, occ.KindNamespace, occ.ActionAdminister, ns.Ref(), "change this Namespace's roles, bindings and restrictions")
		v.Title = "Access in " + ns.Name
	}
	v.Data = d
	c.render(w, r, status, "iam", v)
}

func (c *Console) installation() occ.ResourceRef {
	return occ.ResourceRef{Kind: occ.KindInstallation, ID: c.app.InstallationID()}
}

// grantForm is the principal and optional target of a binding or
// restriction form.
func grantForm(r *http.Request) (iamData, app.GrantRequest) {
	pf := r.PostForm
	d := iamData{PrincipalID: strings.TrimSpace(pf.Get("principalId")), RoleID: pf.Get("roleId"), Permission: strings.TrimSpace(pf.Get("permission")),
		TargetKind: pf.Get("targetKind"), TargetID: strings.TrimSpace(pf.Get("targetId"))}
	in := app.GrantRequest{PrincipalID: d.PrincipalID, RoleID: d.RoleID, Permission: d.Permission}
	if d.TargetKind != "" || d.TargetID != "" {
		in.Target = &occ.Target{Kind: occ.Kind(d.TargetKind), ID: d.TargetID}
	}
	return d, in
}

// iamDone shows the Access page again after a write: refused with its
// message and the form's input, or with a notice.
func (c *Console) iamDone(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace, d iamData, err error, notice string) {
	c.after(w, r, err, iamPath(ns)+"?notice="+notice, func(status int, v *view) { c.renderIAM(w, r, s, ns, status, v, d) })
}

func (c *Console) createRole(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	d := iamData{RoleName: r.PostForm.Get("name"), Permissions: r.PostForm.Get("permissions")}
	_, err := c.app.CreateRole(r.Context(), s.caller, scopeOf(ns), d.RoleName, strings.Fields(strings.ReplaceAll(d.Permissions, ",", " ")))
	c.iamDone(w, r, s, ns, d, err, "created")
}

// iamRemove deletes the role, binding or restriction the path names
// (param) at the page's scope.
func (c *Console) iamRemove(param string, del func(ctx context.Context, c occ.Caller, scopeNS, id string) error) nsPage {
	return func(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
		err := del(r.Context(), s.caller, scopeOf(ns), r.PathValue(param))
		c.iamDone(w, r, s, ns, iamData{}, err, "removed")
	}
}

func (c *Console) createBinding(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	d, in := grantForm(r)
	in.Permission = ""
	_, err := c.app.CreateBinding(r.Context(), s.caller, scopeOf(ns), in)
	c.iamDone(w, r, s, ns, d, err, "created")
}

func (c *Console) createRestriction(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	d, in := grantForm(r)
	in.RoleID = ""
	_, err := c.app.CreateRestriction(r.Context(), s.caller, scopeOf(ns), in)
	c.iamDone(w, r, s, ns, d, err, "created")
}

// targetField is one form's target picker, showing the refused input.
type targetField struct {
	Prefix, Kind, ID string
	Kinds            []occ.Kind
}

func targetFields(prefix string, d iamData) targetField {
	return targetField{Prefix: prefix, Kind: d.TargetKind, ID: d.TargetID, Kinds: d.Kinds}
}
