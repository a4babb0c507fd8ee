package console

import (
	"context"
	"net/http"
	"slices"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
)

type agentData struct {
	Agent         occ.Agent
	State         string
	Configuration string // its name, when readable
	Latest        *app.DeploymentStatus
	Revisions     []occ.Revision // newest first
	Files         []string
	Deploy        action
	Stop          action
	Delete        action
	Update        action
	NativeAdmin   *app.NativeAdminStatus
}

// agentPage shows one Agent: settings, newest deployment, revisions, the
// workspace files and what the caller may do.
func (c *Console) agentPage(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	c.renderAgent(w, r, s, ns, http.StatusOK, &view{})
}

func (c *Console) renderAgent(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace, status int, v *view) {
	ctx := r.Context()
	g, err := c.app.GetAgent(ctx, s.caller, ns.ID, r.PathValue("agent"))
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := agentData{Agent: g, Files: occ.WorkspaceFileNames}
	if cfg, err := c.app.GetConfiguration(ctx, s.caller, ns.ID, g.ConfigurationID); err == nil {
		d.Configuration = cfg.Name
	}
	if dep, ok, err := c.app.LatestDeployment(ctx, s.caller, ns.ID, g.ID); err != nil {
		c.fail(w, r, s, err)
		return
	} else if ok {
		d.Latest = &dep
	}
	d.State = stateOf(g, d.Latest)
	revs, err := c.app.ListRevisions(ctx, s.caller, ns.ID, g.ID, app.PageRequest{Size: app.MaxPageSize})
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	d.Revisions = revs.Items
	slices.Reverse(d.Revisions)
	ref := g.Ref()
	d.Deploy = c.can(r, s, occ.KindAgent, occ.ActionDeploy, ref, "deploy this Agent")
	d.Stop = c.can(r, s, occ.KindAgent, occ.ActionOperate, ref, "stop this Agent")
	d.Delete = c.can(r, s, occ.KindAgent, occ.ActionDelete, ref, "delete this Agent")
	d.Update = c.can(r, s, occ.KindAgent, occ.ActionUpdate, ref, "change this Agent's settings")
	if c.app.NativeAdminEnabled() && c.can(r, s, occ.KindAgent, occ.ActionAdminister, ref, "").Allowed {
		if na, err := c.app.NativeAdminAvailability(ctx, s.caller, ns.ID, g.ID); err == nil {
			d.NativeAdmin = &na
		}
	}
	v.Title, v.Session, v.NS, v.Data = g.Name, s, ns, d
	c.render(w, r, status, "agent", v)
}

// deployAgent admits a revision and shows its deployment's timeline.
func (c *Console) deployAgent(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	rev, err := c.app.Deploy(r.Context(), s.caller, ns.ID, r.PathValue("agent"))
	if err != nil {
		v := &view{}
		c.renderAgent(w, r, s, ns, c.formError(r, v, err), v)
		return
	}
	http.Redirect(w, r, agentPath(ns.ID, rev.AgentID)+"/deployments/"+rev.ID, http.StatusSeeOther)
}

func (c *Console) stopAgent(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	c.agentAction(w, r, s, ns, "stopped", c.app.Stop)
}

func (c *Console) deleteAgent(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	c.agentAction(w, r, s, ns, "deleting", c.app.DeleteAgent)
}

// notices are what a finished action says on the page it returns to.
var notices = map[string]string{
	"stopped":  "Stop accepted: the Agent's runtime is being removed.",
	"deleting": "Delete accepted: the Agent is being torn down.",
	"saved":    "Saved.",
	"created":  "Created.",
	"rotated":  "The Secret's value was replaced.",
	"removed":  "Removed.",
	"deleted":  "Deleted.",
	"issued":   "The credential was issued and stored encrypted; occ never shows it.",
}

// agentAction runs a stop or delete, then shows the Agent page again.
func (c *Console) agentAction(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace, notice string,
	do func(ctx context.Context, c occ.Caller, nsID, id string) (occ.Agent, error)) {
	id := r.PathValue("agent")
	if _, err := do(r.Context(), s.caller, ns.ID, id); err != nil {
		v := &view{}
		c.renderAgent(w, r, s, ns, c.formError(r, v, err), v)
		return
	}
	http.Redirect(w, r, agentPath(ns.ID, id)+"?notice="+notice, http.StatusSeeOther)
}
