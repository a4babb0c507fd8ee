package console

import (
	"net/http"
	"slices"

	"github.com/openclaw/occ/internal/occ"
)

type fileData struct {
	Agent   occ.Agent
	Name    string
	Content string
	Loaded  bool // the live file was read
	Write   action
	Unknown bool // the last write's outcome is unknown
}

// filePage reads one of the four workspace files from the live workspace.
func (c *Console) filePage(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	c.renderFile(w, r, s, ns, http.StatusOK, &view{}, nil)
}

// renderFile shows the editor; kept is the person's text to keep after a
// refused write (nil: show the live file).
func (c *Console) renderFile(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace, status int, v *view, kept *string) {
	ctx := r.Context()
	name := r.PathValue("name")
	if !slices.Contains(occ.WorkspaceFileNames, name) {
		c.fail(w, r, s, occ.ErrNotFound)
		return
	}
	g, err := c.app.GetAgent(ctx, s.caller, ns.ID, r.PathValue("agent"))
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	d := fileData{Agent: g, Name: name, Write: c.can(r, s, occ.KindAgent, occ.ActionOperate, g.Ref(), "edit this Agent's workspace files"),
		Unknown: v.ErrorCode == string(occ.CodeUnknownOutcome)}
	if kept != nil {
		d.Content, d.Loaded = *kept, true
	} else if f, err := c.app.ReadWorkspaceFile(ctx, s.caller, ns.ID, g.ID, name); isCode(err, occ.CodeNotFound) {
		// The Agent was just read: what is missing is the file.
		d.Loaded, v.Notice = true, "This file does not exist yet in the live workspace: saving creates it."
	} else if err != nil {
		status = c.formError(r, v, err)
	} else {
		d.Content, d.Loaded = f.Content, true
	}
	v.Title, v.Session, v.NS, v.Data = name+" of "+g.Name, s, ns, d
	c.render(w, r, status, "file", v)
}

// writeFile writes the file to the live workspace.
func (c *Console) writeFile(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	content := formText(r.PostForm.Get("content"))
	name := r.PathValue("name")
	if _, err := c.app.WriteWorkspaceFile(r.Context(), s.caller, ns.ID, r.PathValue("agent"), name, content); err != nil {
		v := &view{}
		c.renderFile(w, r, s, ns, c.formError(r, v, err), v, &content)
		return
	}
	http.Redirect(w, r, agentPath(ns.ID, r.PathValue("agent"))+"/files/"+name+"?notice=saved", http.StatusSeeOther)
}

// isCode reports whether err is an occ error with this code.
func isCode(err error, code occ.Code) bool {
	oe := occ.AsError(err)
	return oe != nil && oe.Code == code
}
