package console

import (
	"net/http"
	"strconv"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
)

// secretRow is a Secret and what the caller may do with it; its value is
// write-only and never shown.
type secretRow struct {
	Secret occ.Secret
	Rotate action
	Delete action
}

type secretsData struct {
	Rows   []secretRow
	Next   string
	Create action
	Name   string // the refused create's name (never its value)
}

func (c *Console) secrets(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	c.renderSecrets(w, r, s, ns, http.StatusOK, &view{}, "")
}

func (c *Console) renderSecrets(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace, status int, v *view, name string) {
	p, err := c.app.ListSecrets(r.Context(), s.caller, ns.ID, app.PageRequest{Size: pageSize, Token: r.URL.Query().Get("page")})
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := secretsData{Next: p.Next, Name: name,
		Create: c.can(r, s, occ.KindSecret, occ.ActionCreate, occ.ResourceRef{Kind: occ.KindSecret, ID: ns.ID, NamespaceID: ns.ID}, "create Secrets here")}
	for _, sec := range p.Items {
		d.Rows = append(d.Rows, secretRow{Secret: sec,
			Rotate: c.can(r, s, occ.KindSecret, occ.ActionUpdate, sec.Ref(), "replace this Secret's value"),
			Delete: c.can(r, s, occ.KindSecret, occ.ActionDelete, sec.Ref(), "delete this Secret")})
	}
	v.Title, v.Session, v.NS, v.Data = "Secrets", s, ns, d
	c.render(w, r, status, "secrets", v)
}

func (c *Console) createSecret(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	name := r.PostForm.Get("name")
	if _, err := c.app.CreateSecret(r.Context(), s.caller, ns.ID, name, []byte(r.PostForm.Get("value"))); err != nil {
		v := &view{}
		c.renderSecrets(w, r, s, ns, c.formError(r, v, err), v, name)
		return
	}
	http.Redirect(w, r, nsPath(ns.ID)+"/secrets?notice=created", http.StatusSeeOther)
}

func (c *Console) rotateSecret(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	if _, err := c.app.UpdateSecret(r.Context(), s.caller, ns.ID, r.PathValue("sec"), []byte(r.PostForm.Get("value")), formVersion(r)); err != nil {
		v := &view{}
		c.renderSecrets(w, r, s, ns, c.formError(r, v, err), v, "")
		return
	}
	http.Redirect(w, r, nsPath(ns.ID)+"/secrets?notice=rotated", http.StatusSeeOther)
}

func (c *Console) deleteSecret(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	if err := c.app.DeleteSecret(r.Context(), s.caller, ns.ID, r.PathValue("sec"), formVersion(r)); err != nil {
		v := &view{}
		c.renderSecrets(w, r, s, ns, c.formError(r, v, err), v, "")
		return
	}
	http.Redirect(w, r, nsPath(ns.ID)+"/secrets", http.StatusSeeOther)
}

// formVersion is the If-Match of a form: the version the person saw (a
// missing or garbled one matches nothing).
func formVersion(r *http.Request) app.IfMatch {
	v, err := strconv.ParseInt(r.PostForm.Get("version"), 10, 64)
	if err != nil {
		v = -1
	}
	return app.MatchVersion(v)
}
