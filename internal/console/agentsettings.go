package console

import (
	"net/http"
	"reflect"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
)

// An Agent's draft settings, edited through the same use case as the API's
// PATCH: the Configuration (always sent), execution mode, Backend, harness
// authentication and plugins. A change needs a deployment to take effect.

type agentSettingsData struct {
	Agent   occ.Agent
	Version int64 // the version the form was filled from
	Launch  launchChoices
	Update  action
}

func (c *Console) agentSettings(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	c.renderAgentSettings(w, r, s, ns, http.StatusOK, &view{}, nil)
}

// renderAgentSettings shows the form filled from the saved settings, or
// with a refused form's input (f non-nil).
func (c *Console) renderAgentSettings(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace, status int, v *view, f *launchForm) {
	g, err := c.app.GetAgent(r.Context(), s.caller, ns.ID, r.PathValue("agent"))
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	form := launchFormOf(g.ConfigurationID, g.Settings)
	if f != nil {
		form = *f
	}
	d := agentSettingsData{Agent: g, Version: g.Version, Launch: c.choices(r, s, ns, form, "None"),
		Update: c.can(r, s, occ.KindAgent, occ.ActionUpdate, g.Ref(), "change this Agent's settings")}
	d.Launch.ConfigRequired = true
	if g.ReadError != nil {
		d.Update = action{Reason: "The Agent's saved settings cannot be read, so they cannot be changed here."}
	}
	v.Title, v.Session, v.NS, v.Data = "Settings of "+g.Name, s, ns, d
	c.render(w, r, status, "agent-settings", v)
}

// updateAgentSettings sends what changed: an emptied Backend or harness
// binding is cleared, an unchanged binding is not sent (so it is not
// re-authorized), and plugins always replace the saved set.
func (c *Console) updateAgentSettings(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	ctx, id, f := r.Context(), r.PathValue("agent"), readLaunchForm(r.PostForm)
	g, err := c.app.GetAgent(ctx, s.caller, ns.ID, id)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	p := app.AgentPatch{ConfigurationID: f.ConfigurationID, ExecutionMode: f.ExecutionMode, PluginsSet: true}
	if f.BackendID != g.Settings.BackendID {
		p.BackendID = optional(f.BackendID)
	}
	if h := f.harness(ns.ID); !reflect.DeepEqual(h, g.Settings.HarnessAuth) {
		p.HarnessAuth = app.Optional[*occ.HarnessAuth]{Set: true, Null: h == nil, Value: h}
	}
	p.Plugins, err = f.plugins()
	if err == nil {
		_, err = c.app.UpdateAgent(ctx, s.caller, ns.ID, id, p, formVersion(r))
	}
	c.after(w, r, err, agentPath(ns.ID, id)+"?notice=saved", func(status int, v *view) { c.renderAgentSettings(w, r, s, ns, status, v, &f) })
}
