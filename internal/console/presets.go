package console

import (
	"net/http"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
)

// presetRow is a Preset and whether the caller may delete it (only a
// Namespace's own Presets can be deleted here).
type presetRow struct {
	Preset occ.Preset
	Delete action
}

type presetsData struct {
	Rows   []presetRow
	Next   string
	Create action
	Launch launchChoices
	Name   string // the refused create's name
}

// presets lists the Presets of a Namespace (its own and the
// installation's) the caller may read, which Create Agent offers, with a
// form for a new Namespace Preset.
func (c *Console) presets(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	c.renderPresets(w, r, s, ns, http.StatusOK, &view{}, "", launchForm{})
}

func (c *Console) renderPresets(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace, status int, v *view, name string, f launchForm) {
	p, err := c.app.ListPresets(r.Context(), s.caller, ns.ID, app.PageRequest{Size: pageSize, Token: r.URL.Query().Get("page")})
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := presetsData{Next: p.Next, Name: name,
		Create: c.can(r, s, occ.KindPreset, occ.ActionCreate, collection(occ.KindPreset, ns), "create Presets here")}
	if d.Create.Allowed {
		d.Launch = c.choices(r, s, ns, f, "Unset")
	}
	for _, pre := range p.Items {
		row := presetRow{Preset: pre, Delete: c.can(r, s, occ.KindPreset, occ.ActionDelete, pre.Ref(), "delete this Preset")}
		d.Rows = append(d.Rows, row)
	}
	v.Title, v.Session, v.NS, v.Data = "Presets", s, ns, d
	c.render(w, r, status, "presets", v)
}

func (c *Console) createPreset(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	name, f := r.PostForm.Get("name"), readLaunchForm(r.PostForm)
	plugins, err := f.plugins()
	if err == nil {
		_, err = c.app.CreatePreset(r.Context(), s.caller, ns.ID, name, occ.PresetSettings{ConfigurationID: f.ConfigurationID,
			ExecutionMode: f.ExecutionMode, BackendID: f.BackendID, HarnessAuth: f.harness(ns.ID), Plugins: plugins})
	}
	c.after(w, r, err, nsPath(ns.ID)+"/presets?notice=created", func(status int, v *view) { c.renderPresets(w, r, s, ns, status, v, name, f) })
}

func (c *Console) deletePreset(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	err := c.app.DeletePreset(r.Context(), s.caller, ns.ID, r.PathValue("preset"), formVersion(r))
	c.after(w, r, err, nsPath(ns.ID)+"/presets?notice=deleted", func(status int, v *view) { c.renderPresets(w, r, s, ns, status, v, "", launchForm{}) })
}
