package console

import (
	"net/http"
	"strings"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
)

// Service accounts: a Namespace's provider accounts, each tied to one
// Backend, which issues the account's credential. occ keeps the credential
// only encrypted and never shows it; pages show its kind and dates.

type accountsData struct {
	Items    []occ.ServiceAccount
	Next     string
	Backends []app.Backend // empty when the caller may not list them
	Create   action
	// The refused form's input.
	Name, BackendID string
}

type accountData struct {
	Account occ.ServiceAccount
	Issue   action
	Delete  action
}

func accountsPath(nsID string) string { return nsPath(nsID) + "/service-accounts" }

func (c *Console) serviceAccounts(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	c.renderAccounts(w, r, s, ns, http.StatusOK, &view{}, accountsData{})
}

func (c *Console) renderAccounts(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace, status int, v *view, d accountsData) {
	ctx := r.Context()
	p, err := c.app.ListServiceAccounts(ctx, s.caller, ns.ID, app.PageRequest{Size: pageSize, Token: r.URL.Query().Get("page")})
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	d.Items, d.Next = p.Items, p.Next
	d.Create = c.can(r, s, occ.KindServiceAccount, occ.ActionCreate, collection(occ.KindServiceAccount, ns), "create service accounts here")
	if b, err := c.app.ListBackends(ctx, s.caller, app.PageRequest{Size: app.MaxPageSize}); err == nil {
		d.Backends = b.Items
	}
	v.Title, v.Session, v.NS, v.Data = "Service accounts", s, ns, d
	c.render(w, r, status, "service-accounts", v)
}

func (c *Console) createServiceAccount(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	d := accountsData{Name: r.PostForm.Get("name"), BackendID: strings.TrimSpace(r.PostForm.Get("backendId"))}
	sa, err := c.app.CreateServiceAccount(r.Context(), s.caller, ns.ID, d.Name, d.BackendID)
	c.after(w, r, err, accountsPath(ns.ID)+"/"+sa.ID+"?notice=created", func(status int, v *view) { c.renderAccounts(w, r, s, ns, status, v, d) })
}

func (c *Console) serviceAccountPage(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	c.renderAccount(w, r, s, ns, http.StatusOK, &view{})
}

func (c *Console) renderAccount(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace, status int, v *view) {
	sa, err := c.app.GetServiceAccount(r.Context(), s.caller, ns.ID, r.PathValue("sa"))
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	ref := sa.Ref()
	d := accountData{Account: sa,
		Issue:  c.can(r, s, occ.KindServiceAccount, occ.ActionUpdate, ref, "issue this account's credential"),
		Delete: c.can(r, s, occ.KindServiceAccount, occ.ActionDelete, ref, "delete this service account")}
	v.Title, v.Session, v.NS, v.Data = sa.Name, s, ns, d
	c.render(w, r, status, "service-account", v)
}

// issueCredential asks the account's Backend for its credential; occ
// stores it encrypted and the page shows only that it exists.
func (c *Console) issueCredential(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	id := r.PathValue("sa")
	_, err := c.app.IssueServiceAccountCredential(r.Context(), s.caller, ns.ID, id)
	c.after(w, r, err, accountsPath(ns.ID)+"/"+id+"?notice=issued", func(status int, v *view) { c.renderAccount(w, r, s, ns, status, v) })
}

func (c *Console) deleteServiceAccount(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	err := c.app.DeleteServiceAccount(r.Context(), s.caller, ns.ID, r.PathValue("sa"), formVersion(r))
	c.after(w, r, err, accountsPath(ns.ID)+"?notice=deleted", func(status int, v *view) { c.renderAccount(w, r, s, ns, status, v) })
}
