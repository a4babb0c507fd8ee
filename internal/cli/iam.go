package cli

// `occ iam roles|bindings …`: the IAM of one scope, the Namespace of -n or
// the installation (--installation). This file holds what the verbs share:
// the scope, how a role, a principal and a target are named on the command
// line, and how roles and bindings print.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
	"github.com/openclaw/occ/internal/client/gen"
)

// iamCmd is `occ iam roles|bindings|restrictions`.
func iamCmd(api *apiOptions) *cobra.Command {
	return groupCmd("iam", "Access control: roles, bindings and restrictions of a Namespace (-n) or the installation (--installation)",
		groupCmd("roles", "Roles: named sets of permissions", iamRolesListCmd(api), iamRolesCreateCmd(api),
			iamRolesGetCmd(api), iamRolesDeleteCmd(api)),
		groupCmd("bindings", "Bindings: a role granted to a principal, at the scope or on one resource", iamBindingsListCmd(api),
			iamBindingsGetCmd(api), iamBindingsCreateCmd(api), iamBindingsDeleteCmd(api)),
		iamRestrictionsCmd(api))
}

// addScopeFlag adds --installation to an iam verb; it cannot be combined
// with an explicit --namespace.
func addScopeFlag(cmd *cobra.Command, installation *bool) {
	cmd.Flags().BoolVar(installation, "installation", false, "act at installation scope instead of in the Namespace")
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		if *installation && cmd.Flags().Changed("namespace") {
			return errors.New("--installation and --namespace are exclusive")
		}
		return nil
	}
}

// iamScope returns a client and the scope's Namespace ID: --namespace's,
// or "" at installation scope.
func iamScope(ctx context.Context, api *apiOptions, installation bool) (*client.Client, string, error) {
	if !installation {
		return api.namespaced(ctx)
	}
	c, err := api.client()
	return c, "", err
}

// resolveRole returns the ID of a role of the scope given by ID or name.
func resolveRole(ctx context.Context, c *client.Client, ns, ref string) (string, error) {
	return resolveByName(ctx, ref, "role_", "role",
		func(ctx context.Context) ([]client.Role, error) { return c.ListAllRoles(ctx, ns) },
		func(x client.Role) (string, string) { return x.Name, x.Id })
}

// resolveGrantableRole returns the ID of a role a binding of the scope may
// grant, given by ID or name. In a Namespace a name is looked up among its
// roles first, then among the installation's (built-in roles such as
// editor can be bound in a Namespace) when the caller may list those.
func resolveGrantableRole(ctx context.Context, c *client.Client, ns, ref string) (string, error) {
	id, err := resolveRole(ctx, c, ns, ref)
	if ns == "" || !client.IsNotFound(err) {
		return id, err
	}
	if id, ierr := resolveRole(ctx, c, "", ref); ierr == nil {
		return id, nil
	} else if !client.IsNotFound(ierr) && !client.IsCode(ierr, client.CodeForbidden) {
		return "", ierr
	}
	return "", err
}

// agentPrincipalPrefix names an Agent's service principal in --principal.
const agentPrincipalPrefix = "agent:"

// resolvePrincipal returns the principal ID ref names: a prn_ or spn_ ID
// as is, or agent:AGENT (an Agent ID or name in the Namespace ns), that
// Agent's service principal.
func resolvePrincipal(ctx context.Context, c *client.Client, ns, ref string) (string, error) {
	agent, ok := strings.CutPrefix(ref, agentPrincipalPrefix)
	switch {
	case ok && ns == "":
		return "", errors.New("an Agent's service principal is granted in its Namespace, not at installation scope")
	case ok:
		return agentPrincipal(ctx, c, ns, agent)
	case strings.HasPrefix(ref, "prn_"), strings.HasPrefix(ref, "spn_"):
		return ref, nil
	}
	return "", fmt.Errorf("--principal must be a principal ID (prn_… or spn_…) or agent:AGENT, not %q", ref)
}

