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
	Name, ConfigurationID, PresetID, ExecutionMode, BackendID string
	HarnessMethod, SecretID, ServiceAccountID, SourceID       string
	DefaultsID                                                string // the identity of the defaults the files started from
	Files                                                     []initialFile
}

type initialFile struct {
	Name    string
	Set     bool
	Content string
}

type newAgentData struct {
	Form            agentForm
	Configurations  []occ.Configuration
	Presets         []occ.Preset
	Secrets         []occ.Secret
	ServiceAccounts []occ.ServiceAccount
	Sources         []occ.CredentialSource
	Backends        []app.Backend
	Methods         []choice
	Create          action
	NoDefaults      bool // the runtime's defaults are not available here
}

func (c *Console) newAgent(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	f := agentForm{ConfigurationID: r.URL.Query().Get("configuration")}
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
	ctx, all := r.Context(), app.PageRequest{Size: app.MaxPageSize}
	d := newAgentData{Form: f, Methods: harnessMethods, NoDefaults: f.DefaultsID == "",
		Create: c.can(r, s, occ.KindAgent, occ.ActionCreate, occ.ResourceRef{Kind: occ.KindAgent, ID: ns.ID, NamespaceID: ns.ID}, "create Agents here")}
	if p, err := c.app.ListConfigurations(ctx, s.caller, ns.ID, all); err == nil {
		d.Configurations = p.Items
	}
	if p, err := c.app.ListPresets(ctx, s.caller, ns.ID, all); err == nil {
		d.Presets = p.Items
	}
	if p, err := c.app.ListSecrets(ctx, s.caller, ns.ID, all); err == nil {
		d.Secrets = p.Items
	}
	if p, err := c.app.ListServiceAccounts(ctx, s.caller, ns.ID, all); err == nil {
		d.ServiceAccounts = p.Items
	}
	if p, err := c.app.ListCredentialSources(ctx, s.caller, ns.ID, all); err == nil {
		d.Sources = p.Items
	}
	if p, err := c.app.ListBackends(ctx, s.caller, all); err == nil {
		d.Backends = p.Items
	}
	v.Title, v.Session, v.NS, v.Data = "Create Agent", s, ns, d
	c.render(w, r, status, "newagent", v)
}

// createAgent creates the Agent through the same use case as the API.
func (c *Console) createAgent(w http.ResponseWriter, r *http.Request, s *session, ns *occ.Namespace) {
	pf := r.PostForm
	f := agentForm{Name: pf.Get("name"), ConfigurationID: pf.Get("configurationId"), PresetID: pf.Get("presetId"),
		ExecutionMode: pf.Get("executionMode"), BackendID: pf.Get("backendId"), HarnessMethod: pf.Get("harnessMethod"),
		SecretID: pf.Get("secretId"), ServiceAccountID: pf.Get("serviceAccountId"), SourceID: pf.Get("sourceId"),
		DefaultsID: pf.Get("workspaceDefaultsId")}
	in := app.AgentInput{Name: f.Name, ConfigurationID: f.ConfigurationID, PresetID: f.PresetID, ExecutionMode: f.ExecutionMode,
		WorkspaceDefaultsID: f.DefaultsID}
	if f.BackendID != "" {
		in.BackendID = app.Optional[string]{Set: true, Value: f.BackendID}
	}
	if f.HarnessMethod != "" {
		h := &occ.HarnessAuth{Method: f.HarnessMethod}
		switch f.HarnessMethod {
		case occ.HarnessAPIKey, occ.HarnessCodexPAT:
			h.Source = &occ.SecretRef{Kind: "secret", NamespaceID: ns.ID, ID: f.SecretID}
		case occ.HarnessChatGPTServiceAccount:
			h.ServiceAccountID = f.ServiceAccountID
		case occ.HarnessCredentialSource:
			h.SourceID = f.SourceID
		}
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
	g, err := c.app.CreateAgent(r.Context(), s.caller, ns.ID, in)
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
