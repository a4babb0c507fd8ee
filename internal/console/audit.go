package console

import (
	"net/http"
	"regexp"
	"slices"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
)

type auditData struct {
	Events   []occ.AuditEvent
	Next     string
	Action   string
	Outcome  string
	Resource string
	Outcomes []occ.AuditOutcome
	Base     string // the page's own path, for the filter form and paging
}

var (
	auditActionPattern = regexp.MustCompile(`^[a-z_.]{1,100}$`)
	auditIDPattern     = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)
)

// auditLog lists the installation's audit events (installation:administer).
func (c *Console) auditLog(w http.ResponseWriter, r *http.Request, s *session) {
	c.renderAudit(w, r, s, nil)
}

// nsAuditLog lists one Namespace's audit events (namespace:administer).
func (c *Console) nsAuditLog(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	c.renderAudit(w, r, s, ns)
}

// renderAudit shows a page of events, newest first, filtered by action,
// outcome and resource ID; a filter that cannot be valid is refused with
// its field, before anything is read.
func (c *Console) renderAudit(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	q := r.URL.Query()
	d := auditData{Action: q.Get("action"), Outcome: q.Get("outcome"), Resource: q.Get("resource"), Outcomes: occ.AuditOutcomes, Base: Prefix + "audit"}
	scope, title := "", "Audit log"
	if ns != nil {
		scope, title, d.Base = ns.ID, "Audit log of "+ns.Name, nsPath(ns.ID)+"/audit"
	}
	v := &view{Title: title, Session: s, NS: ns, Data: &d}
	var bad error
	switch {
	case d.Action != "" && !auditActionPattern.MatchString(d.Action):
		bad = occ.Invalid("An action is lower-case words joined by dots, such as agents.deploy.", occ.Detail{Path: "/action", Code: occ.DetailInvalidFmt})
	case d.Outcome != "" && !slices.Contains(occ.AuditOutcomes, occ.AuditOutcome(d.Outcome)):
		bad = occ.Invalid("The outcome is success, denied, failure or pending.", occ.Detail{Path: "/outcome", Code: occ.DetailInvalidValue})
	case d.Resource != "" && !auditIDPattern.MatchString(d.Resource):
		bad = occ.Invalid("A resource ID is letters, digits, '_' and '-'.", occ.Detail{Path: "/resource", Code: occ.DetailInvalidFmt})
	}
	if bad != nil {
		c.render(w, r, c.formError(r, v, bad), "audit", v)
		return
	}
	p, err := c.app.ListAuditEvents(r.Context(), s.caller, scope, app.AuditQuery{Action: d.Action, Outcome: d.Outcome, ResourceID: d.Resource},
		app.PageRequest{Size: pageSize, Token: q.Get("page")})
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	d.Events, d.Next = p.Items, p.Next
	c.render(w, r, http.StatusOK, "audit", v)
}
