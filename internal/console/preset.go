package console

import (
	"net/http"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
)

// One Preset: its settings as a form, saved through the same use case as
// the API's PATCH (every field sent: an empty choice unsets it). Agents
// made from it keep their settings.

type presetData struct {
	Preset occ.Preset
	Name   string
	Launch launchChoices
	Update action
	Delete action
}

func (c *Console) presetPage(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	c.renderPreset(w, r, s, ns, http.StatusOK, &view{}, nil, "")
}

// renderPreset shows the form filled from the saved Preset, or with a
// refused form's input (f non-nil).
func (c *Console) renderPreset(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace, status int, v *view, f *launchForm, name string) {
	p, err := c.app.GetPreset(r.Context(), s.caller, ns.ID, r.PathValue("preset"))
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := presetData{Preset: p, Name: p.Name,
		Update: c.can(r, s, occ.KindPreset, occ.ActionUpdate, p.Ref(), "change this Preset"),
		Delete: c.can(r, s, occ.KindPreset, occ.ActionDelete, p.Ref(), "delete this Preset")}
	var form launchForm
	if ps := p.Settings; ps != nil {
		form = launchFormOf(ps.ConfigurationID, occ.AgentSettings{ExecutionMode: ps.ExecutionMode, BackendID: ps.BackendID, HarnessAuth: ps.HarnessAuth, Plugins: ps.Plugins})
	} else {
		d.Update = action{Reason: "The Preset's saved settings cannot be read, so they cannot be changed here; delete it and create it again."}
	}
	if f != nil {
		form, d.Name = *f, name
	}
	if d.Update.Allowed {
		d.Launch = c.choices(r, s, ns, form, "Unset")
	}
	v.Title, v.Session, v.NS, v.Data = "Preset "+p.Name, s, ns, d
	c.render(w, r, status, "preset", v)
}

func (c *Console) updatePreset(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	id, name, f := r.PathValue("preset"), r.PostForm.Get("name"), readLaunchForm(r.PostForm)
	plugins, err := f.plugins()
	if err == nil {
		h := f.harness(ns.ID)
		_, err = c.app.UpdatePreset(r.Context(), s.caller, ns.ID, id, app.PresetPatch{Name: &name,
			ExecutionMode:   optional(f.ExecutionMode),
			BackendID:       optional(f.BackendID),
			ConfigurationID: optional(f.ConfigurationID),
			HarnessAuth:     app.Optional[*occ.HarnessAuth]{Set: true, Null: h == nil, Value: h},
			Plugins:         plugins, PluginsSet: true}, formVersion(r))
	}
	c.after(w, r, err, nsPath(ns.ID)+"/presets/"+id+"?notice=saved", func(status int, v *view) { c.renderPreset(w, r, s, ns, status, v, &f, name) })
}

// optional is a form's choice as a PATCH field: empty unsets it.
func optional(v string) app.Optional[string] {
	return app.Optional[string]{Set: true, Null: v == "", Value: v}
}