// agentPrincipal returns the service principal of an Agent given by ID or
// name.
func agentPrincipal(ctx context.Context, c *client.Client, ns, ref string) (string, error) {
	id, err := resolveAgent(ctx, c, ns, ref)
	if err != nil {
		return "", err
	}
	a, err := c.GetAgent(ctx, ns, id)
	if err != nil {
		return "", err
	}
	return a.ServicePrincipalId, nil
}

// resolveTarget parses --target KIND/REF: REF is an ID, or a name for the
// kinds the CLI can look up (namespace, secret, configuration, agent).
func resolveTarget(ctx context.Context, c *client.Client, ns, ref string) (*client.Target, error) {
	kind, id, ok := strings.Cut(ref, "/")
	k := gen.TargetKind(kind)
	if !ok || id == "" || !k.Valid() {
		return nil, fmt.Errorf("--target must be KIND/ID with KIND one of namespace, configuration, preset, service_account, secret, agent, agent_revision, credential_source; not %q", ref)
	}
	if ns == "" {
		return nil, errors.New("--target needs a Namespace: installation bindings hold for the whole installation")
	}
	lookups := map[gen.TargetKind]resolver{
		gen.TargetKindSecret:        resolveSecret,
		gen.TargetKindConfiguration: resolveConfiguration,
		gen.TargetKindAgent:         resolveAgent,
		gen.TargetKindNamespace: func(ctx context.Context, c *client.Client, _, ref string) (string, error) {
			return resolveNamespace(ctx, c, ref)
		},
	}
	if resolve, ok := lookups[k]; ok {
		var err error
		if id, err = resolve(ctx, c, ns, id); err != nil {
			return nil, err
		}
	}
	return &client.Target{Kind: k, Id: id}, nil
}

// findBinding returns the scope's binding of role to principal on target
// (nil: the whole scope), or nil when there is none.
func findBinding(ctx context.Context, c *client.Client, ns, principal, role string, target *client.Target) (*client.Binding, error) {
	all, err := c.ListAllBindings(ctx, ns)
	if err != nil {
		return nil, err
	}
	for i, b := range all {
		t, terr := b.Target.Get()
		same := (target == nil && terr != nil) || (target != nil && terr == nil && t == *target)
		if b.PrincipalId == principal && b.RoleId == role && same {
			return &all[i], nil
		}
	}
	return nil, nil
}

// scopeText names a role's or binding's scope: a Namespace ID or
// "installation".
func scopeText(ns string) string {
	if ns == "" {
		return "installation"
	}
	return ns
}

// targetText is a binding's target as KIND/ID, or "" for the whole scope.
func targetText(b *client.Binding) string {
	t, err := b.Target.Get()
	if err != nil {
		return ""
	}
	return string(t.Kind) + "/" + t.Id
}

// permissionsText joins a role's permissions; a long list (a built-in
// role's) shows its first few and how many more there are.
func permissionsText(ps []string, all bool) string {
	const few = 4
	if all || len(ps) <= few {
		return strings.Join(ps, ",")
	}
	return fmt.Sprintf("%s,… (%d more)", strings.Join(ps[:few-1], ","), len(ps)-few+1)
}

// printRole writes one role.
func printRole(api *apiOptions, r *client.Role) error {
	return api.printObject(r, func() [][2]string {
		return [][2]string{{"id", r.Id}, {"name", r.Name}, {"scope", scopeText(r.NamespaceId.GetOrEmpty())},
			{"builtin", fmt.Sprint(r.Builtin)}, {"permissions", permissionsText(r.Permissions, true)}, {"created", r.CreatedAt}}
	})
}

// printBinding writes one binding.
func printBinding(api *apiOptions, b *client.Binding) error {
	return api.printObject(b, func() [][2]string {
		return [][2]string{{"id", b.Id}, {"principal", b.PrincipalId}, {"role", b.RoleId},
			{"scope", scopeText(b.NamespaceId.GetOrEmpty())}, {"target", targetText(b)}, {"created by", b.CreatedBy}, {"created", b.CreatedAt}}
	})
}
