package console

import (
	"net/http"
	"strings"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
)

type keysData struct {
	Keys []occ.ServiceKey
	Next string
	// Issued is the key just created: its plaintext is shown on this one
	// answer (never stored, never shown again).
	Issued           *occ.ServiceKey
	Plaintext        string
	PrincipalID      string // the refused form's input
	NamespaceID      string
	Name             string
	ServicePrincipal []occ.Principal
}

// keys lists the installation's service keys and issues new ones
// (installation:administer, as the API's routes).
func (c *Console) keys(w http.ResponseWriter, r *http.Request, s *session) {
	c.renderKeys(w, r, s, http.StatusOK, &view{}, keysData{})
}

func (c *Console) renderKeys(w http.ResponseWriter, r *http.Request, s *session, status int, v *view, d keysData) {
	ctx := r.Context()
	p, err := c.app.ListServiceKeys(ctx, s.caller, app.PageRequest{Size: pageSize, Token: r.URL.Query().Get("page")})
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	d.Keys, d.Next = p.Items, p.Next
	if sp, err := c.app.ListPrincipals(ctx, s.caller, occ.PrincipalService, app.PageRequest{Size: app.MaxPageSize}); err == nil {
		d.ServicePrincipal = sp.Items
	}
	v.Title, v.Session, v.Data = "Service keys", s, d
	c.render(w, r, status, "keys", v)
}

func (c *Console) issueKey(w http.ResponseWriter, r *http.Request, s *session) {
	pf := r.PostForm
	d := keysData{PrincipalID: strings.TrimSpace(pf.Get("principalId")), NamespaceID: strings.TrimSpace(pf.Get("namespaceId")), Name: pf.Get("name")}
	key, plaintext, err := c.app.IssueServiceKey(r.Context(), s.caller, app.KeyRequest{ServicePrincipalID: d.PrincipalID, NamespaceID: d.NamespaceID, Name: d.Name})
	v := &view{}
	if err != nil {
		c.renderKeys(w, r, s, c.formError(r, v, err), v, d)
		return
	}
	d = keysData{Issued: &key, Plaintext: plaintext}
	c.renderKeys(w, r, s, http.StatusCreated, v, d)
}

func (c *Console) revokeKey(w http.ResponseWriter, r *http.Request, s *session) {
	if err := c.app.RevokeServiceKey(r.Context(), s.caller, r.PathValue("key")); err != nil {
		v := &view{}
		c.renderKeys(w, r, s, c.formError(r, v, err), v, keysData{})
		return
	}
	http.Redirect(w, r, Prefix+"keys", http.StatusSeeOther)
}
