package console

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
)

type configurationsData struct {
	Items  []occ.Configuration
	Next   string
	Create action
	Name   string // the refused create's input
	JSON   string
}

func (c *Console) configurations(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	c.renderConfigurations(w, r, s, ns, http.StatusOK, &view{}, "", "{}")
}

func (c *Console) renderConfigurations(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace, status int, v *view, name, doc string) {
	p, err := c.app.ListConfigurations(r.Context(), s.caller, ns.ID, app.PageRequest{Size: pageSize, Token: r.URL.Query().Get("page")})
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	v.Title, v.Session, v.NS = "Configurations", s, ns
	v.Data = configurationsData{Items: p.Items, Next: p.Next, Name: name, JSON: doc,
		Create: c.can(r, s, occ.KindConfiguration, occ.ActionCreate, occ.ResourceRef{Kind: occ.KindConfiguration, ID: ns.ID, NamespaceID: ns.ID}, "create Configurations here")}
	c.render(w, r, status, "configurations", v)
}

// errNotJSON is a Configuration document that does not parse as a JSON
// object.
var errNotJSON = notJSON("/values")

// notJSON refuses a JSON editor's text at its field.
func notJSON(at string) error {
	return occ.Invalid("The document is not a JSON object.", occ.Detail{Path: at, Code: occ.DetailInvalidFmt})
}

// parseDocument reads a Configuration's JSON editor text as an object.
func parseDocument(text string) (map[string]any, error) { return parseObject(text, errNotJSON) }

// parseObject reads a JSON editor's text as an object, or refuses it with
// bad.
func parseObject(text string, bad error) (map[string]any, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	if err := dec.Decode(&doc); err != nil || doc == nil || dec.More() {
		return nil, bad
	}
	return doc, nil
}

func (c *Console) createConfiguration(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	name, text := r.PostForm.Get("name"), formText(r.PostForm.Get("values"))
	doc, err := parseDocument(text)
	if err == nil {
		var cfg occ.Configuration
		cfg, err = c.app.CreateConfiguration(r.Context(), s.caller, ns.ID, app.ConfigurationInput{Name: name, Kind: occ.ConfigurationKindAgent, Values: doc})
		if err == nil {
			http.Redirect(w, r, nsPath(ns.ID)+"/configurations/"+cfg.ID+"?notice=created", http.StatusSeeOther)
			return
		}
	}
	v := &view{}
	c.renderConfigurations(w, r, s, ns, c.formError(r, v, err), v, name, text)
}

type configurationData struct {
	Configuration occ.Configuration
	JSON          string
	Update        action
	Delete        action
}

func (c *Console) configurationPage(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	c.renderConfiguration(w, r, s, ns, http.StatusOK, &view{}, nil)
}

// renderConfiguration shows the editor; kept is the person's refused text.
func (c *Console) renderConfiguration(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace, status int, v *view, kept *string) {
	cfg, err := c.app.GetConfiguration(r.Context(), s.caller, ns.ID, r.PathValue("cfg"))
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := configurationData{Configuration: cfg,
		Update: c.can(r, s, occ.KindConfiguration, occ.ActionUpdate, cfg.Ref(), "change this Configuration"),
		Delete: c.can(r, s, occ.KindConfiguration, occ.ActionDelete, cfg.Ref(), "delete this Configuration")}
	if kept != nil {
		d.JSON = *kept
	} else if cfg.Values != nil {
		b, _ := json.MarshalIndent(cfg.Values, "", "  ")
		d.JSON = string(b)
	}
	v.Title, v.Session, v.NS, v.Data = cfg.Name, s, ns, d
	c.render(w, r, status, "configuration", v)
}

// updateConfiguration saves the edited document as a JSON Merge Patch of
// the version the person loaded (the form carries it: a Configuration
// changed since is refused, not overwritten).
func (c *Console) updateConfiguration(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	text := formText(r.PostForm.Get("values"))
	err := c.saveConfiguration(r, s, ns, text)
	if err != nil {
		v := &view{}
		c.renderConfiguration(w, r, s, ns, c.formError(r, v, err), v, &text)
		return
	}
	http.Redirect(w, r, nsPath(ns.ID)+"/configurations/"+r.PathValue("cfg")+"?notice=saved", http.StatusSeeOther)
}

func (c *Console) saveConfiguration(r *http.Request, s *session, ns *occ.Namespace, text string) error {
	doc, err := parseDocument(text)
	if err != nil {
		return err
	}
	cur, err := c.app.GetConfiguration(r.Context(), s.caller, ns.ID, r.PathValue("cfg"))
	if err != nil {
		return err
	}
	_, err = c.app.UpdateConfiguration(r.Context(), s.caller, ns.ID, cur.ID, app.ConfigurationPatch{Values: mergePatch(cur.Values, doc)}, formVersion(r))
	return err
}

func (c *Console) deleteConfiguration(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	if err := c.app.DeleteConfiguration(r.Context(), s.caller, ns.ID, r.PathValue("cfg"), formVersion(r)); err != nil {
		v := &view{}
		c.renderConfiguration(w, r, s, ns, c.formError(r, v, err), v, nil)
		return
	}
	http.Redirect(w, r, nsPath(ns.ID)+"/configurations", http.StatusSeeOther)
}

// mergePatch is the JSON Merge Patch (RFC 7396) that turns from into to:
// removed members become null, changed objects recurse, anything else is
// replaced.
func mergePatch(from, to map[string]any) map[string]any {
	out := map[string]any{}
	for k := range from {
		if _, ok := to[k]; !ok {
			out[k] = nil
		}
	}
	for k, v := range to {
		old, had := from[k]
		if had && reflect.DeepEqual(old, v) {
			continue
		}
		if om, ok := old.(map[string]any); ok {
			if nm, ok := v.(map[string]any); ok && had {
				out[k] = mergePatch(om, nm)
				continue
			}
		}
		out[k] = v
	}
	return out
}
