package console

import (
	"net/http"
	"strings"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
)

type iamData struct {
	Roles      []occ.Role
	Bindings   []occ.Binding
	RoleNames  map[string]string // role ID → name, for the bindings table
	Administer action
	// The refused form's input.
	RoleName, Permissions, PrincipalID, RoleID, TargetKind, TargetID string
	Kinds                                                            []occ.Kind
}

// iamPage lists a Namespace's roles and bindings, with forms to add them
// (namespace:administer, as the API's IAM routes).
func (c *Console) iamPage(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	c.renderIAM(w, r, s, ns, http.StatusOK, &view{}, iamData{})
}

func (c *Console) renderIAM(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace, status int, v *view, d iamData) {
	ctx, all := r.Context(), app.PageRequest{Size: app.MaxPageSize}
	roles, err := c.app.ListRoles(ctx, s.caller, ns.ID, all)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	bindings, err := c.app.ListBindings(ctx, s.caller, ns.ID, all)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	d.Roles, d.Bindings, d.RoleNames, d.Kinds = roles.Items, bindings.Items, map[string]string{}, occ.Kinds
	for _, role := range roles.Items {
		d.RoleNames[role.ID] = role.Name
	}
	d.Administer = c.can(r, s, occ.KindNamespace, occ.ActionAdminister, ns.Ref(), "change this Namespace's roles and bindings")
	v.Title, v.Session, v.NS, v.Data = "Access in "+ns.Name, s, ns, d
	c.render(w, r, status, "iam", v)
}

func (c *Console) createRole(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	d := iamData{RoleName: r.PostForm.Get("name"), Permissions: r.PostForm.Get("permissions")}
	if _, err := c.app.CreateRole(r.Context(), s.caller, ns.ID, d.RoleName, strings.Fields(strings.ReplaceAll(d.Permissions, ",", " "))); err != nil {
		v := &view{}
		c.renderIAM(w, r, s, ns, c.formError(r, v, err), v, d)
		return
	}
	http.Redirect(w, r, nsPath(ns.ID)+"/iam?notice=created", http.StatusSeeOther)
}

func (c *Console) createBinding(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	pf := r.PostForm
	d := iamData{PrincipalID: strings.TrimSpace(pf.Get("principalId")), RoleID: pf.Get("roleId"), TargetKind: pf.Get("targetKind"), TargetID: strings.TrimSpace(pf.Get("targetId"))}
	in := app.GrantRequest{PrincipalID: d.PrincipalID, RoleID: d.RoleID}
	if d.TargetKind != "" || d.TargetID != "" {
		in.Target = &occ.Target{Kind: occ.Kind(d.TargetKind), ID: d.TargetID}
	}
	if _, err := c.app.CreateBinding(r.Context(), s.caller, ns.ID, in); err != nil {
		v := &view{}
		c.renderIAM(w, r, s, ns, c.formError(r, v, err), v, d)
		return
	}
	http.Redirect(w, r, nsPath(ns.ID)+"/iam?notice=created", http.StatusSeeOther)
}

func (c *Console) deleteBinding(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	if err := c.app.DeleteBinding(r.Context(), s.caller, ns.ID, r.PathValue("binding")); err != nil {
		v := &view{}
		c.renderIAM(w, r, s, ns, c.formError(r, v, err), v, iamData{})
		return
	}
	http.Redirect(w, r, nsPath(ns.ID)+"/iam", http.StatusSeeOther)
}
