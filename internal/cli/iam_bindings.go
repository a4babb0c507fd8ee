package cli

import (
	"context"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
)

// iamBindingsListOptions are the inputs of `occ iam bindings list`.
type iamBindingsListOptions struct {
	API          *apiOptions
	Installation bool
	// Principal, when set, keeps the bindings of that principal (an ID or
	// agent:AGENT).
	Principal string
}

func iamBindingsListCmd(api *apiOptions) *cobra.Command {
	opts := &iamBindingsListOptions{API: api}
	cmd := verbCmd(api, "list", "List the bindings of the Namespace (or the installation)",
		func(ctx context.Context) error { return runIAMBindingsList(ctx, opts) })
	cmd.Flags().StringVar(&opts.Principal, "principal", "", "only this principal's bindings (an ID, or agent:AGENT)")
	addScopeFlag(cmd, &opts.Installation)
	return cmd
}

func runIAMBindingsList(ctx context.Context, opts *iamBindingsListOptions) error {
	c, ns, err := iamScope(ctx, opts.API, opts.Installation)
	if err != nil {
		return err
	}
	principal := ""
	if opts.Principal != "" {
		if principal, err = resolvePrincipal(ctx, c, ns, opts.Principal); err != nil {
			return err
		}
	}
	all, err := c.ListAllBindings(ctx, ns)
	if err != nil {
		return err
	}
	var items []client.Binding
	for _, b := range all {
		if principal == "" || b.PrincipalId == principal {
			items = append(items, b)
		}
	}
	return printList(opts.API, items, []string{"ID", "PRINCIPAL", "ROLE", "TARGET", "CREATED"}, func(b *client.Binding) []string {
		return []string{b.Id, b.PrincipalId, b.RoleId, dash(targetText(b)), b.CreatedAt}
	})
}

// iamBindingsCreateOptions are the inputs of `occ iam bindings create`.
type iamBindingsCreateOptions struct {
	API          *apiOptions
	Installation bool
	// Principal is a principal ID, or agent:AGENT for an Agent's service
	// principal.
	Principal string
	// Role is a role ID or name.
	Role string
	// Target, when set, is KIND/ID (or KIND/NAME): the one resource the
	// binding holds for.
	Target string
}

func iamBindingsCreateCmd(api *apiOptions) *cobra.Command {
	opts := &iamBindingsCreateOptions{API: api}
	cmd := verbCmd(api, "create --principal PRINCIPAL --role ROLE [--target KIND/ID]",
		"Grant a role to a principal in the Namespace (or the installation), or on one resource",
		func(ctx context.Context) error { return runIAMBindingsCreate(ctx, opts) })
	cmd.Long = `Grant a role to a principal. Without --target the binding holds for the whole
Namespace (or, with --installation, the installation); with --target
KIND/ID it holds for that one resource of the Namespace (KIND is namespace,
configuration, preset, service_account, secret, agent, agent_revision or
credential_source; secrets, configurations, agents and namespaces may be
named). A role bound to one resource must hold permissions of its kind.

--principal is a principal ID (prn_… or spn_…), or agent:AGENT for the
service principal of an Agent (ID or name) of the Namespace. --role is a
role ID or name; in a Namespace a name is looked up among the Namespace's
roles, then the installation's (the built-in admin, editor, operator and
viewer). A binding that already grants the same role to the same
principal on the same target is refused.`
	cmd.Flags().StringVar(&opts.Principal, "principal", "", "a principal ID, or agent:AGENT (the Agent's service principal)")
	cmd.Flags().StringVar(&opts.Role, "role", "", "the role (ID or name)")
	cmd.Flags().StringVar(&opts.Target, "target", "", "the one resource the binding holds for, KIND/ID")
	addScopeFlag(cmd, &opts.Installation)
	_ = cmd.MarkFlagRequired("principal")
	_ = cmd.MarkFlagRequired("role")
	return cmd
}

func runIAMBindingsCreate(ctx context.Context, opts *iamBindingsCreateOptions) error {
	c, ns, err := iamScope(ctx, opts.API, opts.Installation)
	if err != nil {
		return err
	}
	body := client.BindingCreate{}
	if body.PrincipalId, err = resolvePrincipal(ctx, c, ns, opts.Principal); err != nil {
		return err
	}
	if body.RoleId, err = resolveGrantableRole(ctx, c, ns, opts.Role); err != nil {
		return err
	}
	if opts.Target != "" {
		if body.Target, err = resolveTarget(ctx, c, ns, opts.Target); err != nil {
			return err
		}
	}
	existing, err := findBinding(ctx, c, ns, body.PrincipalId, body.RoleId, body.Target)
	if err != nil {
		return err
	}
	if existing != nil {
		return &client.APIError{Status: http.StatusConflict, Code: client.CodeResourceConflict,
			Message: fmt.Sprintf("Binding %s already grants role %s to %s%s.", existing.Id, body.RoleId, body.PrincipalId, onText(existing))}
	}
	b, err := c.CreateBinding(ctx, ns, body)
	if err != nil {
		return err
	}
	return printBinding(opts.API, b)
}

// onText is " on KIND/ID" for a binding with a target, else "".
func onText(b *client.Binding) string {
	if t := targetText(b); t != "" {
		return " on " + t
	}
	return ""
}

// iamBindingsDeleteOptions are the inputs of `occ iam bindings delete`.
type iamBindingsDeleteOptions struct {
	API          *apiOptions
	Installation bool
	// Binding is a binding ID.
	Binding string
}

func iamBindingsDeleteCmd(api *apiOptions) *cobra.Command {
	opts := &iamBindingsDeleteOptions{API: api}
	cmd := verbCmd(api, "delete BINDING", "Remove a binding (by ID) of the Namespace (or the installation)",
		func(ctx context.Context) error { return runIAMBindingsDelete(ctx, opts) }, &opts.Binding)
	addScopeFlag(cmd, &opts.Installation)
	return cmd
}

func runIAMBindingsDelete(ctx context.Context, opts *iamBindingsDeleteOptions) error {
	c, ns, err := iamScope(ctx, opts.API, opts.Installation)
	if err != nil {
		return err
	}
	if err := c.DeleteBinding(ctx, ns, opts.Binding); err != nil {
		return err
	}
	return printGone(opts.API, "binding", opts.Binding)
}
