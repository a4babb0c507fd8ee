package console

import (
	"errors"
	"net/http"
	"strings"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
)

// harnessMethods are the harness authentication choices with the labels
// people see (seed: the codex_pat source is labelled Service Accounts).
var harnessMethods = []choice{
	{Value: occ.HarnessAPIKey, Label: "API key (a Secret)"},
	{Value: occ.HarnessCodexPAT, Label: "Service Accounts (a service account token in a Secret)"},
	{Value: occ.HarnessChatGPTServiceAccount, Label: "ChatGPT service account"},
	{Value: occ.HarnessCredentialSource, Label: "Credential Source"},
	{Value: occ.HarnessRuntime, Label: "Runtime (the SSH host's environment file)"},
}

type choice struct{ Value, Label string }

// agentForm is the Create Agent form, as sent (kept when refused).
type agentForm struct {
	Name, PresetID string
	Launch         launchForm
	DefaultsID     string // the identity of the defaults the files started from
	Files          []initialFile
}

type initialFile struct {
	Name    string
	Set     bool
	Content string
}

type newAgentData struct {
	Form       agentForm
	Launch     launchChoices
	Presets    []occ.Preset
	Create     action
	NoDefaults bool // the runtime's defaults are not available here
}

func (c *Console) newAgent(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	f := agentForm{Launch: launchForm{ConfigurationID: r.URL.Query().Get("configuration")}, PresetID: r.URL.Query().Get("preset")}
	defaults, id, err := c.workspaceDefaults()
	if err == nil {
		f.DefaultsID = id
	}
	for _, n := range occ.WorkspaceFileNames {
		f.Files = append(f.Files, initialFile{Name: n, Set: err == nil, Content: defaults[n]})
	}
	c.renderNewAgent(w, r, s, ns, http.StatusOK, &view{}, f)
}

// renderNewAgent fills the pickers with what the caller may read.
func (c *Console) renderNewAgent(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace, status int, v *view, f agentForm) {
	d := newAgentData{Form: f, NoDefaults: f.DefaultsID == "", Launch: c.choices(r, s, ns, f.Launch, "From the Preset, or the default"),
		Create: c.can(r, s, occ.KindAgent, occ.ActionCreate, collection(occ.KindAgent, ns), "create Agents here")}
	d.Launch.ConfigRequired = true
	if p, err := c.app.ListPresets(r.Context(), s.caller, ns.ID, app.PageRequest{Size: app.MaxPageSize}); err == nil {
		d.Presets = p.Items
	}
	v.Title, v.Session, v.NS, v.Data = "Create Agent", s, ns, d
	c.render(w, r, status, "newagent", v)
}

// collection is a Namespace's collection of a kind, as create permissions
// are checked on it.
func collection(kind occ.Kind, ns *occ.Namespace) occ.ResourceRef {
	return occ.ResourceRef{Kind: kind, ID: ns.ID, NamespaceID: ns.ID}
}

// createAgent creates the Agent through the same use case as the API.
func (c *Console) createAgent(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	pf := r.PostForm
	f := agentForm{Name: pf.Get("name"), PresetID: pf.Get("presetId"), Launch: readLaunchForm(pf), DefaultsID: pf.Get("workspaceDefaultsId")}
	l := f.Launch
	in := app.AgentInput{Name: f.Name, ConfigurationID: l.ConfigurationID, PresetID: f.PresetID, ExecutionMode: l.ExecutionMode,
		WorkspaceDefaultsID: f.DefaultsID}
	if l.BackendID != "" {
		in.BackendID = app.Optional[string]{Set: true, Value: l.BackendID}
	}
	if h := l.harness(ns.ID); h != nil {
		in.HarnessAuth = app.Optional[*occ.HarnessAuth]{Set: true, Value: h}
	}
	for _, n := range occ.WorkspaceFileNames {
		file := initialFile{Name: n, Set: pf.Get("set-"+n) != "", Content: formText(pf.Get("file-" + n))}
		f.Files = append(f.Files, file)
		if file.Set {
			if in.InitialWorkspaceFiles == nil {
				in.InitialWorkspaceFiles = map[string]string{}
			}
			in.InitialWorkspaceFiles[n] = file.Content
		}
	}
	plugins, err := l.plugins()
	if err == nil && strings.TrimSpace(l.Plugins) != "" {
		in.Plugins = plugins // blank: the Preset's, or none
	}
	var g occ.Agent
	if err == nil {
		g, err = c.app.CreateAgent(r.Context(), s.caller, ns.ID, in)
	}
	if err != nil {
		v := &view{}
		status := c.formError(r, v, err)
		if f.DefaultsID != "" && v.ErrorCode == string(occ.CodeResourceConflict) {
			v.Notice = msgStaleDefaults
		}
		c.renderNewAgent(w, r, s, ns, status, v, f)
		return
	}
	http.Redirect(w, r, agentPath(ns.ID, g.ID)+"?notice=created", http.StatusSeeOther)
}

// formText undoes the CRLF line breaks browsers send for a textarea.
func formText(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// msgStaleDefaults explains a 409 for a form whose default files are not
// the runtime's any more (an upgrade since the page was opened).
const msgStaleDefaults = "The default workspace files on this form are not the runtime's current ones (occ was upgraded since the page was opened). " +
	"Your text is kept below: open Create Agent again for the current defaults and apply your changes to them."

// workspaceDefaults are the runtime's default files, when this occ has them.
func (c *Console) workspaceDefaults() (map[string]string, string, error) {
	if c.opts.WorkspaceDefaults == nil {
		return nil, "", errNoDefaults
	}
	return c.opts.WorkspaceDefaults()
}

var errNoDefaults = errors.New("no workspace defaults")
