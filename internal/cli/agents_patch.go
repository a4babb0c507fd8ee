package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
	"github.com/openclaw/occ/internal/client/gen"
)

// none is the value that clears an optional Agent setting.
const none = "none"

// agentsPatchOptions are the inputs of `occ agents patch`; an empty field
// keeps the saved value.
type agentsPatchOptions struct {
	API *apiOptions
	// Agent is an Agent ID or name.
	Agent string
	// Configuration is a Configuration ID or name.
	Configuration string
	// ExecutionMode is embedded or dedicated.
	ExecutionMode string
	// Backend is a Backend ID, or none.
	Backend string
	// HarnessAuth is none, runtime or METHOD:REF (see agentsPatchCmd).
	HarnessAuth string
	// SecretAPIKey is short for HarnessAuth api_key:SECRET.
	SecretAPIKey string
	// Plugins are NAME@CATALOG[=POLICY] selections replacing the saved
	// ones, or the single value none.
	Plugins []string
}

func agentsPatchCmd(api *apiOptions) *cobra.Command {
	opts := &agentsPatchOptions{API: api}
	cmd := verbCmd(api, "patch AGENT [flags]", "Change an Agent's saved draft (deploy it to run the change)",
		func(ctx context.Context) error { return runAgentsPatch(ctx, opts) }, &opts.Agent)
	cmd.Aliases = []string{"update"}
	cmd.Long = `Change an Agent's saved draft; the running revision is untouched until the
next ` + "`occ agents deploy`" + `. Flags not given keep their saved values; the
Agent is read first and the change is sent with its ETag (If-Match), so a
concurrent change fails with PRECONDITION_FAILED instead of being lost.

--harness-auth is none (clear), runtime, api_key:SECRET, codex_pat:SECRET,
chatgpt_service_account:SERVICE_ACCOUNT or credential_source:SOURCE (IDs or
names). --plugin NAME@CATALOG[=POLICY] (repeat it) replaces the plugin
selections, POLICY being provider_default, all_actions, write_actions or
none; --plugin none clears them.`
	f := cmd.Flags()
	f.StringVar(&opts.Configuration, "configuration", "", "the Configuration (ID or name)")
	f.StringVar(&opts.ExecutionMode, "execution-mode", "", "embedded or dedicated")
	f.StringVar(&opts.Backend, "backend", "", "a Backend ID, or none")
	f.StringVar(&opts.HarnessAuth, "harness-auth", "", "how the Agent gets model credentials: METHOD:REF, runtime or none")
	f.StringVar(&opts.SecretAPIKey, "secret-api-key", "", "a Secret (ID or name) holding the model API key (same as --harness-auth api_key:SECRET)")
	f.StringArrayVar(&opts.Plugins, "plugin", nil, "a plugin selection NAME@CATALOG[=POLICY] (repeat; replaces all), or none")
	cmd.MarkFlagsMutuallyExclusive("harness-auth", "secret-api-key")
	return cmd
}

func runAgentsPatch(ctx context.Context, opts *agentsPatchOptions) error {
	if opts.Configuration == "" && opts.ExecutionMode == "" && opts.Backend == "" && opts.HarnessAuth == "" &&
		opts.SecretAPIKey == "" && len(opts.Plugins) == 0 {
		return errors.New("nothing to change: give --configuration, --execution-mode, --backend, --harness-auth, --secret-api-key or --plugin")
	}
	var body client.AgentPatch
	if opts.ExecutionMode != "" {
		mode := gen.ExecutionMode(opts.ExecutionMode)
		if !mode.Valid() {
			return fmt.Errorf("--execution-mode must be embedded or dedicated, not %q", opts.ExecutionMode)
		}
		body.ExecutionMode = &mode
	}
	switch opts.Backend {
	case "":
	case none:
		body.BackendId.SetNull()
	default:
		body.BackendId.Set(opts.Backend)
	}
	if len(opts.Plugins) > 0 {
		plugins, err := parsePlugins(opts.Plugins)
		if err != nil {
			return err
		}
		body.Plugins = &plugins
	}
	c, ns, id, err := opts.API.target(ctx, opts.Agent, resolveAgent)
	if err != nil {
		return err
	}
	auth := opts.HarnessAuth
	if opts.SecretAPIKey != "" {
		auth = string(gen.HarnessAuthMethodApiKey) + ":" + opts.SecretAPIKey
	}
	if auth != "" {
		if err := setHarnessAuth(ctx, c, ns, auth, &body); err != nil {
			return err
		}
	}
	// The PATCH names the Configuration every time: the current one unless
	// --configuration changes it.
	cur, err := c.GetAgent(ctx, ns, id)
	if err != nil {
		return err
	}
	body.ConfigurationId = cur.ConfigurationId
	if opts.Configuration != "" {
		if body.ConfigurationId, err = resolveConfiguration(ctx, c, ns, opts.Configuration); err != nil {
			return err
		}
	}
	a, err := c.PatchAgent(ctx, ns, id, body, cur.Etag)
	if err != nil {
		return err
	}
	return printAgent(opts.API, a)
}

// setHarnessAuth sets body's harness binding from --harness-auth: none
// clears it, runtime names nothing, METHOD:REF names a Secret, Service
// Account or Credential Source by ID or name.
func setHarnessAuth(ctx context.Context, c *client.Client, ns, v string, body *client.AgentPatch) error {
	if v == none {
		body.HarnessAuth.SetNull()
		return nil
	}
	method, ref, _ := strings.Cut(v, ":")
	m := gen.HarnessAuthMethod(method)
	if !m.Valid() || (m == gen.HarnessAuthMethodRuntime) != (ref == "") {
		return fmt.Errorf("--harness-auth must be none, runtime, api_key:SECRET, codex_pat:SECRET, "+
			"chatgpt_service_account:SERVICE_ACCOUNT or credential_source:SOURCE, not %q", v)
	}
	h := client.HarnessAuth{Method: m}
	switch m {
	case gen.HarnessAuthMethodApiKey, gen.HarnessAuthMethodCodexPat:
		id, err := resolveSecret(ctx, c, ns, ref)
		if err != nil {
			return err
		}
		h = client.APIKeyAuth(id)
		h.Method = m
	case gen.HarnessAuthMethodChatgptServiceAccount:
		id, err := serviceAccounts.resolve(ctx, c, ns, ref)
		if err != nil {
			return err
		}
		h.ServiceAccountId = &id
	case gen.HarnessAuthMethodCredentialSource:
		id, err := credentialSources.resolve(ctx, c, ns, ref)
		if err != nil {
			return err
		}
		h.SourceId = &id
	}
	body.HarnessAuth.Set(h)
	return nil
}

// parsePlugins turns --plugin values into plugin selections; the single
// value none is the empty selection, which clears them.
func parsePlugins(values []string) (gen.PluginSelections, error) {
	out := gen.PluginSelections{}
	if len(values) == 1 && values[0] == none {
		return out, nil
	}
	for _, v := range values {
		name, policy, hasPolicy := strings.Cut(v, "=")
		if at := strings.Index(name, "@"); at <= 0 || at == len(name)-1 {
			return nil, fmt.Errorf("--plugin must be NAME@CATALOG[=POLICY] or none, not %q", v)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("--plugin %s is given twice", name)
		}
		sel := out[name]
		if hasPolicy {
			p := gen.PluginSelectionsApprovalPolicy(policy)
			if !p.Valid() {
				return nil, fmt.Errorf("--plugin %s: the policy must be provider_default, all_actions, write_actions or none, not %q", name, policy)
			}
			sel.ApprovalPolicy = &p
		}
		out[name] = sel
	}
	return out, nil
}
