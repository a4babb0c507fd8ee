package console

import (
	"net/http"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
)

type namespacesData struct {
	Items  []occ.Namespace
	Next   string
	Create action
	Name   string // the refused create's input
}

// namespaces lists the Namespaces the caller may read.
func (c *Console) namespaces(w http.ResponseWriter, r *http.Request, s *session) {
	c.renderNamespaces(w, r, s, http.StatusOK, &view{}, "")
}

func (c *Console) renderNamespaces(w http.ResponseWriter, r *http.Request, s *session, status int, v *view, name string) {
	p, err := c.app.ListNamespaces(r.Context(), s.caller, app.PageRequest{Size: pageSize, Token: r.URL.Query().Get("page")})
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	inst := c.installation()
	v.Title, v.Session = "Namespaces", s
	v.Data = namespacesData{Items: p.Items, Next: p.Next, Name: name,
		Create: c.can(r, s, occ.KindNamespace, occ.ActionCreate, inst, "create Namespaces")}
	c.render(w, r, status, "namespaces", v)
}

func (c *Console) createNamespace(w http.ResponseWriter, r *http.Request, s *session) {
	name := r.PostForm.Get("name")
	ns, err := c.app.CreateNamespace(r.Context(), s.caller, name)
	if err != nil {
		v := &view{}
		c.renderNamespaces(w, r, s, c.formError(r, v, err), v, name)
		return
	}
	http.Redirect(w, r, nsPath(ns.ID), http.StatusSeeOther)
}

// deleteNamespace starts (or retries, or takes over) a teardown; the form
// carries the version the person saw, so a changed Namespace is not
// deleted unseen.
func (c *Console) deleteNamespace(w http.ResponseWriter, r *http.Request, s *session) {
	if _, err := c.app.DeleteNamespace(r.Context(), s.caller, r.PathValue("ns"), formVersion(r)); err != nil {
		v := &view{}
		c.renderNamespaces(w, r, s, c.formError(r, v, err), v, "")
		return
	}
	http.Redirect(w, r, Prefix+"namespaces", http.StatusSeeOther)
}

// switchNamespace is the Namespace picker's target.
func (c *Console) switchNamespace(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.URL.Query().Get("ns")
	if !occ.ValidID(occ.PrefixNamespace, id) {
		http.Redirect(w, r, Prefix+"namespaces", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, nsPath(id), http.StatusSeeOther)
}

// pageSize is the console's list page size.
const pageSize = 50

func nsPath(id string) string { return Prefix + "namespaces/" + id }
