package console

import (
	"net/http"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
)

type deploymentData struct {
	Agent       occ.Agent
	Revision    string
	Status      app.DeploymentStatus
	Terminal    bool
	EventsURL   string // the API's event stream, for the live timeline
	Diagnose    action
	Diagnosis   *app.Diagnosis
	RefreshPath string
}

// deploymentPage shows one deployment's status; without script it is a
// page to refresh, with script (static/console.js) its timeline follows
// the API's event stream.
func (c *Console) deploymentPage(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	c.renderDeployment(w, r, s, ns, http.StatusOK, &view{}, nil)
}

func (c *Console) renderDeployment(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace, status int, v *view, diag *app.Diagnosis) {
	ctx := r.Context()
	g, err := c.app.GetAgent(ctx, s.caller, ns.ID, r.PathValue("agent"))
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	rev := r.PathValue("rev")
	st, err := c.app.GetDeployment(ctx, s.caller, ns.ID, g.ID, rev)
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	base := agentPath(ns.ID, g.ID) + "/deployments/" + rev
	d := deploymentData{Agent: g, Revision: rev, Status: st, Diagnosis: diag, RefreshPath: base,
		Terminal:  st.Status == occ.DeploymentSucceeded || st.Status == occ.DeploymentFailed,
		EventsURL: "/namespaces/" + ns.ID + "/agents/" + g.ID + "/deployments/" + rev + "/events",
		Diagnose:  c.can(r, s, occ.KindAgent, occ.ActionOperate, g.Ref(), "run diagnostics on this Agent")}
	v.Title, v.Session, v.NS, v.Data = "Deployment of "+g.Name, s, ns, d
	c.render(w, r, status, "deployment", v)
}

// diagnose runs fresh checks and shows them as a table.
func (c *Console) diagnose(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	diag, err := c.app.DiagnoseDeployment(r.Context(), s.caller, ns.ID, r.PathValue("agent"), r.PathValue("rev"))
	v := &view{}
	status := http.StatusOK
	if err != nil {
		status = c.formError(r, v, err)
		c.renderDeployment(w, r, s, ns, status, v, nil)
		return
	}
	c.renderDeployment(w, r, s, ns, status, v, &diag)
}
