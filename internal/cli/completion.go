package cli

// Shell completion: cobra's scripts for bash, zsh, fish and PowerShell,
// and the names of resources for positional arguments and -n, which
// completion asks the server for with the current settings (flags,
// variables, context). A failure completes nothing and prints nothing.

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
)

// completionTimeout bounds a completion's calls: a shell waits for it.
const completionTimeout = 5 * time.Second

// completeNames completes the first positional argument with the names of
// the Namespace's resources list returns.
func completeNames[T any](api *apiOptions, list func(c *client.Client, ctx context.Context, ns string) ([]T, error), nameID func(*T) (string, string)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeWith(cmd, api, func(ctx context.Context) ([]string, error) {
			c, ns, err := api.namespaced(ctx)
			if err != nil {
				return nil, err
			}
			items, err := list(c, ctx, ns)
			if err != nil {
				return nil, err
			}
			names := make([]string, 0, len(items))
			for i := range items {
				name, _ := nameID(&items[i])
				names = append(names, name)
			}
			return names, nil
		})
	}
}

// completeWith runs names with the command's settings, bounded; any
// failure completes nothing.
func completeWith(cmd *cobra.Command, api *apiOptions, names func(context.Context) ([]string, error)) ([]cobra.Completion, cobra.ShellCompDirective) {
	if err := api.bind(cmd); err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	out, err := names(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeNamespaces completes -n with the Namespaces' names.
func completeNamespaces(api *apiOptions) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeWith(cmd, api, func(ctx context.Context) ([]string, error) {
			c, err := api.client()
			if err != nil {
				return nil, err
			}
			all, err := c.ListAllNamespaces(ctx)
			if err != nil {
				return nil, err
			}
			names := make([]string, 0, len(all))
			for _, n := range all {
				names = append(names, n.Name)
			}
			return names, nil
		})
	}
}

// completeContexts completes a context's name from the client config.
func completeContexts(getenv func(string) string) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cfg, err := loadClientConfig(clientConfigPath(getenv))
		if err != nil || len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		for _, c := range cfg.Contexts {
			names = append(names, c.Name)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// argCompletions complete a command's first argument by its placeholder
// in Use ("get AGENT"), for the commands that set none themselves.
func argCompletions(api *apiOptions) map[string]cobra.CompletionFunc {
	return map[string]cobra.CompletionFunc{
		"AGENT":         completeAgents(api),
		"CONFIGURATION": completeNames(api, configurations.list, configurations.nameID),
		"SECRET":        completeNames(api, secrets.list, secrets.nameID),
		"NAMESPACE":     completeNamespaces(api),
		"ROLE": completeNames(api, func(c *client.Client, ctx context.Context, ns string) ([]client.Role, error) {
			return c.ListAllRoles(ctx, ns)
		},
			func(r *client.Role) (string, string) { return r.Name, r.Id }),
	}
}

// addCompletions adds completion to cmd and its subcommands: -n with
// Namespace names, --context with the saved contexts, and the first
// argument by its placeholder.
func addCompletions(cmd *cobra.Command, api *apiOptions) {
	_ = cmd.RegisterFlagCompletionFunc("namespace", completeNamespaces(api))
	_ = cmd.RegisterFlagCompletionFunc("context", completeContexts(api.getenv))
	byArg := argCompletions(api)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.ValidArgsFunction == nil {
			if words := strings.Fields(c.Use); len(words) > 1 {
				if f, ok := byArg[words[1]]; ok {
					c.ValidArgsFunction = f
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cmd)
}

// completionCmd is `occ completion bash|zsh|fish|powershell`.
func completionCmd(root *cobra.Command, out io.Writer) *cobra.Command {
	shell := func(name, example string, gen func(io.Writer) error) *cobra.Command {
		return &cobra.Command{
			Use: name, Short: "The completion script for " + name, Args: cobra.NoArgs, Example: example,
			RunE: func(*cobra.Command, []string) error { return gen(out) },
		}
	}
	return groupCmd("completion", "Shell completion of commands, flags and resource names (asks the server with your current context)",
		shell("bash", "  source <(occ completion bash)\n  occ completion bash > ~/.local/share/bash-completion/completions/occ",
			func(w io.Writer) error { return root.GenBashCompletionV2(w, true) }),
		shell("zsh", "  occ completion zsh > \"${fpath[1]}/_occ\"",
			func(w io.Writer) error { return root.GenZshCompletion(w) }),
		shell("fish", "  occ completion fish > ~/.config/fish/completions/occ.fish",
			func(w io.Writer) error { return root.GenFishCompletion(w, true) }),
		shell("powershell", "  occ completion powershell | Out-String | Invoke-Expression",
			func(w io.Writer) error { return root.GenPowerShellCompletionWithDesc(w) }))
}
