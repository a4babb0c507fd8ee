package console

import (
	"net/http"
	"slices"
	"strings"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
)

// Fleet states: the colour a person scans for.
const (
	stateRunning   = "running"
	stateDeploying = "deploying"
	stateFailed    = "failed"
	stateStopped   = "stopped"
	stateDeleting  = "deleting"
)

var fleetStates = []string{stateRunning, stateDeploying, stateFailed, stateStopped, stateDeleting}

// stateOf sums up an Agent and its newest deployment.
func stateOf(g occ.Agent, d *app.DeploymentStatus) string {
	switch {
	case g.Status == occ.AgentDeleting:
		return stateDeleting
	case d != nil && (d.Status == occ.DeploymentQueued || d.Status == occ.DeploymentRunning):
		return stateDeploying
	case d != nil && d.Status == occ.DeploymentFailed:
		return stateFailed
	case g.DesiredState == occ.DesiredRunning && g.ActiveRevisionID != "":
		return stateRunning
	}
	return stateStopped
}

// fleetRow is one Agent of the fleet view.
type fleetRow struct {
	Agent  occ.Agent
	State  string
	Latest *app.DeploymentStatus // nil: none, or not readable by the caller
}

type fleetData struct {
	Rows   []fleetRow
	Next   string
	State  string // filter
	Query  string // filter: name contains
	States []string
	Create action
}

// fleet lists a Namespace's Agents with their state, filtered by state and
// name within the page.
func (c *Console) fleet(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	q := r.URL.Query()
	p, err := c.app.ListAgents(r.Context(), s.caller, ns.ID, app.PageRequest{Size: pageSize, Token: q.Get("page")})
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := fleetData{Next: p.Next, State: q.Get("state"), Query: strings.TrimSpace(q.Get("q")), States: fleetStates,
		Create: c.can(r, s, occ.KindAgent, occ.ActionCreate, occ.ResourceRef{Kind: occ.KindAgent, ID: ns.ID, NamespaceID: ns.ID}, "create Agents here")}
	if !slices.Contains(fleetStates, d.State) {
		d.State = ""
	}
	for _, g := range p.Items {
		row := fleetRow{Agent: g}
		if dep, ok, err := c.app.LatestDeployment(r.Context(), s.caller, ns.ID, g.ID); err != nil {
			c.fail(w, r, s, err)
			return
		} else if ok {
			row.Latest = &dep
		}
		row.State = stateOf(g, row.Latest)
		if d.State != "" && row.State != d.State {
			continue
		}
		if d.Query != "" && !strings.Contains(strings.ToLower(g.Name), strings.ToLower(d.Query)) {
			continue
		}
		d.Rows = append(d.Rows, row)
	}
	c.render(w, r, http.StatusOK, "fleet", &view{Title: "Agents in " + ns.Name, Session: s, NS: ns, Data: d})
}

func agentPath(nsID, id string) string { return nsPath(nsID) + "/agents/" + id }
