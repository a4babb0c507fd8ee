package cli

// `occ iam restrictions …` and `occ iam bindings get`: at the scope of -n
// or --installation, like roles and bindings.

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
	"github.com/openclaw/occ/internal/client/gen"
)

// restrictionTarget is a restriction's target as KIND/ID, or "".
func restrictionTarget(r *client.Restriction) string {
	t, err := r.Target.Get()
	if err != nil {
		return ""
	}
	return string(t.Kind) + "/" + t.Id
}

// printRestriction writes one restriction.
func printRestriction(api *apiOptions, r *client.Restriction) error {
	return api.printObject(r, func() [][2]string {
		return [][2]string{{"id", r.Id}, {"principal", r.PrincipalId}, {"permission", string(r.Permission)},
			{"scope", scopeText(r.NamespaceId.GetOrEmpty())}, {"target", restrictionTarget(r)}, {"created by", r.CreatedBy}, {"created", r.CreatedAt}}
	})
}

// scopedVerb is an iam verb with --installation, run with a client and
// the scope's Namespace ID ("" at installation scope).
func scopedVerb(api *apiOptions, use, short, example string, fn func(ctx context.Context, c *client.Client, ns string) error, args ...*string) *cobra.Command {
	var installation bool
	cmd := verbCmd(api, use, short, func(ctx context.Context) error {
		c, ns, err := iamScope(ctx, api, installation)
		if err != nil {
			return err
		}
		return fn(ctx, c, ns)
	}, args...)
	cmd.Example = example
	addScopeFlag(cmd, &installation)
	return cmd
}

func iamRestrictionsCmd(api *apiOptions) *cobra.Command {
	var id, principal, permission, target string
	list := scopedVerb(api, "list", "List the restrictions of the Namespace (or the installation)",
		"  occ iam restrictions list\n  occ iam restrictions list --installation -o json",
		func(ctx context.Context, c *client.Client, ns string) error {
			items, err := c.ListAllRestrictions(ctx, ns)
			if err != nil {
				return err
			}
			return printList(api, items, []string{"ID", "PRINCIPAL", "PERMISSION", "TARGET", "CREATED"}, func(r *client.Restriction) []string {
				return []string{r.Id, r.PrincipalId, string(r.Permission), dash(restrictionTarget(r)), r.CreatedAt}
			})
		})
	get := scopedVerb(api, "get RESTRICTION", "Show a restriction (by ID)", "  occ iam restrictions get rst_…",
		func(ctx context.Context, c *client.Client, ns string) error {
			r, err := c.GetRestriction(ctx, ns, id)
			if err != nil {
				return err
			}
			return printRestriction(api, r)
		}, &id)
	create := scopedVerb(api, "create --principal PRINCIPAL --permission KIND:ACTION [--target KIND/NAME]",
		"Deny a permission to a principal, whatever its bindings grant (at the scope, or on one resource)",
		"  occ iam restrictions create --principal agent:bot --permission secret:operate\n"+
			"  occ iam restrictions create --principal prn_… --permission agent:deploy --target agent/bot",
		func(ctx context.Context, c *client.Client, ns string) error {
			p, err := resolvePrincipal(ctx, c, ns, principal)
			if err != nil {
				return err
			}
			body := client.RestrictionCreate{PrincipalId: p, Permission: gen.PermissionName(permission)}
			if target != "" {
				if body.Target, err = resolveTarget(ctx, c, ns, target); err != nil {
					return err
				}
			}
			r, err := c.CreateRestriction(ctx, ns, body)
			if err != nil {
				return err
			}
			return printRestriction(api, r)
		})
	create.Flags().StringVar(&principal, "principal", "", "a principal ID (prn_… or spn_…) or agent:AGENT")
	create.Flags().StringVar(&permission, "permission", "", "the permission denied, KIND:ACTION")
	create.Flags().StringVar(&target, "target", "", "limit it to one resource, KIND/ID (or KIND/NAME for namespace, secret, configuration, agent)")
	_ = create.MarkFlagRequired("principal")
	_ = create.MarkFlagRequired("permission")
	del := scopedVerb(api, "delete RESTRICTION", "Delete a restriction (by ID)", "  occ iam restrictions delete rst_…",
		func(ctx context.Context, c *client.Client, ns string) error {
			if err := c.DeleteRestriction(ctx, ns, id); err != nil {
				return err
			}
			return printGone(api, "restriction", id)
		}, &id)
	return groupCmd("restrictions", "Restrictions: a permission denied to a principal whatever its bindings grant", list, get, create, del)
}

func iamBindingsGetCmd(api *apiOptions) *cobra.Command {
	var id string
	return scopedVerb(api, "get BINDING", "Show a binding (by ID)", "  occ iam bindings get bnd_…\n  occ iam bindings get bnd_… --installation",
		func(ctx context.Context, c *client.Client, ns string) error {
			b, err := c.GetBinding(ctx, ns, id)
			if err != nil {
				return err
			}
			return printBinding(api, b)
		}, &id)
}
