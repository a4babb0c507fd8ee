package console

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/occ"
)

// launchForm is the launch settings part of a form (Create Agent, an
// Agent's settings, a new Preset), as sent; a refused form shows it back.
type launchForm struct {
	ConfigurationID, ExecutionMode, BackendID           string
	HarnessMethod, SecretID, ServiceAccountID, SourceID string
	// Plugins is one "name@catalog [approvalPolicy]" a line.
	Plugins string
}

func readLaunchForm(pf url.Values) launchForm {
	return launchForm{ConfigurationID: pf.Get("configurationId"), ExecutionMode: pf.Get("executionMode"), BackendID: pf.Get("backendId"),
		HarnessMethod: pf.Get("harnessMethod"), SecretID: pf.Get("secretId"), ServiceAccountID: pf.Get("serviceAccountId"),
		SourceID: pf.Get("sourceId"), Plugins: formText(pf.Get("plugins"))}
}

// launchFormOf is the form showing saved settings.
func launchFormOf(configurationID string, s occ.AgentSettings) launchForm {
	f := launchForm{ConfigurationID: configurationID, ExecutionMode: s.ExecutionMode, BackendID: s.BackendID}
	if h := s.HarnessAuth; h != nil {
		f.HarnessMethod, f.ServiceAccountID, f.SourceID = h.Method, h.ServiceAccountID, h.SourceID
		if h.Source != nil {
			f.SecretID = h.Source.ID
		}
	}
	var lines []string
	for _, id := range slices.Sorted(maps.Keys(s.Plugins)) {
		lines = append(lines, strings.TrimSpace(id+" "+s.Plugins[id].ApprovalPolicy))
	}
	f.Plugins = strings.Join(lines, "\n")
	return f
}

// harness is the binding the form names (nil: no method chosen). Only the
// reference the method takes is sent; the use case checks it.
func (f launchForm) harness(nsID string) *occ.HarnessAuth {
	if f.HarnessMethod == "" {
		return nil
	}
	h := &occ.HarnessAuth{Method: f.HarnessMethod}
	switch f.HarnessMethod {
	case occ.HarnessAPIKey, occ.HarnessCodexPAT:
		h.Source = &occ.SecretRef{Kind: "secret", NamespaceID: nsID, ID: f.SecretID}
	case occ.HarnessChatGPTServiceAccount:
		h.ServiceAccountID = f.ServiceAccountID
	case occ.HarnessCredentialSource:
		h.SourceID = f.SourceID
	}
	return h
}

// plugins is the plugin lines as a selection map; a line of more than an
// ID and a policy is refused at /plugins (the use case checks the rest).
func (f launchForm) plugins() (map[string]occ.PluginSelection, error) {
	out := map[string]occ.PluginSelection{}
	for line := range strings.SplitSeq(f.Plugins, "\n") {
		fields := strings.Fields(line)
		switch len(fields) {
		case 0:
		case 1, 2:
			sel := occ.PluginSelection{}
			if len(fields) == 2 {
				sel.ApprovalPolicy = fields[1]
			}
			out[fields[0]] = sel
		default:
			return nil, occ.Invalid(msgPluginLine, occ.Detail{Path: "/plugins", Code: occ.DetailInvalidFmt})
		}
	}
	return out, nil
}

const msgPluginLine = "Each plugin line is a name@catalog ID, optionally followed by an approval policy."

// launchChoices are what the launch settings fields offer: only what the
// caller may read.
type launchChoices struct {
	Form            launchForm
	Configurations  []occ.Configuration
	Secrets         []occ.Secret
	ServiceAccounts []occ.ServiceAccount
	Sources         []occ.CredentialSource
	Backends        []app.Backend
	Methods         []choice
	// Inherit is what an empty choice means ("From the Preset, or none").
	Inherit        string
	ConfigRequired bool
}

// choices fills the pickers of the launch settings fields.
func (c *Console) choices(r *http.Request, s *session, ns *occ.Namespace, f launchForm, inherit string) launchChoices {
	ctx, all := r.Context(), app.PageRequest{Size: app.MaxPageSize}
	d := launchChoices{Form: f, Methods: harnessMethods, Inherit: inherit}
	if p, err := c.app.ListConfigurations(ctx, s.caller, ns.ID, all); err == nil {
		d.Configurations = p.Items
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
	return d
}
