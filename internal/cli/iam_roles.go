package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
)

// iamRolesListOptions are the inputs of `occ iam roles list`.
type iamRolesListOptions struct {
	API          *apiOptions
	Installation bool
}

func iamRolesListCmd(api *apiOptions) *cobra.Command {
	opts := &iamRolesListOptions{API: api}
	cmd := verbCmd(api, "list", "List the roles of the Namespace (or the installation's, built-in ones included)",
		func(ctx context.Context) error { return runIAMRolesList(ctx, opts) })
	addScopeFlag(cmd, &opts.Installation)
	return cmd
}

func runIAMRolesList(ctx context.Context, opts *iamRolesListOptions) error {
	c, ns, err := iamScope(ctx, opts.API, opts.Installation)
	if err != nil {
		return err
	}
	roles, err := c.ListAllRoles(ctx, ns)
	if err != nil {
		return err
	}
	return printList(opts.API, roles, []string{"ID", "NAME", "BUILTIN", "PERMISSIONS", "CREATED"}, func(r *client.Role) []string {
		builtin := "no"
		if r.Builtin {
			builtin = "yes"
		}
		return []string{r.Id, r.Name, builtin, permissionsText(r.Permissions, false), r.CreatedAt}
	})
}

// iamRolesCreateOptions are the inputs of `occ iam roles create`.
type iamRolesCreateOptions struct {
	API          *apiOptions
	Installation bool
	Name         string
	// Permissions are kind:action names (secret:operate, agent:deploy…).
	Permissions []string
}

func iamRolesCreateCmd(api *apiOptions) *cobra.Command {
	opts := &iamRolesCreateOptions{API: api}
	cmd := verbCmd(api, "create --name NAME --permission KIND:ACTION…", "Create a role in the Namespace (or the installation)",
		func(ctx context.Context) error { return runIAMRolesCreate(ctx, opts) })
	cmd.Long = `Create a custom role: a name and 1-64 permissions KIND:ACTION, e.g.
secret:operate, agent:deploy, configuration:read. A Namespace role holds no
installation permission; you must hold every permission you put in a role.`
	cmd.Flags().StringVar(&opts.Name, "name", "", "the role's name (unique in its scope)")
	cmd.Flags().StringArrayVar(&opts.Permissions, "permission", nil, "a permission KIND:ACTION (repeat for more)")
	addScopeFlag(cmd, &opts.Installation)
	_ = cmd.MarkFlagRequired("name")
	_ = cmd.MarkFlagRequired("permission")
	return cmd
}

func runIAMRolesCreate(ctx context.Context, opts *iamRolesCreateOptions) error {
	c, ns, err := iamScope(ctx, opts.API, opts.Installation)
	if err != nil {
		return err
	}
	r, err := c.CreateRole(ctx, ns, client.RoleCreate{Name: opts.Name, Permissions: opts.Permissions})
	if err != nil {
		return err
	}
	return printRole(opts.API, r)
}

// iamRolesGetOptions are the inputs of `occ iam roles get`.
type iamRolesGetOptions struct {
	API          *apiOptions
	Installation bool
	// Role is a role ID or name.
	Role string
}

func iamRolesGetCmd(api *apiOptions) *cobra.Command {
	opts := &iamRolesGetOptions{API: api}
	cmd := verbCmd(api, "get ROLE", "Show a role (by ID or name) and all its permissions",
		func(ctx context.Context) error { return runIAMRolesGet(ctx, opts) }, &opts.Role)
	addScopeFlag(cmd, &opts.Installation)
	return cmd
}

func runIAMRolesGet(ctx context.Context, opts *iamRolesGetOptions) error {
	c, ns, id, err := iamRole(ctx, opts.API, opts.Installation, opts.Role)
	if err != nil {
		return err
	}
	r, err := c.GetRole(ctx, ns, id)
	if err != nil {
		return err
	}
	return printRole(opts.API, r)
}

// iamRolesDeleteOptions are the inputs of `occ iam roles delete`.
type iamRolesDeleteOptions struct {
	API          *apiOptions
	Installation bool
	// Role is a role ID or name.
	Role string
}

func iamRolesDeleteCmd(api *apiOptions) *cobra.Command {
	opts := &iamRolesDeleteOptions{API: api}
	cmd := verbCmd(api, "delete ROLE", "Delete a custom role (by ID or name) that no binding uses",
		func(ctx context.Context) error { return runIAMRolesDelete(ctx, opts) }, &opts.Role)
	addScopeFlag(cmd, &opts.Installation)
	return cmd
}

func runIAMRolesDelete(ctx context.Context, opts *iamRolesDeleteOptions) error {
	c, ns, id, err := iamRole(ctx, opts.API, opts.Installation, opts.Role)
	if err != nil {
		return err
	}
	if err := c.DeleteRole(ctx, ns, id); err != nil {
		return err
	}
	return printGone(opts.API, "role", id)
}

// iamRole returns a client, the scope and the ID of the role ref names.
func iamRole(ctx context.Context, api *apiOptions, installation bool, ref string) (*client.Client, string, string, error) {
	c, ns, err := iamScope(ctx, api, installation)
	if err != nil {
		return nil, "", "", err
	}
	id, err := resolveRole(ctx, c, ns, ref)
	if err != nil {
		return nil, "", "", err
	}
	return c, ns, id, nil
}
