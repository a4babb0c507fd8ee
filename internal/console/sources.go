package console

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
)

// Credential Sources: references the installation's Credential Gateway
// resolves for dedicated Codex. Their secret fields name Secrets of the
// Namespace (values never shown); config holds no credentials.

// Field → Secret rows of the forms: at least sourceSecretRows are shown,
// one more than the saved fields when there is room, and up to
// maxSourceRows (the API's limit of Secret fields) are read.
const (
	sourceSecretRows = 4
	maxSourceRows    = 16
)

type sourceSecret struct{ Field, SecretID string }

type sourcesData struct {
	Items   []occ.CredentialSource
	Next    string
	Secrets []occ.Secret // the Secret pickers' choices
	Create  action
	// Unset: no Credential Gateway is configured, so there is nothing to
	// list or create (the page says so instead of failing).
	Unset string
	// The refused form's input.
	Name, Type, Config string
	Refs               []sourceSecret
}

type sourceData struct {
	Source  occ.CredentialSource
	Config  string
	Secrets []sourceSecret
	Names   map[string]string // Secret ID → name, where readable
	Choices []occ.Secret      // the replacement form's Secret pickers
	Refs    []sourceSecret    // the replacement form's rows
	Update  action
	Delete  action
}

func sourcesPath(nsID string) string { return nsPath(nsID) + "/credential-sources" }

func (c *Console) credentialSources(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	c.renderSources(w, r, s, ns, http.StatusOK, &view{}, sourcesData{Config: "{}"})
}

func (c *Console) renderSources(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace, status int, v *view, d sourcesData) {
	ctx := r.Context()
	v.Title, v.Session, v.NS = "Credential Sources", s, ns
	p, err := c.app.ListCredentialSources(ctx, s.caller, ns.ID, app.PageRequest{Size: pageSize, Token: r.URL.Query().Get("page")})
	if oe := occ.AsError(err); oe != nil && oe.Code == occ.CodeCredentialGatewayUnset {
		v.Data = sourcesData{Unset: oe.Message}
		c.render(w, r, status, "credential-sources", v)
		return
	} else if err != nil {
		c.fail(w, r, s, err)
		return
	}
	d.Items, d.Next = p.Items, p.Next
	d.Create = c.can(r, s, occ.KindCredentialSource, occ.ActionCreate, collection(occ.KindCredentialSource, ns), "create Credential Sources here")
	if sec, err := c.app.ListSecrets(ctx, s.caller, ns.ID, app.PageRequest{Size: app.MaxPageSize}); err == nil {
		d.Secrets = sec.Items
	}
	for len(d.Refs) < sourceSecretRows {
		d.Refs = append(d.Refs, sourceSecret{})
	}
	v.Data = d
	c.render(w, r, status, "credential-sources", v)
}

func (c *Console) createCredentialSource(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	pf := r.PostForm
	d := sourcesData{Name: pf.Get("name"), Type: strings.TrimSpace(pf.Get("type")), Config: formText(pf.Get("config"))}
	in := app.CredentialSourceInput{Name: d.Name, Type: d.Type}
	d.Refs, in.Secrets = readSourceSecrets(r, ns)
	var err error
	if strings.TrimSpace(d.Config) != "" {
		in.Config, err = parseObject(d.Config, notJSON("/config"))
	}
	var cs occ.CredentialSource
	if err == nil {
		cs, err = c.app.CreateCredentialSource(r.Context(), s.caller, ns.ID, in)
	}
	c.after(w, r, err, sourcesPath(ns.ID)+"/"+cs.ID+"?notice=created", func(status int, v *view) { c.renderSources(w, r, s, ns, status, v, d) })
}

// readSourceSecrets reads the field → Secret rows of a form: the rows not
// left empty, as sent and as references.
func readSourceSecrets(r *http.Request, ns *occ.Namespace) ([]sourceSecret, map[string]occ.SecretRef) {
	var rows []sourceSecret
	refs := map[string]occ.SecretRef{}
	for i := range maxSourceRows {
		row := sourceSecret{Field: strings.TrimSpace(r.PostForm.Get(fmt.Sprintf("field-%d", i))), SecretID: r.PostForm.Get(fmt.Sprintf("secret-%d", i))}
		if row.Field != "" || row.SecretID != "" {
			rows = append(rows, row)
			refs[row.Field] = occ.SecretRef{Kind: "secret", NamespaceID: ns.ID, ID: row.SecretID}
		}
	}
	return rows, refs
}

func (c *Console) credentialSourcePage(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	c.renderSource(w, r, s, ns, http.StatusOK, &view{}, nil)
}

// renderSource shows a Credential Source; rows are a refused replacement
// form's input (nil: the saved fields).
func (c *Console) renderSource(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace, status int, v *view, rows []sourceSecret) {
	ctx := r.Context()
	cs, err := c.app.GetCredentialSource(ctx, s.caller, ns.ID, r.PathValue("cs"))
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	config, _ := json.MarshalIndent(cs.Config, "", "  ")
	d := sourceData{Source: cs, Config: string(config), Names: map[string]string{},
		Update: c.can(r, s, occ.KindCredentialSource, occ.ActionUpdate, cs.Ref(), "replace this Credential Source's Secrets"),
		Delete: c.can(r, s, occ.KindCredentialSource, occ.ActionDelete, cs.Ref(), "delete this Credential Source")}
	for _, f := range slices.Sorted(maps.Keys(cs.Secrets)) {
		d.Secrets = append(d.Secrets, sourceSecret{Field: f, SecretID: cs.Secrets[f].ID})
	}
	if sec, err := c.app.ListSecrets(ctx, s.caller, ns.ID, app.PageRequest{Size: app.MaxPageSize}); err == nil {
		d.Choices = sec.Items
		for _, x := range sec.Items {
			d.Names[x.ID] = x.Name
		}
	}
	d.Refs = rows
	if rows == nil {
		d.Refs = slices.Clone(d.Secrets)
		if len(d.Refs) < maxSourceRows {
			d.Refs = append(d.Refs, sourceSecret{})
		}
	}
	for len(d.Refs) < sourceSecretRows {
		d.Refs = append(d.Refs, sourceSecret{})
	}
	v.Title, v.Session, v.NS, v.Data = cs.Name, s, ns, d
	c.render(w, r, status, "credential-source", v)
}

// updateCredentialSource replaces the source's Secret fields with the
// form's rows (all empty: none), as the API's PATCH of secrets.
func (c *Console) updateCredentialSource(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	id := r.PathValue("cs")
	rows, refs := readSourceSecrets(r, ns)
	_, err := c.app.UpdateCredentialSource(r.Context(), s.caller, ns.ID, id, refs, formVersion(r))
	c.after(w, r, err, sourcesPath(ns.ID)+"/"+id+"?notice=saved", func(status int, v *view) { c.renderSource(w, r, s, ns, status, v, rows) })
}

func (c *Console) deleteCredentialSource(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	err := c.app.DeleteCredentialSource(r.Context(), s.caller, ns.ID, r.PathValue("cs"), formVersion(r))
	c.after(w, r, err, sourcesPath(ns.ID)+"?notice=deleted", func(status int, v *view) { c.renderSource(w, r, s, ns, status, v, nil) })
}

// secretRows is the Secret fields part of a form.
type secretRows struct {
	Rows    []sourceSecret
	Choices []occ.Secret
}

func sourceRows(rows []sourceSecret, choices []occ.Secret) secretRows {
	return secretRows{Rows: rows, Choices: choices}
}
