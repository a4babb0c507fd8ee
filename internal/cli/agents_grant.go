package cli

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
)

// The role `occ agents grant-secrets` binds, and what it holds.
const (
	secretOperateRole = "agent-secret-operate"
	secretOperate     = "secret:operate"
)

// agentsGrantSecretsOptions are the inputs of `occ agents grant-secrets`.
type agentsGrantSecretsOptions struct {
	API *apiOptions
	// Agent is an Agent ID or name.
	Agent string
}

// grantResult is what `grant-secrets -o json` prints.
type grantResult struct {
	AgentID            string         `json:"agentId"`
	ServicePrincipalID string         `json:"servicePrincipalId"`
	Role               client.Role    `json:"role"`
	RoleCreated        bool           `json:"roleCreated"`
	Binding            client.Binding `json:"binding"`
	BindingCreated     bool           `json:"bindingCreated"`
}

func agentsGrantSecretsCmd(api *apiOptions) *cobra.Command {
	opts := &agentsGrantSecretsOptions{API: api}
	cmd := verbCmd(api, "grant-secrets AGENT", "Let an Agent's service principal use the Namespace's Secrets (secret:operate), as its deploy needs",
		func(ctx context.Context) error { return runAgentsGrantSecrets(ctx, opts) }, &opts.Agent)
	cmd.Long = `Let an Agent use the Secrets of its Namespace: its deploy reads the Secrets of
its harness auth and Configuration as the Agent's own service principal,
which needs secret:operate on them.

The command makes sure the Namespace has a role named ` + secretOperateRole + `
holding secret:operate (creating it, or reusing the one there), then binds
the Agent's service principal to it for the whole Namespace. Run again, it
finds the binding and changes nothing. For one Secret only, bind a role
yourself: occ iam bindings create --principal agent:AGENT --role ROLE
--target secret/SECRET.`
	return cmd
}

func runAgentsGrantSecrets(ctx context.Context, opts *agentsGrantSecretsOptions) error {
	c, ns, id, err := opts.API.target(ctx, opts.Agent, resolveAgent)
	if err != nil {
		return err
	}
	agent, err := c.GetAgent(ctx, ns, id)
	if err != nil {
		return err
	}
	res := grantResult{AgentID: agent.Id, ServicePrincipalID: agent.ServicePrincipalId}
	role, created, err := ensureSecretRole(ctx, c, ns)
	if err != nil {
		return err
	}
	res.Role, res.RoleCreated = *role, created
	b, err := findBinding(ctx, c, ns, agent.ServicePrincipalId, role.Id, nil)
	if err != nil {
		return err
	}
	if b == nil {
		if b, err = c.CreateBinding(ctx, ns, client.BindingCreate{PrincipalId: agent.ServicePrincipalId, RoleId: role.Id}); err != nil {
			return err
		}
		res.BindingCreated = true
	}
	res.Binding = *b
	if opts.API.structured() {
		return opts.API.printData(res)
	}
	out := opts.API.IO.Out
	if res.RoleCreated {
		fmt.Fprintf(out, "created role %s (%s) with %s\n", role.Name, role.Id, secretOperate)
	} else {
		fmt.Fprintf(out, "reusing role %s (%s)\n", role.Name, role.Id)
	}
	if res.BindingCreated {
		fmt.Fprintf(out, "bound agent %s (service principal %s) to role %s in namespace %s: binding %s\n",
			agent.Name, agent.ServicePrincipalId, role.Name, ns, b.Id)
	} else {
		fmt.Fprintf(out, "agent %s (service principal %s) already holds role %s in namespace %s (binding %s); nothing to do\n",
			agent.Name, agent.ServicePrincipalId, role.Name, ns, b.Id)
	}
	return nil
}

// ensureSecretRole returns the Namespace's role agent-secret-operate,
// creating it when there is none, and whether it did.
func ensureSecretRole(ctx context.Context, c *client.Client, ns string) (*client.Role, bool, error) {
	find := func() (*client.Role, error) {
		roles, err := c.ListAllRoles(ctx, ns)
		if err != nil {
			return nil, err
		}
		for i, r := range roles {
			if r.Name != secretOperateRole {
				continue
			}
			if !slices.Contains(r.Permissions, secretOperate) {
				return nil, fmt.Errorf("role %s (%s) exists without %s; delete it or grant a role yourself (occ iam bindings create)",
					r.Name, r.Id, secretOperate)
			}
			return &roles[i], nil
		}
		return nil, nil
	}
	r, err := find()
	if err != nil || r != nil {
		return r, false, err
	}
	r, err = c.CreateRole(ctx, ns, client.RoleCreate{Name: secretOperateRole, Permissions: []string{secretOperate}})
	if client.IsCode(err, client.CodeResourceConflict) {
		// Made at the same moment by someone else: use theirs.
		if found, ferr := find(); ferr != nil || found != nil {
			return found, false, ferr
		}
	}
	if err != nil {
		return nil, false, err
	}
	return r, true, nil
}
